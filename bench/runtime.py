"""Runtime overhead: our server vs a bare low-level SDK server, same machine, same run.

- cold start: spawn to `initialize` answered, over raw stdio JSON-RPC (no client library in the timing);
- per call: a trivial command through our one tool vs the bare server's trivial tool, kept-open sessions.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

HERE = Path(__file__).resolve().parent
OURS = [sys.executable, "-m", "mcp_cli", "serve", str(HERE / "trivial.json")]
BARE = [sys.executable, str(HERE / "bare_server.py")]
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}},
}


def cold_start(argv: list[str], env: dict | None = None) -> float:
    """Seconds from spawn to the initialize response."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env
    )
    proc.stdin.write(json.dumps(INIT) + "\n")
    proc.stdin.flush()
    proc.stdout.readline()
    elapsed = time.perf_counter() - start
    proc.stdin.close()
    proc.wait()
    return elapsed


async def per_call(argv: list[str], tool: str, arguments: dict, calls: int, env: dict | None = None) -> list[float]:
    """Seconds per call of one tool over a kept-open stdio session, after 20 warm-up calls."""
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=env)
    async with Client(params) as client:
        for _ in range(20):
            await client.call_tool(tool, arguments)
        times = []
        for _ in range(calls):
            start = time.perf_counter()
            result = await client.call_tool(tool, arguments)
            times.append(time.perf_counter() - start)
            if result.is_error:
                said = " ".join(c.text for c in result.content if c.type == "text")
                raise RuntimeError(f"`{tool}` answered {arguments} with an error: {said[:300]}")
        return times


def run(quick: bool = False) -> list[dict]:
    """Rows of {name, ours, baseline, unit, ratio, target}."""
    rounds, calls = (5, 100) if quick else (21, 500)
    ours, bare = [], []
    for _ in range(rounds):  # interleaved, so drift hits both alike
        ours.append(cold_start(OURS))
        bare.append(cold_start(BARE))
    bare_call = anyio.run(per_call, BARE, "ping", {}, calls)
    ours_call = anyio.run(per_call, OURS, "bench", {"argv": ["ping"]}, calls)
    sync_call = anyio.run(per_call, OURS, "bench", {"argv": ["ping-sync"]}, calls)
    bare_median = statistics.median(bare_call)
    rows = [
        ("cold start, spawn to initialize (median)", statistics.median(ours), statistics.median(bare), "s", 1.05),
        ("per call, trivial async command (median)", statistics.median(ours_call), bare_median, "s", 1.2),
        ("per call, trivial sync command, in a thread (median)", statistics.median(sync_call), bare_median, "s", None),
    ]
    return [
        {"name": n, "ours": o, "baseline": b, "unit": u, "target": t, "baseline_name": "bare SDK server"}
        for n, o, b, u, t in rows
    ]
