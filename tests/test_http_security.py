"""HTTP off loopback: the bearer token, the Host/Origin allow-list and the refusal to listen unprotected, checked
against real server processes (`mcp-cli serve` and a built package's launcher) with real HTTP and MCP clients."""

import ipaddress
import os
import subprocess
import sys
from contextlib import contextmanager

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from mcp_cli.testing import envelope

from .conftest import DEMO, ROOT, budget, free_port, text, wait_for_port

pytestmark = pytest.mark.anyio

TOKEN = "correct horse battery staple"
SERVE = [sys.executable, "-m", "mcp_cli", "serve", str(DEMO)]
LAUNCHER = [
    sys.executable,
    "-c",
    "import sys; from mcp_cli.surfaces.launcher import main; main(sys.argv[1], sys.argv[2:])",
]
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
MCP_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def exposed() -> tuple[str, str]:
    """(address to listen on, address to connect to): this machine's first non-loopback IPv4 address for both,
    else every address, reached through loopback."""
    try:
        found = subprocess.run(["hostname", "-I"], capture_output=True, text=True).stdout.split()
    except OSError:
        found = []
    for address in found:
        ip = ipaddress.ip_address(address)
        if ip.version == 4 and not ip.is_loopback:
            return address, address
    return "0.0.0.0", "127.0.0.1"


def environment(**values: str) -> dict[str, str]:
    """This environment without MCP_CLI_TOKEN, plus `values`."""
    env = {k: v for k, v in os.environ.items() if k != "MCP_CLI_TOKEN"}
    return {**env, **values}


@contextmanager
def server(command: list[str], bind: str, connect: str, *args: str, env: dict[str, str], flag: str = "--http"):
    """A server process listening on bind:PORT (`flag`: --http, or --openapi); yields (its URL at connect:PORT, /mcp
    for --http, and the process)."""
    port = free_port()
    proc = subprocess.Popen(
        [*command, flag, f"{bind}:{port}", *args], cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True
    )
    try:
        wait_for_port(port, proc, host=connect)
        yield f"http://{connect}:{port}" + "/mcp" * (flag == "--http"), proc
    finally:
        proc.terminate()
        proc.wait(timeout=budget(10))


@pytest.fixture(scope="module")
def guarded():
    """`mcp-cli serve` off loopback with a token, one extra Host and one extra Origin."""
    bind, connect = exposed()
    extra = ["--allow-host", "mcp.example.test", "--allow-origin", "https://app.example.test"]
    if bind == "0.0.0.0":
        extra += ["--allow-host", connect]
    with server(SERVE, bind, connect, *extra, env=environment(MCP_CLI_TOKEN=TOKEN)) as (url, proc):
        yield url, proc


def post(url: str, **headers: str) -> httpx2.Response:
    """An initialize request with these extra headers (`Authorization`, `Host`, `Origin`)."""
    return httpx2.post(url, json=INITIALIZE, headers={**MCP_HEADERS, **headers}, timeout=budget(30))


def bearer(token: str = TOKEN) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_requests_without_the_right_token_get_401(guarded):
    url, proc = guarded
    for headers, reason in [
        ({}, "Authorization: Bearer <token>"),
        (bearer("wrong"), "wrong bearer token"),
        (bearer(TOKEN + "x"), "wrong bearer token"),
        ({"Authorization": f"Basic {TOKEN}"}, "Authorization: Bearer <token>"),
    ]:
        response = post(url, **headers)
        assert response.status_code == 401
        assert response.headers["www-authenticate"].startswith("Bearer ")
        assert response.json()["error"] == "invalid_token"
        assert reason in response.json()["error_description"]
    assert post(url, **bearer()).status_code == 200
    assert proc.poll() is None


async def test_the_right_token_reaches_the_tool(guarded):
    url, _ = guarded
    async with httpx2.AsyncClient(headers=bearer(), timeout=budget(30)) as http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            assert [t.name for t in (await client.list_tools()).tools] == ["demo"]
            added = await client.call_tool("demo", {"command": "math add 20 22"})
            assert envelope(added)["data"] == 42


def test_only_allowed_hosts_are_served(guarded):
    url, _ = guarded
    assert post(url, **bearer(), Host="evil.example.test").status_code == 421
    assert post(url, **bearer(), Host="mcp.example.test").status_code == 200
    assert post(url, **bearer(), Host="mcp.example.test:8443").status_code == 200


def test_only_allowed_origins_are_served(guarded):
    url, _ = guarded
    assert post(url, **bearer(), Origin="https://evil.example.test").status_code == 403
    assert post(url, **bearer(), Origin="https://app.example.test").status_code == 200
    assert post(url, **bearer(), Origin="https://mcp.example.test").status_code == 200


@pytest.mark.parametrize("command", [SERVE, [*LAUNCHER, str(DEMO)]], ids=["serve", "launcher"])
@pytest.mark.parametrize(
    "args, env, says",
    [
        (["--http", "192.0.2.1:8000"], {}, ["without a token", "set MCP_CLI_TOKEN", "--no-auth"]),
        (["--http", "0.0.0.0:8000"], {"MCP_CLI_TOKEN": TOKEN}, ["every address", "--allow-host"]),
        (["--http", "127.0.0.1:8000", "--token-env", "NOT_SET_HERE"], {}, ["NOT_SET_HERE is not set"]),
        (["--http", "192.0.2.1:8000", "--no-auth"], {"MCP_CLI_TOKEN": TOKEN}, ["--no-auth, but MCP_CLI_TOKEN"]),
        (["--allow-host", "example.test"], {}, ["go with --http"]),
    ],
    ids=["no-token", "every-address", "unset-token-env", "no-auth-with-token", "stdio"],
)
def test_refuses_to_listen_unprotected(command, args, env, says):
    done = subprocess.run([*command, *args], cwd=ROOT, env=environment(**env), capture_output=True, text=True)
    assert done.returncode == 2 and done.stdout == ""
    line = done.stderr.strip()
    assert "\n" not in line and "Traceback" not in line
    assert all(s in line for s in says), line


async def test_no_auth_serves_off_loopback_without_a_token():
    bind, connect = exposed()
    extra = ["--allow-host", connect] if bind == "0.0.0.0" else []
    with server(SERVE, bind, connect, "--no-auth", *extra, env=environment()) as (url, proc):
        async with Client(url) as client:
            root = await client.call_tool("demo", {"argv": ["--help"]})
            assert text(root).startswith("demo - ")
        proc.terminate()
        assert "with no token (--no-auth)" in proc.communicate(timeout=budget(10))[1]


def test_the_launcher_takes_the_options_too():
    """A built package's launcher, on loopback, with the token in a variable of its choosing."""
    env = environment(DEMO_TOKEN=TOKEN)
    args = ["--token-env", "DEMO_TOKEN", "--allow-host", "mcp.example.test"]
    with server([*LAUNCHER, str(DEMO)], "127.0.0.1", "127.0.0.1", *args, env=env) as (url, proc):
        assert post(url).status_code == 401
        assert post(url, **bearer()).status_code == 200
        assert post(url, **bearer(), Host="mcp.example.test").status_code == 200
        assert post(url, **bearer(), Host="evil.example.test").status_code == 421
