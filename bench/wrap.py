"""Proxy overhead: wrapping MCP servers vs talking to them directly, same machine, same run.

- per call: the bare server's trivial tool through a wrap (client -> mcp-cli -> upstream) vs called directly,
  both over kept-open stdio sessions; the same for a node server (server-everything's `echo`, from tests/node),
  also through a bare SDK proxy (`sdk_proxy.py`): the floor of a proxy that keeps the SDK on both sides;
- start-up: a wrap of five servers with a warm tool-list cache, spawn to `initialize` answered, vs the bare SDK
  server alone; no upstream process may start;
- start-up with one of the five hung (it never answers `initialize`, its failure not yet remembered), against
  the start-up budget: the wrap serves the other four and names the hung one.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import anyio
import anyio.to_thread

from mcp_cli.sources.discovery import startup_budget

from . import own_cache
from .runtime import BARE, cold_start, per_call

HERE = Path(__file__).resolve().parent
WARMING = 60.0  # seconds each server may take to list its tools while the cache is warmed (a busy machine too)


def warm(config: Path) -> None:
    """List the servers of `config` into the tool-list cache (MCP_CLI_CACHE_DIR); RuntimeError naming any that did
    not answer."""
    argv = [sys.executable, "-m", "mcp_cli", "inspect", str(config), "--startup-timeout", str(WARMING)]
    done = subprocess.run(argv, capture_output=True, text=True)
    missed = [line for line in done.stderr.splitlines() if "cannot list its tools" in line]
    if done.returncode or missed:
        raise RuntimeError(f"warming the cache for {config.name}: {(missed or [done.stderr.strip()])[0][:300]}")


async def _in_process(config: Path, calls: int) -> list[float]:
    """Seconds per call of `s0 ping` through mcp-cli's runtime and upstream pool, without the client->server hop."""
    from mcp_cli.engine.runtime import Runtime
    from mcp_cli.sources.mcp_tools import load

    tree, _ = await anyio.to_thread.run_sync(load, config)
    async with Runtime(tree) as runtime:
        for _ in range(20):
            await runtime.call(["s0", "ping"])
        times = []
        for _ in range(calls):
            start = time.perf_counter()
            await runtime.call(["s0", "ping"])
            times.append(time.perf_counter() - start)
        return times


def _node(tmp: Path, calls: int, rounds: int) -> list[dict]:
    """Per call of server-everything's `echo`: directly, through the wrap, and through a bare SDK proxy (the floor
    of any proxy built on the SDK: `sdk_proxy.py`). Rounds alternate so drift hits all three alike (three were too
    few: two runs at rest gave 1.71x and 2.47x). Nothing when tests/node is not installed (`npm ci --prefix
    tests/node`)."""
    everything = HERE.parent / "tests" / "node" / "node_modules" / ".bin" / "mcp-server-everything"
    if not everything.exists():
        print(f"not measured: {everything} is missing (npm ci --prefix tests/node)", file=sys.stderr)
        return []
    config = tmp / "node.json"
    config.write_text(json.dumps({"mcpServers": {"everything": {"command": str(everything)}}}))
    warm(config)
    direct: list[float] = []
    sdk: list[float] = []
    ours: list[float] = []
    for _ in range(rounds):
        direct += anyio.run(per_call, [str(everything)], "echo", {"message": "hi"}, calls)
        proxy = [sys.executable, str(HERE / "sdk_proxy.py"), str(everything)]
        sdk += anyio.run(per_call, proxy, "echo", {"message": "hi"}, calls)
        wrapped = [sys.executable, "-m", "mcp_cli", "serve", str(config)]
        ours += anyio.run(per_call, wrapped, "node", {"argv": ["everything", "echo", "--message", "hi"]}, calls)
    median = statistics.median
    return [
        {
            "name": "per call, node upstream (server-everything echo) through the wrap (median)",
            "ours": median(ours),
            "baseline": median(direct),
            "baseline_name": "same tool called directly",
            "unit": "s",
            "target": 2.0,  # issue 39 (it was 1.5 before: never met)
        },
        {
            "name": "per call, the same through a bare SDK proxy (no mcp-cli code; info)",
            "ours": median(sdk),
            "baseline": median(direct),
            "baseline_name": "same tool called directly",
            "unit": "s",
            "target": None,
        },
        {
            "name": "per call, node upstream through the wrap vs through the bare SDK proxy (median)",
            "ours": median(ours),
            "baseline": median(sdk),
            "baseline_name": "bare SDK proxy",
            "unit": "s",
            "target": 1.0,
        },
    ]


def run(quick: bool = False) -> list[dict]:
    rounds, calls = (5, 100) if quick else (21, 500)
    marker = f"bench-{uuid.uuid4().hex[:8]}"
    with tempfile.TemporaryDirectory() as tmp, own_cache() as cache:
        servers = {
            f"s{i}": {"command": sys.executable, "args": [str(HERE / "bare_server.py"), marker, str(i)]}
            for i in range(5)
        }
        config = Path(tmp) / "five.json"
        config.write_text(json.dumps({"mcpServers": servers}))
        warm(config)
        wrapped = [sys.executable, "-m", "mcp_cli", "serve", str(config)]
        ours, bare = [], []
        for _ in range(rounds):
            ours.append(cold_start(wrapped))
            bare.append(cold_start(BARE))
        started = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True).stdout.split()
        hung_config = Path(tmp) / "hung.json"
        hung = {"command": sys.executable, "args": ["-c", "import time; time.sleep(3600)", marker + "-hung"]}
        hung_config.write_text(json.dumps({"mcpServers": {**servers, "s4": hung}}))
        with_hung = []
        for _ in range(1 if quick else 3):
            for failed in cache.glob("*.failed"):
                failed.unlink()  # a cold start: the hung server's failure is not remembered yet
            with_hung.append(cold_start([sys.executable, "-m", "mcp_cli", "serve", str(hung_config)]))
        left = subprocess.run(["pgrep", "-f", marker + "-hung"], capture_output=True, text=True).stdout.split()
        direct = anyio.run(per_call, BARE, "ping", {}, calls)
        through = anyio.run(per_call, wrapped, "five", {"argv": ["s0", "ping"]}, calls)
        node = _node(Path(tmp), calls, 3 if quick else 7)
        runtime_only = anyio.run(_in_process, config, calls)
    upstreams_note = "no upstream started" if not started else f"{len(started)} upstream processes started"
    hung_note = "the hung server was killed" if not left else "the hung server was LEFT RUNNING"
    return node + [
        {
            "name": "per call, trivial upstream tool through the wrap (median)",
            "ours": statistics.median(through),
            "baseline": statistics.median(direct),
            "baseline_name": "same tool called directly",
            "unit": "s",
            "target": 1.10,
        },
        {
            "name": "per call, the same through the runtime in-process (no client hop; info)",
            "ours": statistics.median(runtime_only),
            "baseline": statistics.median(direct),
            "baseline_name": "same tool called directly",
            "unit": "s",
            "target": None,
        },
        {
            "name": f"start-up, wrap of 5 servers, warm cache ({upstreams_note})",
            "ours": statistics.median(ours),
            "baseline": statistics.median(bare),
            "baseline_name": "bare SDK server",
            "unit": "s",
            "target": 1.2,
            "failed": bool(started),
        },
        {
            "name": f"start-up, wrap of 5 servers, one never answers (cold; {hung_note}; info)",
            "ours": statistics.median(with_hung),
            "baseline": startup_budget(),
            "baseline_name": "the start-up budget",
            "unit": "s",
            "target": None,
            "failed": bool(left),
        },
    ]
