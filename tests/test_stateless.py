"""Stateless streamable HTTP for scale-out: two replicas behind a real reverse proxy (HAProxy, from the OS
packages; `.ci/run` installs it), calls alternating between them through one MCP client, nothing lost. A client
of the handshake era is the one that needs it: stateful replicas answer its moved session with 404."""

import csv
import json
import shutil
import socket
import subprocess
import sys
import time
from contextlib import contextmanager

import pytest
from mcp import Client

from mcp_cli.testing import envelope

from .conftest import budget, free_port, text, wait_for_port

pytestmark = pytest.mark.anyio

# Each answer names the replica that gave it: the process id of the server.
TREE = {
    "format": "mcp-cli/tree",
    "version": 1,
    "root": {
        "kind": "group",
        "name": "fleet",
        "children": [
            {
                "kind": "command",
                "name": "whoami",
                "summary": "This replica's process id.",
                "handler": {"kind": "python", "target": "os:getpid"},
            },
            {
                "kind": "command",
                "name": "echo",
                "summary": "Give the words back.",
                "params": [{"name": "words", "type": "string", "nargs": "+"}],
                "handler": {"kind": "python", "target": "builtins:dict"},
            },
        ],
    },
}


def replica(tree, port: int, *more: str) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcp_cli", "serve", str(tree), "--http", f"127.0.0.1:{port}", *more],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    wait_for_port(port, proc)
    return proc


@contextmanager
def haproxy(tmp_path, health: str = ""):
    """A round-robin HAProxy in front of two stateless replicas, checking their health with `health` (HAProxy's
    backend lines; none: no checks); yields the proxy's /mcp URL, the replicas and the stats socket's path."""
    found = shutil.which("haproxy") or "/usr/sbin/haproxy"
    tree = tmp_path / "fleet.json"
    tree.write_text(json.dumps(TREE))
    ports, replicas = [], []
    for _ in range(2):  # one after the other: a port is free until its replica takes it
        ports.append(free_port())
        replicas.append(replica(tree, ports[-1], "--stateless"))
    front, stats = free_port(), tmp_path / "haproxy.sock"
    check = " check inter 100ms" if health else ""
    config = tmp_path / "haproxy.cfg"
    config.write_text(
        f"global\n  stats socket {stats}\n"
        "defaults\n  mode http\n  option http-server-close\n"
        f"  timeout connect {budget(5):.0f}s\n  timeout client {budget(60):.0f}s\n  timeout server {budget(60):.0f}s\n"
        f"frontend mcp\n  bind 127.0.0.1:{front}\n  default_backend replicas\n"
        f"backend replicas\n  balance roundrobin\n{health}"
        + "".join(f"  server r{i} 127.0.0.1:{port}{check}\n" for i, port in enumerate(ports))
    )
    proxy = subprocess.Popen([found, "-f", str(config), "-db"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_for_port(front, proxy)
        yield f"http://127.0.0.1:{front}/mcp", replicas, stats
    finally:
        for proc in [proxy, *replicas]:
            proc.terminate()
            proc.wait(timeout=budget(10))


@pytest.fixture
def balanced(tmp_path):
    with haproxy(tmp_path) as (url, replicas, _):
        yield url, replicas


def checked(stats) -> dict[str, str]:
    """Each replica's last health check as HAProxy's stats say it (`L7OK`: answered 2xx or 3xx), once all ran."""
    deadline = time.monotonic() + budget(10)
    while True:
        with socket.socket(socket.AF_UNIX) as conn:
            conn.connect(str(stats))
            conn.sendall(b"show stat\n")
            said = b"".join(iter(lambda: conn.recv(65536), b"")).decode()
        rows = list(csv.DictReader(said.lstrip("# ").splitlines()))
        found = {r["svname"]: r["check_status"] for r in rows if r["svname"].startswith("r")}
        if all(status.startswith("L") for status in found.values()) or time.monotonic() > deadline:
            return found  # every check answered (L4, L6, L7), or the time is up
        time.sleep(0.1)


@pytest.mark.parametrize(
    "health",
    [
        "  option httpchk\n",  # HAProxy's default: `OPTIONS / HTTP/1.0`, no Host
        "  option httpchk\n  http-check send meth GET uri /openapi.json ver HTTP/1.1 hdr Host localhost\n",  # no port
        "  option httpchk\n  http-check send meth GET uri /openapi.json ver HTTP/1.1 hdr Host LOCALHOST\n",
    ],
    ids=["default", "host-without-port", "host-in-capitals"],
)
async def test_haproxy_health_checks_find_the_replicas_up(tmp_path, health):
    with haproxy(tmp_path, health) as (url, replicas, stats):
        assert checked(stats) == {"r0": "L7OK", "r1": "L7OK"}  # was L7STS, a 421: every replica marked down
        async with Client(url) as client:
            answers = [envelope(await client.call_tool("fleet", {"argv": ["whoami"]}))["data"] for _ in range(4)]
    assert set(answers) == {proc.pid for proc in replicas}


@pytest.mark.parametrize("mode", ["legacy", "auto"])  # the initialize handshake (sessions), the 2026 protocol
async def test_calls_alternate_between_stateless_replicas_and_none_is_lost(balanced, mode):
    url, replicas = balanced
    async with Client(url, mode=mode) as client:
        assert [t.name for t in (await client.list_tools()).tools] == ["fleet"]
        answers = []
        for _ in range(10):
            pid = await client.call_tool("fleet", {"argv": ["whoami"]})
            assert not pid.is_error, text(pid)
            answers.append(envelope(pid)["data"])
        for i in range(10):
            echoed = await client.call_tool("fleet", {"argv": ["echo", "call", str(i)]})
            assert envelope(echoed)["data"] == {"words": ["call", str(i)]}  # each call its own answer
    first, second = (proc.pid for proc in replicas)
    assert set(answers) == {first, second}
    assert all(a != b for a, b in zip(answers, answers[1:], strict=False))  # round robin: each on the other replica


def test_stateless_needs_http(tmp_path):
    tree = tmp_path / "fleet.json"
    tree.write_text(json.dumps(TREE))
    proc = subprocess.run(
        [sys.executable, "-m", "mcp_cli", "serve", str(tree), "--stateless"],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=budget(60),
    )
    assert proc.returncode == 2 and "--stateless is for HTTP: give --http [HOST:]PORT too" in proc.stderr
