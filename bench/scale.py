"""Scale: tree build time, root help and search latency, peak memory, and root help tokens at 100, 1,000 and
10,000 tools (synthetic sets)."""

from __future__ import annotations

import statistics
import time
import tracemalloc
from typing import Any

import anyio

from mcp_cli.cli import tokens
from mcp_cli.engine.runtime import Runtime

from .corpora import boundary, synthetic
from .economy import tree_of

SIZES = (100, 1000, 10000)


async def _median(runtime: Runtime, argvs: list[list[str]]) -> float:
    """Median seconds of one runtime call per argv, all in one event loop."""
    times = []
    for argv in argvs:
        start = time.perf_counter()
        await runtime.call(argv)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def run(sizes: tuple[int, ...] = SIZES, repeat: int = 25) -> list[dict[str, Any]]:
    queries = [prompt for prompt, _ in boundary().tasks]
    rows = []
    for size in sizes:
        corpus = synthetic(size)
        start = time.perf_counter()
        tree = tree_of(corpus)
        build_s = time.perf_counter() - start
        tracemalloc.start()
        tree_of(corpus)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        runtime = Runtime(tree)
        root = anyio.run(runtime.call, ["--help"])
        help_s = anyio.run(_median, runtime, [["--help"]] * repeat)
        index_s = anyio.run(_median, runtime, [["search", "warm", "up"]])  # the first search builds the index
        search_s = anyio.run(_median, runtime, [["search", *q.split()] for q in queries[: repeat * 2]])
        rows.append(
            {
                "tools": size,
                "build_s": build_s,
                "peak_mb": peak / 1e6,
                "root_help_s": help_s,
                "index_s": index_s,
                "search_s": search_s,
                "root_help_tokens": tokens.count(root.text()),
            }
        )
    return rows
