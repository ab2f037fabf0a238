"""Shared test helpers: paths, the anyio backend, and a real MCP client session to a served tree."""

from __future__ import annotations

import os
import socket
import sys
import time
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
async def served(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None, command: str = "", **client_options
):
    """A real MCP client session over stdio to `python -m mcp_cli <args>` (or to `command <args>`);
    `client_options` go to `mcp.Client` (e.g. `list_roots_callback`)."""
    argv = [command, *args] if command else [sys.executable, "-m", "mcp_cli", *args]
    full_env = {**os.environ, **env} if env else None
    params = StdioServerParameters(command=argv[0], args=argv[1:], cwd=str(cwd or ROOT), env=full_env)
    async with Client(params, **client_options) as client:
        yield client


def running(marker: str) -> list[str]:
    """Command lines of live processes that mention `marker` (zombies do not count)."""
    import subprocess

    out = subprocess.run(["ps", "-ww", "-eo", "stat=,args="], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if marker in line and not line.lstrip().startswith("Z")]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, proc=None, seconds: float = 30) -> None:
    """Until something listens on 127.0.0.1:port (failing early if `proc` died)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            assert proc is None or proc.poll() is None, "the server process exited"
            time.sleep(0.1)
    raise TimeoutError(f"nothing listens on port {port}")


def text(result) -> str:
    """All text content of a CallToolResult, joined."""
    return "".join(c.text for c in result.content if c.type == "text")
