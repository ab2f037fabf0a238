"""Stopping stops everything: on SIGTERM, SIGHUP, SIGINT or stdin EOF the server stops upstream servers, running
skill scripts and what they started; killed with SIGKILL, its direct children still exit (parent-death signal,
Linux). Checked with the process table after each way of dying."""

import json
import os
import signal
import subprocess
import sys
import time
import uuid

import pytest

from .conftest import ROOT, budget, running

AWKWARD = ROOT / "tests" / "fixtures" / "upstreams" / "awkward.py"
WORKDIR = ROOT / "tests" / "fixtures" / "skills" / "workdir"
WAYS = ["SIGTERM", "SIGHUP", "SIGINT", "stdin EOF", "SIGKILL"]


def wait_until(check) -> bool:
    deadline = time.monotonic() + budget(30)
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.1)
    return check()


class Session:
    """The server as a subprocess spoken to in raw JSON-RPC lines, so the test can kill it any way it likes."""

    def __init__(self, source, cwd, env=None) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "mcp_cli", "serve", str(source)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            cwd=cwd,
            env={**os.environ, **(env or {})},
        )
        self.next_id = 1
        self.send(
            "initialize",
            {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
        )
        self.reply(1)
        self.send("notifications/initialized")

    def send(self, method: str, params: dict | None = None) -> int:
        message = {"jsonrpc": "2.0", "method": method, **({"params": params} if params else {})}
        if not method.startswith("notifications/"):
            message["id"] = self.next_id
            self.next_id += 1
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()
        return message.get("id", 0)

    def call(self, tool: str, argv: list[str]) -> int:
        return self.send("tools/call", {"name": tool, "arguments": {"argv": argv}})

    def reply(self, wanted: int) -> dict:
        while True:
            message = json.loads(self.proc.stdout.readline())
            if message.get("id") == wanted:
                return message

    def stop(self, way: str) -> None:
        if way == "stdin EOF":
            self.proc.stdin.close()
        else:
            self.proc.send_signal(getattr(signal, way))
        self.proc.wait(timeout=budget(60))


@pytest.fixture
def marker() -> str:
    return f"stop-{uuid.uuid4().hex[:10]}"


@pytest.mark.parametrize("way", WAYS)
def test_upstream_servers_stop_with_the_server(way, marker, tmp_path):
    entry = {"command": sys.executable, "args": [str(AWKWARD), marker], "timeout": 600}
    config = tmp_path / "stop.json"
    config.write_text(json.dumps({"mcpServers": {"a": entry, "b": {**entry, "args": [str(AWKWARD), marker, "b"]}}}))
    session = Session(config, tmp_path, {"MCP_CLI_CACHE_DIR": str(tmp_path / "cache")})
    assert "result" in session.reply(session.call("stop", ["a", "pid"]))
    session.call("stop", ["b", "freeze"])  # in flight when the server dies: an upstream that reads nothing more
    assert wait_until(lambda: len(running(marker)) == 2), running(marker)
    session.stop(way)
    assert wait_until(lambda: not running(marker)), f"left running after {way}: {running(marker)}"


@pytest.mark.parametrize("way", WAYS)
def test_running_scripts_stop_with_the_server(way, marker, tmp_path):
    session = Session(WORKDIR, tmp_path)
    session.call("workdir", ["linger", marker])
    assert wait_until(lambda: len(running(marker)) == 2), running(marker)  # the script and its child
    session.stop(way)
    if way == "SIGKILL":  # nothing of the server runs any more: the script itself gets the parent-death signal
        assert wait_until(lambda: not [p for p in running(marker) if "grandchild-" not in p]), running(marker)
        subprocess.run(["pkill", "-f", marker])
    else:
        assert wait_until(lambda: not running(marker)), f"left running after {way}: {running(marker)}"


def test_stdin_from_the_null_device_ends_the_server(tmp_path):
    """The null device reads as an immediate end of input (it was once watched by the event loop, which never
    reported it, and the server waited for ever)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcp_cli", "serve", str(WORKDIR)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
    )
    assert wait_until(lambda: proc.poll() is not None), "the server still runs with its stdin at end of input"
    assert proc.returncode == 0, proc.stderr.read()
