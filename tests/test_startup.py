"""Start-up never waits on a broken upstream: discovery has a budget, a server that does not answer in time is
killed and shown as unavailable (with why) while the rest is served, its failure is remembered briefly, and the
tree asks for it again while serving."""

import contextlib
import json
import os
import pty
import re
import subprocess
import sys
import uuid
from pathlib import Path

import anyio
import pytest

from mcp_cli.engine.runtime import Runtime
from mcp_cli.sources import discovery, mcp_tools
from mcp_cli.sources.discovery import STARTUP_ENV

from . import forked
from .conftest import ROOT, age, budget, running, served, text

pytestmark = pytest.mark.anyio
AWKWARD = ROOT / "tests" / "fixtures" / "upstreams" / "awkward.py"


@pytest.fixture
def hung(tmp_path):
    """A config with a good server and one that never answers initialize (1 s start-up budget)."""
    marker = f"hung-{uuid.uuid4().hex[:8]}"
    starts = tmp_path / "starts.log"
    entry = {"command": sys.executable, "args": [str(AWKWARD), marker]}
    slow = {
        **entry,
        "args": [str(AWKWARD), marker, "slow"],
        "startup_timeout_sec": 1,
        "env": {"AWKWARD_HANG_START": "1", "AWKWARD_STARTS": str(starts)},
    }
    config = tmp_path / "hung.json"
    config.write_text(json.dumps({"mcpServers": {"ok": entry, "slow": slow}}))
    return config, {"MCP_CLI_CACHE_DIR": str(tmp_path / "cache")}, marker, starts


def remembered_now(env: dict[str, str]) -> None:
    """Make the failures remembered in the cache of `env` look just written: what comes next is within FAILED_TTL
    of them, however long the starts before it took."""
    for failure in Path(env["MCP_CLI_CACHE_DIR"]).glob("*.failed"):
        age(failure, 0)


async def test_a_hung_server_is_killed_and_named_while_the_rest_is_served(hung):
    config, env, marker, starts = hung
    for attempt in (1, 2):
        remembered_now(env)
        async with served("serve", str(config), env=env) as client:
            root = text(await client.call_tool("hung", {"argv": ["--help"]}))
            assert "1 unavailable" in root
            assert "\n  slow  Unavailable: no answer within 1 s" in root
            with anyio.fail_after(budget(30)):  # it is stopped in the background while the rest is served
                while running(f"{marker} slow"):
                    await anyio.sleep(0.2)
            result = await client.call_tool("hung", {"argv": ["ok", "pid"]})
            assert not result.is_error, text(result)
            slow = text(await client.call_tool("hung", {"argv": ["slow", "--help"]}))
            assert "could not list its tools: no answer within 1 s" in slow
            if attempt == 2:  # the failure is remembered: the second start did not wait for it again
                assert "s ago; next try after 60 s" in root, root
    assert starts.read_text().count("start") == 1


def test_inspect_names_the_unavailable_server(hung):
    config, env, _, _ = hung
    proc = forked.mcp_cli("inspect", str(config), timeout=budget(120), env={**os.environ, **env})
    assert proc.returncode == 0, proc.stderr
    assert "hung ok pid" in proc.stdout and "hung slow" in proc.stdout
    assert "server 'slow': cannot list its tools: no answer within 1 s; shown as unavailable" in proc.stderr
    assert "waiting for" not in proc.stderr  # progress is for terminals only


def test_inspect_shows_progress_on_a_terminal(hung, tmp_path):
    config, env, _, _ = hung
    config.write_text(config.read_text().replace('"startup_timeout_sec": 1', '"startup_timeout_sec": 3'))
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcp_cli", "inspect", str(config)],
        stdout=subprocess.DEVNULL,
        stderr=follower,
        env={**os.environ, **env},
    )
    os.close(follower)
    seen = b""
    with contextlib.suppress(OSError):  # EIO once the process has closed the terminal
        while chunk := os.read(leader, 4096):
            seen += chunk
    assert proc.wait(timeout=budget(60)) == 0
    # a line that names who is still awaited and for how long (whether `ok` has answered yet depends on load)
    assert re.search(rb"\rwaiting for [12] MCP server\(s\): (ok, )?slow \(\d+ s of \d+\)", seen)


async def test_an_unavailable_server_joins_the_tree_once_it_answers(tmp_path, monkeypatch):
    monkeypatch.setenv("MCP_CLI_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(discovery, "FAILED_TTL", 0.0)
    monkeypatch.setattr("mcp_cli.engine.runtime.RETRY_DELAY", 0.1)
    sentinel = tmp_path / "fail-now"
    sentinel.write_text("cannot start yet")
    entry = {"command": sys.executable, "args": [str(AWKWARD)]}
    config = tmp_path / "later.json"
    config.write_text(
        json.dumps({"mcpServers": {"ok": entry, "late": {**entry, "env": {"AWKWARD_FAIL_IF": str(sentinel)}}}})
    )
    tree, warnings = await mcp_tools.discover(config)
    assert tree.root.child("late").children == [] and "late" not in tree.upstreams
    assert any("server 'late'" in w for w in warnings)
    async with Runtime(tree) as runtime:
        before = await runtime.call(["late", "pid"])
        assert before.error == "handler" and "could not list its tools" in before.message
        sentinel.unlink()
        with anyio.fail_after(budget(60)):
            while runtime.tree.root.child("late").children == []:
                await anyio.sleep(0.1)
        after = await runtime.call(["late", "pid"])
        assert after.ok and int(after.output) > 0


def test_the_budget_is_an_option(hung):
    config, env, _, _ = hung
    servers = json.loads(config.read_text())["mcpServers"]
    servers["ok"]["startup_timeout_sec"] = budget(10)  # its own; the slow one has none and gets the option's budget
    del servers["slow"]["startup_timeout_sec"]
    config.write_text(json.dumps({"mcpServers": servers}))
    proc = forked.mcp_cli(
        "inspect", str(config), "--startup-timeout", "0.5", timeout=budget(120), env={**os.environ, **env}
    )
    assert proc.returncode == 0, proc.stderr
    assert "server 'slow': cannot list its tools: no answer within 0.5 s" in proc.stderr


def test_the_default_budget_can_come_from_the_environment_and_the_option_wins(hung):
    config, env, _, _ = hung
    servers = json.loads(config.read_text())["mcpServers"]
    servers["ok"]["startup_timeout_sec"] = budget(10)
    del servers["slow"]["startup_timeout_sec"]
    config.write_text(json.dumps({"mcpServers": servers}))

    def inspect(default: str, *options: str) -> subprocess.CompletedProcess:
        environment = {**os.environ, **env, STARTUP_ENV: default}
        return forked.mcp_cli("inspect", str(config), *options, timeout=budget(120), env=environment)

    assert "server 'slow': cannot list its tools: no answer within 0.5 s" in inspect("0.5").stderr
    given = inspect("0.5", "--startup-timeout", "0.7")
    assert "server 'slow': cannot list its tools: no answer within 0.7 s" in given.stderr
    wrong = inspect("soon")
    assert wrong.returncode == 2 and f"{STARTUP_ENV}='soon' is not a number of seconds above 0" in wrong.stderr


def test_the_cache_can_be_seen_and_cleared(hung):
    config, env, _, _ = hung
    env = {**os.environ, **env}

    def cli(*args):
        proc = forked.mcp_cli(*args, env=env, timeout=budget(120))
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    cli("inspect", str(config))
    remembered_now(env)
    shown = cli("cache")
    assert f"{env['MCP_CLI_CACHE_DIR']}: 2 cached file(s)" in shown
    assert "failed: no answer within 1 s" in shown and "awkward: 9 tools" in shown
    assert cli("cache", "--clear").startswith("deleted 2 cached file(s)")
    assert "0 cached file(s)" in cli("cache")


def test_a_remembered_failure_does_not_hold_against_a_longer_budget(hung):
    config, env, _, starts = hung
    servers = json.loads(config.read_text())["mcpServers"]
    servers["ok"]["startup_timeout_sec"] = budget(10)
    del servers["slow"]["startup_timeout_sec"]
    config.write_text(json.dumps({"mcpServers": servers}))
    for given in ("0.5", "0.5", "1.5"):
        remembered_now(env)
        proc = forked.mcp_cli(
            "inspect", str(config), "--startup-timeout", given, timeout=budget(120), env={**os.environ, **env}
        )
        assert proc.returncode == 0, proc.stderr
    assert "no answer within 1.5 s; shown as unavailable" in proc.stderr
    assert starts.read_text().count("start") == 2  # the second 0.5 s start remembered; 1.5 s asked again


def test_with_no_server_answering_it_serves_what_it_can_say_and_wrap_refuses(hung, tmp_path):
    config, env, _, _ = hung
    servers = json.loads(config.read_text())["mcpServers"]
    config.write_text(json.dumps({"mcpServers": {"slow": servers["slow"]}}))
    env = {**os.environ, **env}
    inspect = forked.mcp_cli("inspect", str(config), timeout=budget(120), env=env)
    assert inspect.returncode == 0, inspect.stderr
    assert "hung slow" in inspect.stdout and "Unavailable: no answer within 1 s" in inspect.stdout
    wrap = forked.mcp_cli("wrap", str(config), "-o", str(tmp_path / "out"), timeout=budget(120), env=env)
    assert wrap.returncode == 1 and "not wrapping while slow could not list its tools" in wrap.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("command", [["run", "--", "--help"], ["inspect"]])
def test_a_one_shot_command_leaves_nothing_of_a_server_that_missed_its_budget_running(command, tmp_path):
    """What the server started is stopped too, before the command exits (it used to outlive it)."""
    marker = f"stuck-{uuid.uuid4().hex[:8]}"
    spawn = (
        "import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(999)', "
        "sys.argv[1]]); time.sleep(999)"
    )
    config = tmp_path / "stuck.json"
    entry = {"command": sys.executable, "args": ["-c", spawn, marker], "startup_timeout_sec": 1}
    config.write_text(json.dumps({"mcpServers": {"stuck": entry}}))
    argv = [sys.executable, "-m", "mcp_cli", command[0], str(config), *command[1:]]
    env = {**os.environ, "MCP_CLI_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=budget(120), env=env)
    assert "server 'stuck': cannot list its tools: no answer within 1 s" in proc.stderr
    assert not running(marker), running(marker)


SLOW_START = ROOT / "tests" / "fixtures" / "upstreams" / "slow_start.py"


@pytest.fixture
def eight_seconds(tmp_path):
    """A config of one server that takes 8 s to start serving (more than serve's 5 s budget), an empty cache, and
    no start-up budget of the user's: each command's own default applies."""
    entry = {"command": sys.executable, "args": [str(SLOW_START)], "env": {"SLOW_START_SECONDS": "8"}}
    config = tmp_path / "slow.json"
    config.write_text(json.dumps({"mcpServers": {"late": entry}}))
    env = {k: v for k, v in os.environ.items() if k != STARTUP_ENV}
    return config, {**env, "MCP_CLI_CACHE_DIR": str(tmp_path / "cache")}


def test_a_cold_run_waits_for_a_server_that_takes_8_s_to_start(eight_seconds, tmp_path):
    config, env = eight_seconds
    argv = [sys.executable, "-m", "mcp_cli", "run", str(config), "--", "late", "where"]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=budget(120), env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(tmp_path)  # the tool's answer: the server started, listed and was called
    assert "unavailable" not in proc.stderr


def test_a_cold_inspect_waits_for_a_server_that_takes_8_s_to_start(eight_seconds):
    config, env = eight_seconds
    argv = [sys.executable, "-m", "mcp_cli", "inspect", str(config)]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=budget(120), env=env)
    assert proc.returncode == 0, proc.stderr
    assert "slow late where" in proc.stdout and "Unavailable" not in proc.stdout


def test_an_exported_skill_with_an_empty_cache_waits_for_its_server(eight_seconds, tmp_path):
    config, env = eight_seconds
    argv = [sys.executable, "-m", "mcp_cli", "export", str(config), "-o", str(tmp_path / "slow")]
    exported = subprocess.run(argv, capture_output=True, text=True, timeout=budget(120), env=env)
    assert exported.returncode == 0, exported.stderr
    fresh = {**env, "MCP_CLI_CACHE_DIR": str(tmp_path / "elsewhere")}  # another machine: nothing cached
    script = tmp_path / "slow" / "scripts" / "slow.sh"
    proc = subprocess.run(
        [str(script), "late", "where"], capture_output=True, text=True, timeout=budget(120), env=fresh, cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(tmp_path)


async def test_serve_keeps_the_short_budget_and_asks_again_in_the_background(eight_seconds, monkeypatch):
    config, env = eight_seconds
    async with served("serve", str(config), env={**env, STARTUP_ENV: ""}) as client:
        root = text(await client.call_tool("slow", {"argv": ["--help"]}))
        assert "late  Unavailable: no answer within 5 s" in root  # a client is not kept waiting
        late = text(await client.call_tool("slow", {"argv": ["late", "--help"]}))
        assert "It is asked again in the background" in late
        with anyio.fail_after(budget(120)):  # RETRY_DELAY, then the server's 8 s start
            while "Unavailable" in text(await client.call_tool("slow", {"argv": ["--help"]})):
                await anyio.sleep(0.5)
        assert text(await client.call_tool("slow", {"argv": ["late", "where"]}))


def test_a_one_shot_command_promises_no_retry_in_the_background(hung):
    config, env, _, _ = hung
    argv = [sys.executable, "-m", "mcp_cli", "run", str(config), "--", "slow", "--help"]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=budget(120), env={**os.environ, **env})
    said = proc.stdout + proc.stderr
    assert "could not list its tools: no answer within 1 s" in said
    assert "Run the command again to ask it again" in said and "background" not in said
