"""Shared test helpers: paths, the anyio backend, ports, a raw JSON-RPC client; `served` and `text` come from
`mcp_cli.testing`."""

from __future__ import annotations

import functools
import json
import socket
import sys
import time
from pathlib import Path

import pytest

from bench.reliability import running  # noqa: F401 (tests import it from here)
from mcp_cli import testing
from mcp_cli.testing import text  # noqa: F401 (tests import it from here)

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "examples" / "demo" / "demo.json"
FAULTS = ROOT / "tests" / "fixtures" / "faults" / "tree.json"
NODE_BIN = ROOT / "tests" / "node" / "node_modules" / ".bin"


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"


served = functools.partial(testing.served, cwd=ROOT)  # in the repository: `-m mcp_cli` is the one under test


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, proc=None, seconds: float = 30, host: str = "127.0.0.1") -> None:
    """Until something listens on host:port (failing early if `proc` died)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            socket.create_connection((host, port), timeout=0.2).close()
            return
        except OSError:
            assert proc is None or proc.poll() is None, "the server process exited"
            time.sleep(0.1)
    raise TimeoutError(f"nothing listens on port {port}")


class RawClient:
    """`python -m mcp_cli serve <args>` spoken to in raw JSON-RPC lines, for what a well-behaved client cannot
    send (lone surrogates, broken JSON). Every stdout line must be JSON-RPC; a reply not given in `wait`
    seconds fails the test instead of hanging it."""

    def __init__(self, *args: str, wait: float = 60) -> None:
        import subprocess

        self.proc = subprocess.Popen(
            [sys.executable, "-m", "mcp_cli", "serve", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            bufsize=0,
        )
        self.wait, self.pending, self.ids = wait, b"", 0
        hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}
        self.request("initialize", hello)
        self.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))

    def send(self, line: str) -> None:
        self.proc.stdin.write(line.encode("utf-8", "surrogatepass") + b"\n")

    def request(self, method: str, params: dict) -> dict:
        self.ids += 1
        self.send(json.dumps({"jsonrpc": "2.0", "id": self.ids, "method": method, "params": params}))
        return self.reply(self.ids)

    def reply(self, request_id) -> dict:
        """The reply to `request_id` (replies to others, and notifications, are skipped)."""
        import select

        deadline = time.monotonic() + self.wait
        while True:
            line, newline, rest = self.pending.partition(b"\n")
            if newline:
                self.pending = rest
                message = json.loads(line)
                if message.get("id") == request_id and "method" not in message:
                    return message
                continue
            ready, _, _ = select.select([self.proc.stdout], [], [], max(deadline - time.monotonic(), 0))
            chunk = self.proc.stdout.read(65536) if ready else b""
            assert chunk, f"no reply to request {request_id!r} (server {'exited' if self.proc.poll() else 'silent'})"
            self.pending += chunk

    def close(self) -> int:
        """Close stdin and return the server's exit status."""
        self.proc.stdin.close()
        return self.proc.wait(timeout=30)
