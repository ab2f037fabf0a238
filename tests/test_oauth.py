"""OAuth to remote upstreams, end to end: a protected MCP server that is its own authorization server (the SDK's
auth routes, tests/fixtures/upstreams/oauth_server.py) in a subprocess, and `mcp-cli` processes logging in,
calling, refreshing (two at once), serving and logging out, also through `mcp-cli run`'s keep-alive daemon. Tokens live
in a folder of the test's own."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlparse

import httpx2
import pytest

from .conftest import ROOT, budget, free_port, served, stop_daemons, text, wait_for_port

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


def login(
    world: dict, paste: bool = True, iss: str | None = None, open_stdin: bool = False
) -> subprocess.CompletedProcess[str]:
    """`mcp-cli login team.json prot --no-browser`: follow the printed URL as a browser would (the server approves at
    once), then paste the redirect URL back (or let the browser reach the local listener, with stdin left open as a
    terminal's is if `open_stdin`), `iss` replaced if given."""
    proc, said = start_login(world)
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
        if open_stdin:
            proc.wait(timeout=budget(60))  # returns though nothing was pasted, and stdin never ended
        out, err = proc.communicate(timeout=budget(60))
    world["outputs"] += [*said, out, err]
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, "".join(said) + err)


def start_login(world: dict) -> tuple[subprocess.Popen[str], list[str]]:
    """`mcp-cli login team.json prot --no-browser`, started, and what it printed up to its URL."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcp_cli", "login", "team.json", "prot", "--no-browser"],
        env={**os.environ, **world["env"]},
        cwd=world["dir"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    said: list[str] = []
    while not (said and said[-1].startswith("http")):
        line = proc.stderr.readline()
        assert line, f"login printed no URL: {''.join(said)}"
        said.append(line)
    return proc, said


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
    # refreshed, not logged in again; the refreshed token lives 1 s too, so on a busy machine the call may outlive it
    # and refresh once more
    counts = stats(world)
    assert counts["refreshes"] >= before + 1 and counts["authorizations"] == 2
    before = counts["refreshes"]

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
    assert counts["refreshes"] == before + 1 and counts["replays"] == 0 and counts["authorizations"] == 2

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


async def test_login_returns_when_the_listener_got_the_redirect_and_stdin_stays_open(world: dict) -> None:
    done = login(world, paste=False, open_stdin=True)
    assert done.returncode == 0 and "prot: logged in to" in done.stdout, done.stderr


async def test_ctrl_c_ends_a_login_in_one_line_with_status_130(world: dict) -> None:
    proc, said = start_login(world)
    assert proc.stderr.readline().startswith("Then paste the URL")
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=budget(60))  # stdin still open, as a terminal's is
    out, err = proc.communicate(timeout=budget(30))
    assert (proc.returncode, out, err) == (130, "", "mcp-cli: login: interrupted\n")


@pytest.fixture
def daemon(world: dict):
    """The world with `mcp-cli run` through the keep-alive daemon, in a runtime folder of the test's own."""
    folder = tempfile.mkdtemp(prefix="mcp-cli-rt-")  # short: a socket's path holds at most 107 bytes
    world["env"].update({"MCP_CLI_NO_DAEMON": "0", "MCP_CLI_RUNTIME_DIR": folder})
    yield world
    stop_daemons({**os.environ, **world["env"]})
    shutil.rmtree(folder, ignore_errors=True)


def daemons(world: dict) -> list[tuple[int, list[int]]]:
    """The running daemons: (pid, the pids of its processes)."""
    found: list[tuple[int, list[int]]] = []
    for line in mcp(world, "daemon", "status").stdout.splitlines():
        if m := re.search(r"\(pid (\d+), in ", line):
            found.append((int(m[1]), []))
        elif m := re.match(r"    (\d+)  ", line):
            found[-1][1].append(int(m[1]))
    return found


# (the daemon names the config by its full path: the daemon is keyed by it)
HINT = re.compile(r"needs an OAuth login: run `mcp-cli login \S*team\.json prot`")
NOW = ["time", "get-current-time", "--timezone", "UTC"]


async def test_a_running_daemon_takes_a_login_and_a_logout_at_the_next_call(daemon: dict) -> None:
    world = daemon
    assert mcp(world, "run", "team.json", "--", *NOW).returncode == 0  # the time server, which keeps running
    before = mcp(world, "run", "team.json", "--", "prot", "whoami")
    assert before.returncode != 0 and HINT.search(before.stderr), before.stderr
    ((pid, kept),) = daemons(world)
    assert len(kept) == 1

    assert login(world).returncode == 0
    after = mcp(world, "run", "team.json", "--", "prot", "whoami")
    assert after.returncode == 0 and "hello from the protected server" in after.stdout, after.stderr
    assert mcp(world, "run", "team.json", "--", *NOW).returncode == 0

    assert mcp(world, "logout", "team.json", "prot").returncode == 0
    out = mcp(world, "run", "team.json", "--", "prot", "whoami")
    assert out.returncode != 0 and HINT.search(out.stderr) and "Traceback" not in out.stderr
    assert mcp(world, "run", "team.json", "--", *NOW).returncode == 0
    ((same, still),) = daemons(world)
    assert same == pid and set(kept) <= set(still)  # one daemon throughout, and its time server's session kept


async def test_a_revoked_grant_is_answered_with_the_login_hint(daemon: dict) -> None:
    world = daemon
    assert login(world).returncode == 0
    first = mcp(world, "run", "team.json", "--", "prot", "whoami")
    assert first.returncode == 0, first.stderr
    httpx2.post(world["base"] + "/revoke", timeout=budget(30)).raise_for_status()
    revoked = mcp(world, "run", "team.json", "--", "prot", "whoami")
    assert revoked.returncode != 0 and "needs an OAuth login" in revoked.stderr, revoked.stderr
    assert "stopped during the call" not in revoked.stderr and "Traceback" not in revoked.stderr
    assert login(world).returncode == 0  # logged in again: the same daemon's next call works
    again = mcp(world, "run", "team.json", "--", "prot", "whoami")
    assert again.returncode == 0 and "hello from the protected server" in again.stdout, again.stderr
    assert len(daemons(world)) == 1
