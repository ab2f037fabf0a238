"""Shared test helpers: paths, the anyio backend, and a real MCP client session to a served tree."""

from __future__ import annotations

import sys
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "examples" / "demo" / "demo.json"
FAULTS = ROOT / "tests" / "fixtures" / "faults" / "tree.json"
NODE_BIN = ROOT / "tests" / "node" / "node_modules" / ".bin"


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"


@asynccontextmanager
async def served(*args: str, cwd: Path | None = None):
    """A real MCP client session to `python -m mcp_cli <args>` over stdio."""
    params = StdioServerParameters(command=sys.executable, args=["-m", "mcp_cli", *args], cwd=str(cwd or ROOT))
    async with Client(params) as client:
        yield client


def text(result) -> str:
    """All text content of a CallToolResult, joined."""
    return "".join(c.text for c in result.content if c.type == "text")
