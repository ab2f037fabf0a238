"""The same tool over streamable HTTP: a real server process on loopback and a real MCP client."""

import subprocess
import sys

import pytest
from mcp import Client

from mcp_cli.testing import envelope

from .conftest import DEMO, ROOT, budget, free_port, text, wait_for_port

pytestmark = pytest.mark.anyio


@pytest.fixture
def http_server():
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcp_cli", "serve", str(DEMO), "--http", f"127.0.0.1:{port}"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    wait_for_port(port, proc)
    yield f"http://127.0.0.1:{port}/mcp", proc
    proc.terminate()
    proc.wait(timeout=budget(10))


async def test_streamable_http_serves_the_one_tool(http_server):
    url, proc = http_server
    async with Client(url) as client:
        tools = (await client.list_tools()).tools
        assert [t.name for t in tools] == ["demo"]
        root = await client.call_tool("demo", {"argv": ["--help"]})
        assert text(root).startswith("demo - ")
        added = await client.call_tool("demo", {"command": "math add 20 22"})
        assert envelope(added)["data"] == 42
        bad = await client.call_tool("demo", {"argv": ["math", "ad"]})
        assert bad.is_error and "Did you mean `add`?" in text(bad)
        again = await client.call_tool("demo", {"argv": ["text", "upper", "still", "here"]})
        assert text(again).strip() == "STILL HERE"
    proc.terminate()
    out, _ = proc.communicate(timeout=budget(10))
    assert out == b""  # logs go to stderr only
