"""Drive a served tree through a real MCP client session over stdio, the way an agent would.

    python examples/walkthrough.py            # the bundled demo tree

It starts `python -m mcp_cli serve examples/demo/demo.json` as a subprocess, lists the one tool, walks the
help from the root to a command, runs commands of both handler kinds, and shows what a mistake looks like.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

HERE = Path(__file__).resolve().parent
STEPS = [
    ["--help"],
    ["text", "--help"],
    ["text", "upper", "--help"],
    ["text", "upper", "hello", "from", "mcp-cli", "--exclaim"],
    ["math", "mean", "3", "5", "10"],
    ["files", "list", str(HERE / "demo"), "--pattern", "*.py"],
    ["files", "head", str(HERE / "demo" / "scripts" / "head.py"), "-n", "1"],
    ["text", "uppr", "typo"],
]


async def main() -> None:
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "mcp_cli", "serve", str(HERE / "demo" / "demo.json")]
    )
    async with Client(server) as client:
        tool = (await client.list_tools()).tools[0]
        print(f"tools/list -> one tool: {tool.name!r}\n  {tool.description}\n")
        for argv in STEPS:
            result = await client.call_tool(tool.name, {"argv": argv})
            status = "error" if result.is_error else "ok"
            print(f"$ {tool.name} {' '.join(argv)}    [{status}]")
            print("".join(c.text for c in result.content if c.type == "text"))


if __name__ == "__main__":
    anyio.run(main)
