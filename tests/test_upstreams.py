"""The one owner of upstream sessions. One start per upstream server per cold call: the session discovery opens to
list a server's tools (no cached listing) is the one the call goes through, whether the call runs in-process or in
`mcp-cli run`'s daemon (a real stdio server, `fixtures/upstreams/listed.py`, appends a line to a file at each start).
A server entry is typed once, and a broken one (a hand-edited tree) is told in one line naming the server and the key.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from mcp_cli.handlers.server_config import BadConfig, Http, InProcess, Stdio, parse

from .conftest import ROOT, budget, served, stop_daemons, text
from .listed import config, entry, starts


@pytest.fixture
def daemon_env():
    """The daemon on, in a runtime folder of this test's own; every daemon stopped after it."""
    folder = tempfile.mkdtemp(prefix="mcp-cli-rt-")
    env = {k: v for k, v in os.environ.items() if k != "MCP_CLI_NO_DAEMON"} | {"MCP_CLI_RUNTIME_DIR": folder}
    yield env
    stop_daemons(env)
    shutil.rmtree(folder, ignore_errors=True)


def run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "mcp_cli", "run", *args],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=budget(120),
    )


def two_servers(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A config of two counted servers (the call names one: the other is listed, never called), and their logs."""
    gh, other = tmp_path / "gh.log", tmp_path / "other.log"
    team = config(
        tmp_path / "team.json",
        {
            "gh": entry("list_issues", env={"LISTED_STARTS": str(gh)}),
            "other": entry("ping", env={"LISTED_STARTS": str(other)}),
        },
    )
    return team, gh, other


@pytest.mark.parametrize("where", ["in-process", "daemon"])
def test_a_cold_call_starts_its_upstream_once(tmp_path, daemon_env, where):
    team, gh, other = two_servers(tmp_path)
    env = {**daemon_env, "MCP_CLI_CACHE_DIR": str(tmp_path / "cache")}
    if where == "in-process":
        env["MCP_CLI_NO_DAEMON"] = "1"
    called = run(env, str(team), "--", "gh", "list-issues", "--repo", "x")
    assert called.returncode == 0 and '"tool": "list_issues"' in called.stdout, called.stderr
    assert list((tmp_path / "cache").glob("tools-*.json"))  # listed (and cached) by this very call
    assert starts(gh) == 1 and starts(other) == 1  # listed, then called through the same session
    again = run(env, str(team), "--", "gh", "list-issues")
    assert again.returncode == 0, again.stderr
    # in-process, the next call lists from the cache and starts the server for the call; the daemon kept it
    assert starts(gh) == (2 if where == "in-process" else 1) and starts(other) == 1


@pytest.mark.anyio
async def test_a_served_config_calls_through_the_sessions_its_listing_opened(tmp_path):
    team, gh, other = two_servers(tmp_path)
    async with served("serve", str(team), env={"MCP_CLI_CACHE_DIR": str(tmp_path / "cache")}) as client:
        result = await client.call_tool("team", {"argv": ["gh", "list-issues"]})
        assert not result.is_error and '"tool": "list_issues"' in text(result), text(result)
        assert starts(gh) == 1 and starts(other) == 1


def test_a_warm_cache_call_starts_only_the_server_it_calls(tmp_path):
    team, gh, other = two_servers(tmp_path)
    env = {**os.environ, "MCP_CLI_CACHE_DIR": str(tmp_path / "cache"), "MCP_CLI_NO_DAEMON": "1"}
    subprocess.run(
        [sys.executable, "-m", "mcp_cli", "inspect", str(team)],
        env=env,
        cwd=ROOT,
        capture_output=True,
        timeout=budget(120),
        check=True,
    )
    assert starts(gh) == 1 and starts(other) == 1  # listed, and stopped
    called = run(env, str(team), "--", "gh", "list-issues")
    assert called.returncode == 0, called.stderr
    assert starts(gh) == 2 and starts(other) == 1


def test_entries_are_typed_once_with_their_options():
    stdio = parse(
        "gh",
        {
            "command": "gh-mcp",
            "args": ["--ro"],
            "env": {"K": "${K:-x}"},
            "cwd": "/srv",
            "timeout": 5,
            "inherit": ["PATH"],
        },
    )
    assert isinstance(stdio, Stdio) and stdio.args == ("--ro",) and stdio.inherit == ("PATH",) and stdio.timeout == 5.0
    assert stdio.expanded().env == {"K": "x"} and stdio.env == {"K": "${K:-x}"}  # expanded when it starts only
    http = parse("api", {"url": "https://api.example/mcp", "headers": {"X-Team": "a"}, "mode": "auto"})
    assert isinstance(http, Http) and http.login_url == "https://api.example/mcp" and http.mode == "auto"
    assert parse("api", {"url": "https://a/mcp", "headers": {"Authorization": "Bearer t"}}).login_url is None
    assert parse("api", {"url": "https://a/sse", "transport": "sse"}).login_url is None
    assert isinstance(parse("mem", {"server": object()}), InProcess)


@pytest.mark.parametrize(
    ("entry", "said"),
    [
        ("npx server", "must be an object with `command` or `url`"),
        ({"args": ["x"]}, "needs a `command` (stdio) or a `url` (HTTP)"),
        ({"command": "x", "args": "--flag"}, "`args` must be a list of strings"),
        ({"command": "x", "env": {"K": 1}}, "`env` must be an object of strings"),
        ({"command": "x", "timeout": "soon"}, "`timeout` must be a number of seconds above 0"),
        ({"command": "x", "mode": "2024"}, "`mode` must be one of legacy, auto, 2026-07-28"),
        ({"url": "https://a/mcp", "transport": "ws"}, "`transport` must be http or sse"),
        ({"url": 5}, "`url` must be a URL string"),
    ],
)
def test_a_broken_entry_is_told_naming_the_server_and_the_key(entry, said):
    with pytest.raises(BadConfig, match=re.escape(said)) as raised:
        parse("gh", entry)
    assert str(raised.value).startswith("upstream server `gh`: ")
