"""OAuth to remote upstreams, end to end: a protected MCP server that is its own authorization server (the SDK's
auth routes, tests/fixtures/upstreams/oauth_server.py) in a subprocess, and `mcp-cli` processes logging in,
calling, refreshing (two at once), serving and logging out. Tokens live in a folder of the test's own."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlparse

import httpx2
import pytest

from .conftest import ROOT, budget, free_port, served, text, wait_for_port

SERVER = ROOT / "tests" / "fixtures" / "upstreams" / "oauth_server.py"
pytestmark = pytest.mark.anyio


@pytest.fixture
def world(tmp_path: Path):
    """The protected server (tokens live 3600 s until changed), a config with it and a stdio server beside it, and
    an environment with the test's own token and cache folders; `outputs` collects everything mcp-cli printed."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(SERVER), str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        wait_for_port(port, proc)
        config = tmp_path / "team.json"
        time_server = {"command": sys.executable, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]}
        servers = {"prot": {"type": "http", "url": f"http://127.0.0.1:{port}/mcp"}, "time": time_server}
        config.write_text(json.dumps({"mcpServers": servers}))
        env = {"MCP_CLI_OAUTH_DIR": str(tmp_path / "tokens"), "MCP_CLI_CACHE_DIR": str(tmp_path / "cache")}
        yield {"base": f"http://127.0.0.1:{port}", "config": config, "dir": tmp_path, "env": env, "outputs": []}
    finally:
        proc.terminate()
        proc.wait(timeout=budget(30))


def mcp(world: dict, *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "mcp_cli", *args],
        env={**os.environ, **world["env"]},
        cwd=world["dir"],
        capture_output=True,
        text=True,
        timeout=budget(60),
    )
    world["outputs"] += [done.stdout, done.stderr]
    return done


def login(world: dict, paste: bool = True, iss: str | None = None) -> subprocess.CompletedProcess[str]:
    """`mcp-cli login team.json prot --no-browser`: follow the printed URL as a browser would (the server approves at
    once), then paste the redirect URL back (or let the browser reach the local listener), `iss` replaced if given."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcp_cli", "login", "team.json", "prot", "--no-browser"],
        env={**os.environ, **world["env"]},
        cwd=world["dir"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    said = []
    while not (said and said[-1].startswith("http")):
        line = proc.stderr.readline()
        assert line, f"login printed no URL: {''.join(said)}"
        said.append(line)
    answer = httpx2.get(said[-1].strip(), follow_redirects=False, timeout=budget(30))
    assert answer.status_code == 302, answer.text
    redirect = answer.headers["location"]
    if iss is not None:
        parts = urlparse(redirect)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()} | {"iss": iss}
        redirect = parts._replace(query=urlencode(query)).geturl()
    if paste:
        out, err = proc.communicate(redirect + "\n", timeout=budget(60))
    else:
        page = httpx2.get(redirect, timeout=budget(30))
        assert page.status_code == 200 and "login received" in page.text
        out, err = proc.communicate(timeout=budget(60))
    world["outputs"] += [*said, out, err]
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, "".join(said) + err)


def stats(world: dict) -> dict:
    return httpx2.get(world["base"] + "/stats", timeout=budget(30)).json()


def set_ttl(world: dict, seconds: int) -> None:
    httpx2.post(f"{world['base']}/ttl?seconds={seconds}", timeout=budget(30)).raise_for_status()


def expire() -> None:
    time.sleep(2.1)  # tokens issued with a 1 s lifetime (whole seconds on the server) have expired


def token_file(world: dict) -> Path:
    files = list((world["dir"] / "tokens").glob("*.json"))
    assert len(files) == 1, files
    return files[0]


async def test_login_call_refresh_concurrent_refresh_logout(world: dict) -> None:
    hint = "needs an OAuth login: run `mcp-cli login team.json prot`"
    before = mcp(world, "inspect", "team.json")
    assert before.returncode == 0, before.stderr
    assert any(line.startswith("team prot ") and f"Unavailable: {hint}" in line for line in before.stdout.splitlines())
    assert "team time get-current-time" in before.stdout  # the rest of the tree is there

    first = login(world)
    assert first.returncode == 0, first.stderr
    assert "prot: logged in to" in first.stdout and f"issuer {world['base']}" in first.stdout
    assert stat.S_IMODE(token_file(world).stat().st_mode) == 0o600
    assert stat.S_IMODE((world["dir"] / "tokens").stat().st_mode) == 0o700

    call = mcp(world, "run", "team.json", "--", "prot", "whoami")
    assert call.returncode == 0 and "hello from the protected server" in call.stdout, call.stderr

    async with served("serve", "team.json", cwd=world["dir"], env=world["env"]) as client:
        result = await client.call_tool("team", {"argv": ["prot", "whoami"]})
        assert not result.is_error and "hello from the protected server" in text(result)

    # expiry and refresh: a new login (through the local listener) gets 1-second tokens
    set_ttl(world, 1)
    again = login(world, paste=False)
    assert again.returncode == 0, again.stderr
    expire()
    before = stats(world)["refreshes"]  # (0, unless the login itself outlived its first token on a busy machine)
    refreshed = mcp(world, "run", "team.json", "--", "prot", "whoami")
    assert refreshed.returncode == 0 and "hello from the protected server" in refreshed.stdout, refreshed.stderr
    assert stats(world)["refreshes"] == before + 1

    # two processes find the token expired at once: one refreshes, the other uses its token
    set_ttl(world, 3600)
    expire()
    argv = [sys.executable, "-m", "mcp_cli", "run", "team.json", "--", "prot", "whoami"]
    env = {**os.environ, **world["env"]}
    both = [
        subprocess.Popen(argv, env=env, cwd=world["dir"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    for proc in both:
        out, err = proc.communicate(timeout=budget(60))
        world["outputs"] += [out, err]
        assert proc.returncode == 0 and "hello from the protected server" in out, err
    counts = stats(world)
    assert counts["refreshes"] == before + 2 and counts["replays"] == 0 and counts["authorizations"] == 2

    # no token anywhere but the token file: not in the cache, a wrapped package, a tree, or anything printed
    wrapped = mcp(world, "wrap", "team.json", "-o", "pkg")
    assert wrapped.returncode == 0, wrapped.stderr
    tree = mcp(world, "inspect", "team.json")
    places = [p for p in (world["dir"] / "cache").rglob("*") if p.is_file()]
    places += [p for p in (world["dir"] / "pkg").rglob("*") if p.is_file()]
    assert places
    written = [p.read_bytes().decode("utf-8", "replace") for p in places] + world["outputs"] + [tree.stdout]
    for token in counts["issued"]:
        assert not any(token in w for w in written), token

    out = mcp(world, "logout", "team.json", "prot")
    assert out.returncode == 0 and "prot: logged out of" in out.stdout, out.stderr
    assert not list((world["dir"] / "tokens").glob("*.json"))
    after = mcp(world, "inspect", "team.json")
    assert hint in after.stdout and "team time get-current-time" in after.stdout
    failed = mcp(world, "run", "team.json", "--", "prot", "whoami")
    assert failed.returncode != 0 and hint in failed.stderr and "Traceback" not in failed.stderr
    assert "Open this URL" not in failed.stderr  # a run never starts a login
    async with served("serve", "team.json", cwd=world["dir"], env=world["env"]) as client:
        result = await client.call_tool("team", {"argv": ["prot"]})
        assert hint in text(result)
        listed = await client.call_tool("team", {"argv": ["time", "--help"]})
        assert not listed.is_error
    assert stats(world)["authorizations"] == 2  # nothing after the logout logged in


async def test_token_refused_before_its_expiry_is_refreshed_not_a_login(world: dict) -> None:
    """The server forgets its access tokens (a restart) while a run starts and while a server is serving: each
    refreshes once and goes on, no login asked for."""
    assert login(world).returncode == 0
    httpx2.post(world["base"] + "/forget-access", timeout=budget(30)).raise_for_status()
    call = mcp(world, "run", "team.json", "--", "prot", "whoami")
    assert call.returncode == 0 and "hello from the protected server" in call.stdout, call.stderr
    assert stats(world)["refreshes"] == 1
    async with served("serve", "team.json", cwd=world["dir"], env=world["env"]) as client:
        first = await client.call_tool("team", {"argv": ["prot", "whoami"]})
        httpx2.post(world["base"] + "/forget-access", timeout=budget(30)).raise_for_status()
        second = await client.call_tool("team", {"argv": ["prot", "whoami"]})
        assert not first.is_error and not second.is_error, text(second)
        assert "hello from the protected server" in text(second)
    counts = stats(world)
    assert counts["refreshes"] == 2 and counts["authorizations"] == 1 and counts["replays"] == 0


async def test_a_client_id_from_the_config_is_used_not_registered(world: dict) -> None:
    assert login(world).returncode == 0
    client = json.loads(token_file(world).read_text())["client"]  # one the server knows, and its redirect URI
    client_id, port = client["client_id"], urlparse(client["redirect_uris"][0]).port
    assert mcp(world, "logout", "team.json", "prot").returncode == 0
    config = json.loads(world["config"].read_text())
    config["mcpServers"]["prot"]["oauth"] = {"clientId": client_id, "callbackPort": port}
    world["config"].write_text(json.dumps(config))
    again = login(world)
    assert again.returncode == 0, again.stderr
    assert "client" not in json.loads(token_file(world).read_text())
    assert client_id in again.stderr  # the authorization URL names it
    call = mcp(world, "run", "team.json", "--", "prot", "whoami")
    assert call.returncode == 0, call.stderr
    assert stats(world)["registrations"] == 1 and stats(world)["authorizations"] == 2


async def test_redirect_from_another_issuer_is_refused(world: dict) -> None:
    """RFC 9207: a redirect whose `iss` is not the authorization server's is refused, in one line."""
    refused = login(world, iss="http://evil.example")
    assert refused.returncode == 1 and "iss mismatch" in refused.stderr and "Traceback" not in refused.stderr
    assert json.loads(token_file(world).read_text()).get("tokens") is None  # only the client it registered
    assert stats(world)["authorizations"] == 0


async def test_login_of_a_server_without_oauth_is_a_clear_error(world: dict) -> None:
    out = mcp(world, "login", "team.json", "time")
    assert out.returncode == 2 and "not a streamable-HTTP server" in out.stderr
