"""Every failure on every surface carries its envelope with its kind: the one tool over stdio and streamable HTTP (in
`_meta`), the meta-tools' `call_tool` (structuredContent), OpenAPI's /run (the body), and `mcp-cli run` (its exit
status, the kind's). Real server processes over the faults tree, real clients."""

import os
import subprocess
import sys
from contextlib import contextmanager

import httpx2
import pytest
from mcp import Client

from mcp_cli.errors import KINDS, exit_code
from mcp_cli.testing import envelope, served, text

from . import forked
from .conftest import FAULTS, ROOT, budget, free_port, wait_for_port

pytestmark = pytest.mark.anyio

# The tool's arguments, and the kind of failure they end in: one of each a call of this tree can end in
FAILURES = [
    ({"argv": ["nope"]}, "not_found"),
    ({"argv": ["py", "typed", "--count", "many"]}, "usage"),
    ({"argv": ["py", "boom"]}, "handler"),
    ({"argv": ["py", "missing"]}, "handler"),
    ({"argv": ["py", "hang"]}, "timeout"),
    ({"argv": ["sh", "fail"]}, "exit"),
    ({"argv": ["sh", "absent"]}, "handler"),
    ({"argv": ["x"], "command": "y"}, "bad_request"),
    ({}, "bad_request"),
]
# The same through the meta-tools (`call_tool`'s name and arguments), and the meta-tools' own failures
META_FAILURES = [
    ("call_tool", {"name": "nope", "arguments": {}}, "not_found"),
    ("call_tool", {"name": "py typed", "arguments": {"count": "many"}}, "bad_request"),
    ("call_tool", {"name": "py boom", "arguments": {}}, "handler"),
    ("call_tool", {"name": "py hang", "arguments": {}}, "timeout"),
    ("call_tool", {"name": "sh fail", "arguments": {}}, "exit"),
    ("call_tool", {"name": "sh absent", "arguments": {}}, "handler"),
    ("call_tool", {}, "bad_request"),
    ("describe_tools", {"names": ["py bom"]}, "not_found"),
    ("no_such_tool", {}, "not_found"),
]


def failed(answer: dict, kind: str) -> None:
    """`answer` is a failure's envelope, of `kind`: not empty, `ok` false, its kind one of the documented ones."""
    assert answer and answer["ok"] is False and answer["command"], answer
    assert answer["error"] == kind and kind in KINDS, answer


async def one_tool(client: Client) -> None:
    """Each failure of the one tool, and a call to a tool it does not have."""
    for arguments, kind in FAILURES:
        result = await client.call_tool("faults", arguments)
        assert result.is_error and text(result).startswith("Error: "), arguments
        failed(envelope(result), kind)
    unknown = await client.call_tool("fault", {"argv": ["--help"]})
    assert unknown.is_error and "no tool named 'fault'" in text(unknown)
    failed(envelope(unknown), "not_found")


async def test_the_one_tool_over_stdio():
    async with served("serve", str(FAULTS)) as client:
        await one_tool(client)


async def test_a_retry_naming_a_call_the_server_does_not_have():
    async def elicit(context, params):  # a 2026-era client that can be asked: its calls may be parked between retries
        raise AssertionError("not asked")

    async with served("serve", str(FAULTS), elicitation_callback=elicit) as client:
        late = await client.call_tool("faults", {"argv": ["--help"]}, request_state="from-another-process")
        assert late.is_error and "came too late or to another server process" in text(late)
        failed(envelope(late), "bad_request")


@contextmanager
def http_server():
    """`mcp-cli serve FAULTS --http` on a free loopback port (its OpenAPI surface beside /mcp): the base URL."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcp_cli", "serve", str(FAULTS), "--http", f"127.0.0.1:{port}"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, proc)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=budget(10))


async def test_the_one_tool_over_http_and_openapi_beside_it():
    with http_server() as base:
        async with Client(f"{base}/mcp") as client:
            await one_tool(client)
        async with httpx2.AsyncClient(timeout=budget(60)) as http:
            for arguments, kind in FAILURES:
                response = await http.post(f"{base}/run", json=arguments)
                assert response.status_code == (400 if kind == "bad_request" else 200), response.text
                failed(response.json(), kind)
            unreadable = await http.post(f"{base}/run", content=b"{not json", headers={"Content-Type": "text/plain"})
            assert unreadable.status_code == 400
            failed(unreadable.json(), "bad_request")


async def test_the_meta_tools():
    async with served("serve", str(FAULTS), "--surface", "meta") as client:
        for tool, arguments, kind in META_FAILURES:
            result = await client.call_tool(tool, arguments)
            assert result.is_error and result.structured_content is not None, (tool, arguments)
            failed(result.structured_content, kind)


def test_mcp_cli_run():
    env = {**os.environ, "MCP_CLI_NO_DAEMON": "1"}
    for arguments, kind in FAILURES:
        if "argv" not in arguments or "command" in arguments:
            continue  # not a call a shell can make: its words are argv
        proc = forked.mcp_cli("run", str(FAULTS), "--", *arguments["argv"], env=env, cwd=ROOT, timeout=budget(60))
        assert proc.returncode == exit_code(kind) != 0 and proc.stderr.strip(), (arguments, proc.stderr)
        assert "Traceback" not in proc.stderr
