"""The main job end to end: build the bundled PDF skill into a server package and drive it like an agent would.

    python examples/walkthrough.py

It runs `mcp-cli build skills/pdf`, starts the built server over stdio, connects a real MCP client, lists the
one tool, walks the help from the root to `pdf text extract`, then extracts text and a table from a PDF it
makes with reportlab, and shows what a mistake looks like.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

ROOT = Path(__file__).resolve().parent.parent


def make_pdf(path: Path) -> None:
    """A two-page report: a paragraph on page 1, a table on page 2."""
    from reportlab.lib import colors
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.platypus import PageBreak, Paragraph, SimpleDocTemplate, Table, TableStyle

    styles = getSampleStyleSheet()
    table = Table([["Region", "Q1", "Q2"], ["North", "120", "135"], ["South", "98", "110"]])
    table.setStyle(TableStyle([("GRID", (0, 0), (-1, -1), 0.5, colors.black)]))
    story = [
        Paragraph("Quarterly report", styles["Title"]),
        Paragraph("Sales grew in both regions. The details are in the table on page two.", styles["Normal"]),
        PageBreak(),
        Paragraph("Sales by region", styles["Heading2"]),
        table,
    ]
    SimpleDocTemplate(str(path), pagesize=A4).build(story)


async def drive(launcher: Path, report: Path) -> None:
    server = StdioServerParameters(command=sys.executable, args=[str(launcher)])
    async with Client(server) as client:
        tool = (await client.list_tools()).tools[0]
        print(f"tools/list -> one tool, {tool.name!r}:\n  {tool.description}\n")
        steps = [
            ["--help"],
            ["text", "--help"],
            ["text", "extract", "--help"],
            ["text", "extract", str(report), "--pages", "1"],
            ["tables", "extract", str(report), "--format", "markdown"],
            ["text", "extrct", str(report)],
        ]
        for argv in steps:
            result = await client.call_tool(tool.name, {"argv": argv})
            status = "error" if result.is_error else "ok"
            print(f"$ {tool.name} {' '.join(argv)}    [{status}]")
            print("".join(c.text for c in result.content if c.type == "text"))


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "pdf-mcp"
        build = [sys.executable, "-m", "mcp_cli", "build", str(ROOT / "skills" / "pdf"), "-o", str(out)]
        print("$ mcp-cli build skills/pdf\n" + subprocess.run(build, check=True, capture_output=True, text=True).stdout)
        report = Path(tmp) / "report.pdf"
        make_pdf(report)
        anyio.run(drive, out / "pdf_mcp" / "__main__.py", report)


if __name__ == "__main__":
    main()
