"""Keep-alive daemon: a warm `mcp-cli run` of a wrapped node server's tool vs the same call with --no-daemon.

Wall time of whole `mcp-cli run` processes calling server-everything's `echo` (tests/node), median of several,
through a warm daemon and in-process (each call then starts the server); then the processes left (the daemon and
its servers) after `mcp-cli daemon stop`, after kill -9 of the daemon, and after its idle timeout. Targets (issue
29): a warm call at most 25% of --no-daemon's and at most 150 ms; no process left in each case. Run alone with
`python -m bench.daemon`.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from . import mark

ROOT = Path(__file__).resolve().parent.parent
SERVER = ROOT / "tests" / "node" / "node_modules" / ".bin" / "mcp-server-everything"
CALL = ["everything", "echo", "--message", "hi"]
WAIT = 60.0  # seconds a process may take to end, at most


def _mcp_cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "mcp_cli", *args], env=env, cwd=ROOT, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"mcp-cli {' '.join(args[:3])}: {done.stderr.strip()[-300:]}")
    return done


def _timed(env: dict[str, str], config: Path, *flags: str) -> float:
    start = time.perf_counter()
    _mcp_cli(env, "run", *flags, str(config), "--", *CALL)
    return time.perf_counter() - start


def _python_start() -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return time.perf_counter() - start


def _pids(env: dict[str, str]) -> list[int]:
    """The daemons' pids and their processes', from `mcp-cli daemon status`."""
    said = _mcp_cli(env, "daemon", "status").stdout
    return [int(daemon or child) for daemon, child in re.findall(r"\(pid (\d+),|^    (\d+)  ", said, re.M)]


def _left(pids: list[int]) -> int:
    """How many of `pids` still run once WAIT seconds have passed or all have ended."""

    def alive(pid: int) -> bool:
        try:
            return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
        except (OSError, IndexError):
            return False

    deadline = time.monotonic() + WAIT
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return sum(alive(p) for p in pids)


def measure(quick: bool = False) -> dict[str, Any]:
    folder = tempfile.mkdtemp(prefix="mcp-cli-bench-")
    env = {k: v for k, v in os.environ.items() if k != "MCP_CLI_NO_DAEMON"} | {"MCP_CLI_RUNTIME_DIR": folder}
    config = Path(folder) / "everything.json"
    config.write_text(json.dumps({"mcpServers": {"everything": {"command": str(SERVER)}}}))
    rounds = 5 if quick else 21
    try:
        for _ in range(3):  # the daemon started, the tool list cached, the server warm
            _timed(env, config)
        warm = statistics.median(_timed(env, config) for _ in range(rounds))
        cold = statistics.median(_timed(env, config, "--no-daemon") for _ in range(max(3, rounds // 4)))
        floor = statistics.median(_python_start() for _ in range(rounds))
        left = {}
        pids = _pids(env)
        _mcp_cli(env, "daemon", "stop", "--all")
        left["daemon stop"] = _left(pids)
        _timed(env, config)
        pids = _pids(env)
        os.kill(pids[0], signal.SIGKILL)
        left["kill -9 of the daemon"] = _left(pids)
        _mcp_cli(env, "run", "--daemon-idle", "1", str(config), "--", *CALL)
        pids = _pids(env)
        left["idle timeout (1 s)"] = _left(pids)
        return {"warm": warm, "cold": cold, "floor": floor, "rounds": rounds, "left": left, "processes": len(pids)}
    finally:
        subprocess.run([sys.executable, "-m", "mcp_cli", "daemon", "stop", "--all"], env=env, capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)


def report(m: dict[str, Any]) -> tuple[list[str], list[str]]:
    ratio = m["warm"] / m["cold"]
    lines = [
        "| call | median wall time | ratio |",
        "|---|---|---|",
        f"| `mcp-cli run` through a warm daemon | {m['warm'] * 1000:.0f} ms | {ratio:.3f}x |",
        f"| `mcp-cli run --no-daemon` (starts the server) | {m['cold'] * 1000:.0f} ms | 1x |",
        f"| `python -c pass` (Python's own start) | {m['floor'] * 1000:.0f} ms | {m['floor'] / m['cold']:.3f}x |",
        "",
        f"Processes left of the daemon and its {m['processes'] - 1} server process(es): "
        + ", ".join(f"{n} after {case}" for case, n in m["left"].items())
        + ".",
    ]
    targets = [
        f"- daemon: warm call {ratio:.3f}x of --no-daemon <= 0.25x -- {mark(ratio <= 0.25)}",
        f"- daemon: warm call {m['warm'] * 1000:.0f} ms <= 150 ms -- {mark(m['warm'] <= 0.150)}",
        f"- daemon: no process left after stop, kill -9 and idle -- {mark(not any(m['left'].values()))}",
    ]
    return lines, targets


if __name__ == "__main__":
    lines, targets = report(measure("--quick" in sys.argv))
    print("\n".join([*lines, "", *targets]))
