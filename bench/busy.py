"""A busy upstream is not a dead one: SESSIONS concurrent streamable-HTTP sessions, each calling one slow
single-threaded upstream (tests/fixtures/upstreams/serial.py: one request at a time, WORK seconds each) through one
`mcp-cli serve --http`. The sessions are opened first; then their calls arrive twice as fast as the upstream
serves them, so its queue outgrows the per-call timeout, which is longer than a ping's.

Each call is counted as answered, timed out in the queue (its own deadline: the upstream would not have answered it
in time), or lost (any other failure: the upstream restarted under it, "stopped during the call", a lost session).
The ideal is 0 lost, and the upstream never stopped. `python -m bench.busy [--sessions N] [--before REV]`:
`--before` also measures the mcp-cli of a git revision (its `mcp_cli/` unpacked apart), to print before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

from mcp_cli.testing import envelope

from . import mark, own_cache, wait_for_port

ROOT = Path(__file__).resolve().parent.parent
SERIAL = ROOT / "tests" / "fixtures" / "upstreams" / "serial.py"
SESSIONS, WORK, TIMEOUT = 500, 0.2, 6.0  # sessions; seconds of work per call; each call's timeout
GAP = WORK / 2  # seconds between calls: they arrive twice as fast as served, so the queue outgrows the timeout
WAIT = 300.0  # seconds a session may take in all before it counts as lost


async def _sessions(url: str, sessions: int) -> dict[str, Any]:
    """Open every session first; then session i calls at i * GAP seconds."""
    from mcp import Client

    counts: dict[str, Any] = {"sessions": sessions, "answered": 0, "timed out": 0, "lost": 0}
    lost: list[str] = []
    opened, go = [0], anyio.Event()

    async def one(i: int) -> None:
        try:
            with anyio.fail_after(WAIT):
                async with Client(url) as client:
                    opened[0] += 1
                    if opened[0] == sessions:
                        go.set()
                    await go.wait()
                    await anyio.sleep(i * GAP)
                    result = await client.call_tool("busy", {"argv": ["busy", "block", "--seconds", f"{WORK:g}"]})
        except Exception as exc:
            counts["lost"] += 1
            lost.append(f"{type(exc).__name__}: {exc}")
            go.set()  # a session that could not open does not hold up the others
            return
        text = "".join(getattr(c, "text", "") for c in result.content)
        if not result.is_error:
            counts["answered"] += 1
        elif envelope(result).get("error") == "timeout":
            counts["timed out"] += 1
        else:
            counts["lost"] += 1
            lost.append(text.strip().splitlines()[0] if text.strip() else "(no text)")

    async with anyio.create_task_group() as tg:
        for i in range(sessions):
            tg.start_soon(one, i)
    counts["example"] = lost[0] if lost else ""
    return counts


async def _pid(url: str) -> int:
    from mcp import Client

    async with Client(url) as client:
        result = await client.call_tool("busy", {"argv": ["busy", "pid"]})
    return int("".join(getattr(c, "text", "") for c in result.content))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def measure(sessions: int = SESSIONS, code: Path = ROOT) -> dict[str, Any]:
    """The counts for `sessions` sessions against the mcp-cli whose `mcp_cli/` is in folder `code`."""
    with tempfile.TemporaryDirectory() as tmp, own_cache():
        config = Path(tmp, "busy.json")
        starts = Path(tmp, "starts")
        entry = {
            "command": sys.executable,
            "args": [str(SERIAL)],
            "timeout": TIMEOUT,
            "env": {"SERIAL_STARTS": str(starts)},
        }
        config.write_text(json.dumps({"mcpServers": {"busy": entry}}))
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        argv = [sys.executable, "-m", "mcp_cli", "serve", str(config), "--http", f"127.0.0.1:{port}"]
        env = {**os.environ, "PYTHONPATH": str(code)}
        proc = subprocess.Popen(argv, cwd=code, env=env, stderr=subprocess.DEVNULL)
        try:
            wait_for_port(port, proc, 60)
            url = f"http://127.0.0.1:{port}/mcp"
            pid = anyio.run(_pid, url)  # started: a start-up is not under test
            started = starts.read_text().count("start")
            begin = time.perf_counter()
            counts = anyio.run(_sessions, url, sessions)
            counts["seconds"] = time.perf_counter() - begin
            counts["restarts"] = starts.read_text().count("start") - started
            counts["stopped"] = not _alive(pid)
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    return counts


def _unpacked(rev: str, folder: Path) -> Path:
    """`mcp_cli/` of git revision `rev`, unpacked in `folder`."""
    archive = subprocess.run(["git", "archive", rev, "mcp_cli"], cwd=ROOT, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


def report(runs: dict[str, dict[str, Any]]) -> list[str]:
    sessions = next(iter(runs.values()))["sessions"]
    lines = [
        f"{sessions} concurrent HTTP sessions, one call each, on one single-threaded upstream ({WORK:g} s a "
        f"call, {TIMEOUT:g} s timeout): the ideal is 0 lost"
    ]
    for label, c in runs.items():
        lines.append(
            f"  {label:>6}: {c['answered']} answered, {c['timed out']} timed out in the queue, {c['lost']} "
            f"lost; the upstream {'was stopped' if c['stopped'] else 'kept'}, {c['restarts']} restart(s) "
            f"({c['seconds']:.1f} s) {mark(c['lost'] == 0 and not c['stopped'])}"
            + (f"; e.g. {c['example']}" if c["example"] else "")
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.busy", description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=SESSIONS)
    parser.add_argument("--before", metavar="REV", help="also measure the mcp-cli of this git revision")
    args = parser.parse_args()
    runs: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        if args.before:
            runs["before"] = measure(args.sessions, _unpacked(args.before, Path(tmp)))
        runs["after"] = measure(args.sessions)
    print("\n".join(report(runs)))


if __name__ == "__main__":
    main()
