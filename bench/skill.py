"""Skill command overhead: a pdf command through the built server vs running the same script directly.

- through MCP: `pdf text extract FILE --pages 1` over a kept-open stdio session to the built package;
- directly: `python skills/pdf/scripts/text.py extract FILE --pages 1` as a subprocess, same machine, same run.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio

from .runtime import per_call

ROOT = Path(__file__).resolve().parent.parent


SEED_PATH = 202 + 310  # the seed's hand-made pdf tool: definition + help to reach `pdf text extract` (brief)


def help_path() -> tuple[int, list[tuple[str, int]]]:
    """Tokens to reach `pdf text extract`: the tool definition, then root, group and command help."""
    from mcp_cli.cli import tokens
    from mcp_cli.engine.runtime import Runtime
    from mcp_cli.sources.loader import load

    tree = load(str(ROOT / "skills" / "pdf"))
    runtime = Runtime(tree)
    steps = [("tool definition", tokens.count(tokens.tool_json([tokens.one_tool(tree)])))]
    for argv in (["--help"], ["text", "--help"], ["text", "extract", "--help"]):
        steps.append((f"pdf {' '.join(argv)}", tokens.count(anyio.run(runtime.call, argv).text())))
    return sum(n for _, n in steps), steps


def run(quick: bool = False) -> list[dict]:
    sys.path.insert(0, str(ROOT / "examples"))
    from walkthrough import make_pdf

    calls = 10 if quick else 40
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "pdf-mcp"
        subprocess.run(
            [sys.executable, "-m", "mcp_cli", "build", str(ROOT / "skills" / "pdf"), "-o", str(out)],
            check=True,
            capture_output=True,
        )
        report = Path(tmp) / "report.pdf"
        make_pdf(report)
        argv = ["text", "extract", str(report), "--pages", "1"]
        direct = []
        script = ROOT / "skills" / "pdf" / "scripts" / "text.py"
        for _ in range(calls):
            start = time.perf_counter()
            subprocess.run(
                [sys.executable, str(script), *argv[1:]], check=True, capture_output=True, cwd=ROOT / "skills" / "pdf"
            )
            direct.append(time.perf_counter() - start)
        served = anyio.run(
            per_call, [sys.executable, str(out / "pdf_mcp" / "__main__.py")], "pdf", {"argv": argv}, calls
        )
    return [
        {
            "name": "pdf text extract, one page (median)",
            "ours": statistics.median(served),
            "baseline": statistics.median(direct),
            "baseline_name": "the script run directly",
            "unit": "s",
            "target": 1.2,
        }
    ]
