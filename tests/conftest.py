"""Shared test helpers: paths, the anyio backend, time budgets, ports, a raw JSON-RPC client, the MCP Inspector;
`served` and `text` come from `mcp_cli.testing`.

Every wait in the tests is `budget(seconds)`: what is ample on an idle machine, times MCP_CLI_TEST_SLACK (default 6;
raise it on a machine busier than a load of about 16 on 2 cores). Every server a test starts inherits a start-up
budget so stretched (MCP_CLI_STARTUP_TIMEOUT) and a cache folder of the session's own (MCP_CLI_CACHE_DIR), so
that no failure remembered in the user's cache counts. Tests of a budget itself keep their small explicit ones.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from bench.reliability import running  # noqa: F401 (tests import it from here)
from mcp_cli import testing
from mcp_cli.sources import discovery
from mcp_cli.testing import text  # noqa: F401 (tests import it from here)

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "examples" / "demo" / "demo.json"
FAULTS = ROOT / "tests" / "fixtures" / "faults" / "tree.json"
NODE_BIN = ROOT / "tests" / "node" / "node_modules" / ".bin"
SLACK = float(os.environ.get("MCP_CLI_TEST_SLACK") or 6)


def budget(seconds: float) -> float:
    """`seconds`, ample on an idle machine, times SLACK."""
    return seconds * SLACK


os.environ[discovery.STARTUP_ENV] = f"{budget(discovery.STARTUP_BUDGET):g}"
CACHE = tempfile.mkdtemp(prefix="mcp-cli-tests-")
os.environ["MCP_CLI_CACHE_DIR"] = CACHE
# `mcp-cli run`'s keep-alive daemons: the session's own folder, never the user's, and stopped at its end. They are
# off (MCP_CLI_NO_DAEMON) unless MCP_CLI_TEST_DAEMON=1, so that no server's state passes from one test to another;
# tests/test_daemon.py turns them on, each test in a folder of its own.
RUNTIME = tempfile.mkdtemp(prefix="mcp-cli-rt-")  # short: a socket's path holds at most 107 bytes
os.environ["MCP_CLI_RUNTIME_DIR"] = RUNTIME
if os.environ.get("MCP_CLI_TEST_DAEMON", "") in ("", "0"):
    os.environ["MCP_CLI_NO_DAEMON"] = "1"


def stop_daemons(env: dict[str, str] | None = None) -> None:
    """Stop every daemon in the runtime folder of `env` (default: the session's)."""
    subprocess.run(
        [sys.executable, "-m", "mcp_cli", "daemon", "stop", "--all"],
        env=env,
        cwd=ROOT,
        capture_output=True,
        timeout=budget(60),
    )


def pytest_unconfigure() -> None:
    stop_daemons()
    shutil.rmtree(CACHE, ignore_errors=True)
    shutil.rmtree(RUNTIME, ignore_errors=True)


# The modules whose tests take longest, first: pytest-xdist hands modules to its workers in the order collected
# (`--no-loadscope-reorder`: not sorted by how many tests they hold, which put these few-test modules last), so
# that none of them starts last and leaves one worker running alone (`--junitxml`'s times summed by module,
# 2026-11-29 at a load of about 8: the reliability suite, one test, 5 minutes; the builds, the start-up budgets and
# OAuth 5 each; the bench's smoke run, one test, 4; the malformed skills, the daemon and README's examples 3 to 4)
FIRST = ("test_reliability.py", "test_build.py", "test_startup.py", "test_oauth.py", "test_bench.py")
FIRST += ("test_daemon.py", "test_readme.py", "test_malformed_skills.py", "test_interactive.py", "test_scopes.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: i for i, name in enumerate(FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(FIRST)))  # stable: the others keep their order


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """`-n auto` (pyproject.toml): two workers a core. Most tests wait on the servers they start rather than
    compute, so a core has room for a second worker; and on a machine busy with other work, the suite keeps a
    fairer share of the cores. PYTEST_XDIST_AUTO_NUM_WORKERS still sets the number (None: xdist reads it)."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    return 2 * len(os.sched_getaffinity(0))


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"


served = functools.partial(testing.served, cwd=ROOT)  # in the repository: `-m mcp_cli` is the one under test


def age(path: Path, seconds: float) -> None:
    """Make a cache file look written `seconds` ago (0: just now, however long the starts before it took)."""
    then = time.time() - seconds
    os.utime(path, (then, then))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, proc=None, host: str = "127.0.0.1") -> None:
    """Until something listens on host:port (failing early if `proc` died)."""
    deadline = time.monotonic() + budget(30)
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
    send (lone surrogates, broken JSON). Every stdout line must be JSON-RPC; a reply not given in `budget(60)`
    seconds fails the test instead of hanging it."""

    def __init__(self, *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "mcp_cli", "serve", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            bufsize=0,
        )
        self.wait, self.pending, self.ids = budget(60), b"", 0
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
        return self.proc.wait(timeout=budget(30))


def inspector(
    server: list[str],
    *args: str,
    home: Path,
    cwd: Path = ROOT,
    strict: bool = False,
    path: str = "/usr/bin:/bin:/usr/local/bin",
    **server_env: str,
) -> subprocess.CompletedProcess:
    """The MCP Inspector CLI, an independent client, run once against the stdio server `server` (an argv) with
    HOME at `home` and PATH `path`: its CompletedProcess. It gives the server only a default environment (HOME,
    PATH), so the session's start-up budget and cache, and `server_env`, are handed over with `-e`; its connect
    timeout is stretched like the tests' own."""
    assert (NODE_BIN / "mcp-inspector").exists(), "run .ci/run (or npm ci --prefix tests/node) to install it"
    env = {discovery.STARTUP_ENV: os.environ[discovery.STARTUP_ENV], "MCP_CLI_CACHE_DIR": CACHE, **server_env}
    argv = [
        str(NODE_BIN / "mcp-inspector"),
        "--cli",
        *(["--strict"] if strict else []),
        "--connect-timeout",
        f"{budget(15) * 1000:.0f}",
        *[a for k, v in env.items() for a in ("-e", f"{k}={v}")],
        *server,
        *args,
    ]
    return subprocess.run(
        argv, capture_output=True, text=True, timeout=budget(120), cwd=cwd, env={"HOME": str(home), "PATH": path}
    )
