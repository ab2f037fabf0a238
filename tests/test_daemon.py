"""`mcp-cli run`'s keep-alive daemon, end to end with real processes: a wrapped server (npm server-everything) keeps
its state across two `run` processes, a call through the daemon says and exits exactly as one without it, a daemon
that cannot start leaves the call to run in-process, a call the daemon accepted is never run twice (the daemon
killed during it, malformed requests beside it), Ctrl-C ends a call in one line, and nothing keeps running after
`daemon stop`, kill -9 or the idle timeout. Each test has a runtime folder of its own, so no two share a daemon (nor
the user's)."""

import json
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace

import pytest

from .conftest import NODE_BIN, ROOT, age, budget, stop_daemons
from .listed import LISTED, entry, starts
from .listed import config as listed_config
from .skills import write_skill

STARTED, STOPPED = "Started simulated", "Stopped simulated logging"
TOGGLE = ["everything", "toggle-simulated-logging"]


@pytest.fixture
def env():
    """The daemon on, in a runtime folder of this test's own; every daemon stopped (and checked gone) after it."""
    folder = tempfile.mkdtemp(prefix="mcp-cli-rt-")
    env = {k: v for k, v in os.environ.items() if k != "MCP_CLI_NO_DAEMON"} | {"MCP_CLI_RUNTIME_DIR": folder}
    yield env
    stop_daemons(env)
    assert not list(Path(folder).glob("*.sock"))
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def config(tmp_path):
    path = tmp_path / "ev.json"
    path.write_text(json.dumps({"mcpServers": {"everything": {"command": str(NODE_BIN / "mcp-server-everything")}}}))
    return path


def run(env, *args, cwd=None, input=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "mcp_cli", "run", *args],
        env=env,
        cwd=cwd or ROOT,
        input=input,
        capture_output=True,
        text=True,
        timeout=budget(120),
    )


def status(env) -> list[dict]:
    """The running daemons, as `daemon status` shows them: pid, source, and the pids of their processes."""
    said = subprocess.run(
        [sys.executable, "-m", "mcp_cli", "daemon", "status"],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=budget(60),
    ).stdout
    daemons = []
    for line in said.splitlines():
        if m := re.match(r"(\S+)  \(pid (\d+), in ", line):
            daemons.append({"source": m[1], "pid": int(m[2]), "children": []})
        elif m := re.match(r"    (\d+)  ", line):
            daemons[-1]["children"].append(int(m[1]))
    return daemons


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except (OSError, IndexError):
        return False


def gone(*pids: int) -> bool:
    """Whether every one of `pids` ends within the budget."""
    deadline = time.monotonic() + budget(30)
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not any(alive(p) for p in pids)


def mcp_cli(env, *args) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "mcp_cli", *args], env=env, cwd=ROOT, capture_output=True, text=True, timeout=budget(60)
    )


@pytest.fixture
def held(tmp_path):
    """A config of the fast test upstream (`listed.py`), whose tool appends a line to `calls` each time it runs and
    then waits while the file `hold` exists."""
    calls, hold = tmp_path / "calls.log", tmp_path / "hold"
    hold.write_text("")
    server = entry("list_issues", env={"LISTED_CALLS": str(calls), "LISTED_HOLD": str(hold)})
    return SimpleNamespace(config=listed_config(tmp_path / "held.json", {"gh": server}), calls=calls, hold=hold)


def ran(held) -> int:
    """How often the held tool ran."""
    return len(held.calls.read_text().splitlines()) if held.calls.exists() else 0


def calling(env, held, *flags: str) -> subprocess.Popen:
    """`mcp-cli run [FLAGS]` of the held tool, once the tool runs (and waits)."""
    argv = [sys.executable, "-m", "mcp_cli", "run", *flags, str(held.config), "--", "gh", "list-issues"]
    proc = subprocess.Popen(argv, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + budget(60)
    while not ran(held) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert ran(held) == 1, proc.communicate(timeout=budget(30))
    return proc


def test_a_daemon_killed_during_a_call_is_said_and_the_call_never_runs_again(env, held):
    proc = calling(env, held)
    (daemon,) = status(env)
    os.kill(daemon["pid"], signal.SIGKILL)
    assert gone(daemon["pid"], *daemon["children"])
    held.hold.unlink()  # a call run again would now run to its end
    out, err = proc.communicate(timeout=budget(60))
    assert proc.returncode == 1 and out == ""
    (said,) = err.splitlines()
    assert said.startswith("mcp-cli: run: the daemon ended during the call")
    assert "whether the call ran is unknown, and it was not run again" in said
    assert ran(held) == 1
    again = run(env, str(held.config), "--", "gh", "list-issues")  # a new daemon takes the next call
    assert again.returncode == 0 and '"tool": "list_issues"' in again.stdout and again.stderr == ""
    assert ran(held) == 2


def test_malformed_requests_are_refused_and_logged_and_the_daemon_serves_on(env, held):
    proc = calling(env, held)
    try:
        (daemon,) = status(env)
        (path,) = Path(env["MCP_CLI_RUNTIME_DIR"]).glob("*.sock")
        streams = [[None, None]] * 3
        no_fds = json.dumps({"op": "run", "argv": [], "streams": streams}).encode() + b"\n"
        bad = [
            b"[]\n",
            b"1\n",
            b"\xff\xfe\x00{\n",
            b"{\n",
            b'{"op": "dance"}\n',
            b'{"op": "run", "argv": "gh"}\n',
            b'{"op": "status", "source": 7}\n',
            no_fds,
        ]
        with_fds = [
            {"op": "run", "argv": ["--help"], "streams": [["no-such-codec", None], [None, None], [None, None]]},
            {"op": "run", "argv": ["--help"], "streams": [[None, "no-such-handler"], [None, None], [None, None]]},
            {"op": "run", "argv": ["--help"], "streams": streams, "idle": float("nan")},
            {"op": "run", "argv": ["--help"], "streams": streams, "refresh": "yes"},
        ]
        for message in [*bad, *(json.dumps(m).encode() + b"\n" for m in with_fds)]:
            with socket.socket(socket.AF_UNIX) as conn, open(os.devnull, "r+b") as null:
                conn.connect(str(path))
                if message in bad:
                    conn.sendall(message)
                else:
                    socket.send_fds(conn, [message], [null.fileno()] * 3)
                answer = json.loads(conn.makefile("rb").readline())
                assert answer.get("error") and "accepted" not in answer, (message, answer)
        with socket.socket(socket.AF_UNIX) as conn:  # over 1 MiB without an end of line
            conn.connect(str(path))
            try:
                conn.sendall(b"x" * (2 << 20))
            except OSError:
                pass  # refused before it was all sent
        assert alive(daemon["pid"]) and proc.poll() is None
    finally:
        held.hold.unlink()
    out, err = proc.communicate(timeout=budget(60))
    assert proc.returncode == 0 and '"tool": "list_issues"' in out and err == ""
    again = run(env, str(held.config), "--", "gh", "list-issues")
    assert again.returncode == 0 and again.stderr == "" and ran(held) == 2
    (same,) = status(env)
    assert same["pid"] == daemon["pid"]  # the one daemon, throughout
    log = path.with_suffix(".log").read_text()
    assert log.count("refused a request") == len(bad) + len(with_fds) + 1, log
    assert "Traceback" not in log  # each refused in one line: none was a surprise


@pytest.mark.parametrize("flags", [[], ["--no-daemon"]], ids=["daemon", "in-process"])
def test_ctrl_c_ends_a_call_in_one_line_with_status_130(env, held, flags):
    proc = calling(env, held, *flags)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=budget(60))
    assert (proc.returncode, out, err) == (130, "", "mcp-cli: run: interrupted\n")
    held.hold.unlink()
    again = run(env, str(held.config), "--", "gh", "list-issues")  # the call was cancelled; the daemon serves on
    assert again.returncode == 0 and again.stderr == "" and ran(held) == 2
    assert len(status(env)) == 1


def test_options_that_shape_no_tree_go_with_the_call_to_the_same_daemon(env, config):
    first = run(env, "--startup-timeout", "120", "--budget", "2000", str(config), "--", *TOGGLE)
    second = run(env, str(config), "--", *TOGGLE)
    third = run(env, "--startup-timeout=90", str(config), "--", *TOGGLE)
    assert [p.stdout[: len(STARTED)] for p in (first, second, third)] == [STARTED, STOPPED[: len(STARTED)], STARTED]
    assert len(status(env)) == 1


def test_daemon_status_says_when_none_runs(env, config):
    assert mcp_cli(env, "daemon", "status").stdout == "no daemon runs\n"
    assert mcp_cli(env, "daemon", "status", str(config)).stdout == f"no daemon runs for {config}\n"
    run(env, str(config), "--", "--help")
    assert mcp_cli(env, "daemon", "status", str(config)).stdout.startswith(f"{config}  (pid ")
    other = config.with_name("other.json")
    assert mcp_cli(env, "daemon", "status", str(other)).stdout == f"no daemon runs for {other}\n"
    assert mcp_cli(env, "daemon", "stop", str(other)).stdout == f"no daemon runs for {other}\n"


def test_a_start_failure_is_not_recalled_once_path_is_fixed(env, tmp_path):
    """An exported skill's server whose command was not on PATH starts as soon as PATH has it (a remembered failure
    is the environment's it failed in)."""
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "listed-mcp").write_text(f"#!/bin/sh\nexec {sys.executable} {LISTED} whoami\n")
    (tools / "listed-mcp").chmod(0o755)
    source = listed_config(tmp_path / "tools.json", {"tools": {"command": "listed-mcp"}})
    env = {**env, "MCP_CLI_CACHE_DIR": str(tmp_path / "cache")}
    export = mcp_cli(env, "export", str(source), "-o", str(tmp_path / "tools"))
    assert export.returncode == 0 and "`listed-mcp` not found on PATH" in export.stderr, export.stderr
    script = tmp_path / "tools" / "scripts" / "tools.sh"
    missing = subprocess.run(
        [str(script), "tools", "whoami"], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=budget(120)
    )
    assert missing.returncode != 0 and "not found on PATH" in missing.stderr
    fixed = {**env, "PATH": f"{tools}{os.pathsep}{env['PATH']}"}
    found = subprocess.run(
        [str(script), "tools", "whoami"], env=fixed, cwd=tmp_path, capture_output=True, text=True, timeout=budget(120)
    )
    assert found.returncode == 0 and '"tool": "whoami"' in found.stdout, found.stderr


def test_a_server_unavailable_in_the_daemons_tree_is_asked_again_at_the_next_call(env, tmp_path):
    """As a fresh process would: at once when its failure is no longer remembered, while the other servers'
    sessions go on."""
    broken, good, cache = tmp_path / "broken", tmp_path / "good.log", tmp_path / "cache"
    broken.write_text("the server cannot start while this file exists")
    source = listed_config(
        tmp_path / "two.json",
        {
            "good": entry("ping", env={"LISTED_STARTS": str(good)}),
            "gh": entry("list_issues", env={"LISTED_FAIL_IF": str(broken)}),
        },
    )
    env = {**env, "MCP_CLI_CACHE_DIR": str(cache)}
    assert run(env, str(source), "--", "good", "ping").returncode == 0
    failed = run(env, str(source), "--", "gh", "list-issues")
    assert failed.returncode != 0 and "missing API key" in failed.stderr
    started = starts(good)  # its listing, then its session
    broken.unlink()
    (failure,) = cache.glob("tools-*.failed")
    age(failure, 0)
    remembered = run(env, str(source), "--", "gh", "list-issues")
    assert remembered.returncode != 0 and "next try after" in remembered.stderr  # as a fresh process says
    age(failure, 3600)
    fixed = run(env, str(source), "--", "gh", "list-issues")
    assert fixed.returncode == 0 and '"tool": "list_issues"' in fixed.stdout and fixed.stderr == ""
    assert run(env, str(source), "--", "good", "ping").returncode == 0
    assert starts(good) == started and len(status(env)) == 1  # the good server's session, kept


def test_a_wrapped_servers_state_is_kept_across_two_runs(env, config):
    first, second = run(env, str(config), "--", *TOGGLE), run(env, str(config), "--", *TOGGLE)
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    assert first.stdout.startswith(STARTED) and second.stdout.startswith(STOPPED)
    assert first.stderr == second.stderr == ""
    (daemon,) = status(env)
    assert daemon["source"] == str(config) and len(daemon["children"]) == 1  # the server, started once


def test_without_the_daemon_every_run_meets_a_new_server(env, config):
    off = {**env, "MCP_CLI_NO_DAEMON": "1"}
    for flagged in (run(env, "--no-daemon", str(config), "--", *TOGGLE), run(off, str(config), "--", *TOGGLE)):
        assert flagged.returncode == 0 and flagged.stdout.startswith(STARTED), flagged.stderr
    assert status(env) == []


def test_a_call_through_the_daemon_says_and_exits_as_one_without_it(env, tmp_path):
    echo = (
        '"""Echo stdin in capitals; say so on stderr; exit with --status."""\nimport argparse, sys\n'
        'p = argparse.ArgumentParser()\np.add_argument("--status", type=int, default=0)\nargs = p.parse_args()\n'
        'sys.stdout.write(sys.stdin.read().upper())\nprint("echoed", file=sys.stderr)\nsys.exit(args.status)\n'
    )
    # a name the spec does not allow: loading warns, and each call says so again, as a fresh process would
    skill = write_skill(
        tmp_path / "echoes",
        "Echo stdin back, and complain.",
        {"scripts/echo.py": echo},
        body="# Echoes\n",
        name="Echoes",
    )
    work = tmp_path / "work"
    work.mkdir()
    (work / "args.json").write_text('{"status": 3}')
    calls = [
        ["--", "--help"],
        ["--", "echo", "--status", "3"],
        ["--", "echo", "--json", "@args.json"],
        ["--", "ech"],
        ["--", "echo", "--status", "x"],
    ]
    for argv in calls:
        daemon = run(env, str(skill), *argv, cwd=work, input="héllo\n")
        alone = run(env, "--no-daemon", str(skill), *argv, cwd=work, input="héllo\n")
        assert (daemon.stdout, daemon.stderr, daemon.returncode) == (alone.stdout, alone.stderr, alone.returncode)
    assert (daemon.returncode, alone.returncode) == (2, 2)  # the last: a bad value
    assert "warning: SKILL.md: name 'Echoes'" in daemon.stderr
    assert run(env, str(skill), "--", "echo", "--status", "3", input="abc").stdout == "ABC"
    assert len(status(env)) == 2  # one per working folder: ROOT and work


def test_a_changed_config_is_loaded_again(env, config):
    assert run(env, str(config), "--", *TOGGLE).stdout.startswith(STARTED)
    ((old,),) = [d["children"] for d in status(env)]
    config.write_text(config.read_text() + "\n")
    assert run(env, str(config), "--", *TOGGLE).stdout.startswith(STARTED)  # a new server
    assert run(env, str(config), "--", *TOGGLE).stdout.startswith(STOPPED)
    assert gone(old)  # the old one stopped


def test_a_daemon_that_cannot_start_leaves_the_call_in_process_with_one_warning(env, config, tmp_path):
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    broken = {**env, "MCP_CLI_RUNTIME_DIR": str(blocked / "run")}
    for proc in (run(broken, str(config), "--", *TOGGLE), run(broken, str(config), "--", *TOGGLE)):
        assert proc.returncode == 0 and proc.stdout.startswith(STARTED)  # in-process each time
        (warning,) = proc.stderr.splitlines()
        assert (
            warning.startswith("mcp-cli: warning: the daemon cannot use the runtime folder") and "in-process" in warning
        )


def test_the_runtime_folder_and_socket_are_the_users_alone(env, config):
    run(env, str(config), "--", "--help")
    folder = Path(env["MCP_CLI_RUNTIME_DIR"])
    (sock,) = folder.glob("*.sock")
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700 and stat.S_IMODE(sock.stat().st_mode) == 0o600
    folder.chmod(0o755)  # shared: refused, the call runs in-process
    proc = run(env, str(config), "--", "--help")
    folder.chmod(0o700)  # before asserting: the fixture stops the daemon through this folder
    assert proc.returncode == 0 and "is not a folder of this user's alone" in proc.stderr


def test_nothing_keeps_running_after_daemon_stop(env, config):
    run(env, str(config), "--", *TOGGLE)
    (daemon,) = status(env)
    stopped = subprocess.run(
        [sys.executable, "-m", "mcp_cli", "daemon", "stop", str(config)],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=budget(60),
    )
    assert f"stopped {config}" in stopped.stdout
    assert not any(alive(p) for p in [daemon["pid"], *daemon["children"]])  # gone once stop returned
    assert status(env) == []


def test_after_kill_9_nothing_keeps_running_and_the_next_run_starts_a_new_daemon(env, config):
    run(env, str(config), "--", *TOGGLE)
    (daemon,) = status(env)
    os.kill(daemon["pid"], signal.SIGKILL)
    assert gone(daemon["pid"], *daemon["children"])  # the server got the parent-death signal
    again = run(env, str(config), "--", *TOGGLE)
    assert again.returncode == 0 and again.stdout.startswith(STARTED) and again.stderr == ""
    (new,) = status(env)
    assert new["pid"] != daemon["pid"]


def test_the_idle_timeout_stops_the_daemon_and_its_servers(env, config):
    run(env, "--daemon-idle", "1", str(config), "--", *TOGGLE)
    (daemon,) = status(env)
    assert gone(daemon["pid"], *daemon["children"])
    assert not list(Path(env["MCP_CLI_RUNTIME_DIR"]).glob("*.sock"))


def test_two_concurrent_runs_share_one_daemon(env, config):
    with ThreadPoolExecutor(2) as pool:
        procs = list(pool.map(lambda _: run(env, str(config), "--", *TOGGLE), range(2)))
    assert all(p.returncode == 0 for p in procs), [p.stderr for p in procs]
    said = sorted(p.stdout[: len(STARTED)] for p in procs)
    assert said == sorted([STARTED, STOPPED[: len(STARTED)]])  # one server toggled twice
    assert len(status(env)) == 1


def test_an_exported_skill_runs_through_the_daemon(env, config, tmp_path):
    export = subprocess.run(
        [sys.executable, "-m", "mcp_cli", "export", str(config), "-o", str(tmp_path / "ev")],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=budget(300),
    )
    assert export.returncode == 0, export.stderr
    (script,) = (tmp_path / "ev" / "scripts").glob("*.sh")
    calls = [
        subprocess.run(
            [str(script), *TOGGLE], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=budget(120)
        )
        for _ in range(2)
    ]
    assert calls[0].stdout.startswith(STARTED) and calls[1].stdout.startswith(STOPPED), calls[1].stderr
    assert len(status(env)) == 1
