"""Pipeline built-ins: what a built-in stage adds on a 1 MB result (issue 27: at most 5 ms).

Through the runtime in-process, as a served call runs (no client hop, which would only add the same to both): a
command whose output is 1 MB of JSON text (an array of 5,000 objects, as an upstream tool's text answer) alone (the
baseline, its answer capped as usual), and piped into each built-in. The target ratio of each row is (baseline +
5 ms) / baseline.
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path
from tempfile import TemporaryDirectory

import anyio

from mcp_cli.engine.runtime import Runtime
from mcp_cli.handlers.python import ref
from mcp_cli.tree import Command, Group, Tree

ADDED = 0.005  # seconds a built-in stage may add
ITEMS = 5_000
STAGES = ["head 10", "tail 10", "jq '.[0]'", "jq length", "save out.json"]


def big() -> str:
    """About 1 MB of JSON text: an array of ITEMS objects."""
    return _BIG


_TEXT = "lorem ipsum dolor sit amet, consectetur adipiscing elit " * 2
_BIG = json.dumps([{"id": i, "name": f"item-{i:05d}", "tags": ["alpha", "beta", "gamma"], "text": _TEXT}
                   for i in range(ITEMS)])  # fmt: skip


async def _times(runtime: Runtime, command: str, cwd: str, calls: int) -> list[float]:
    for _ in range(3):  # warm-up: the command compiled, jq loaded
        await runtime.call_tool({"command": command}, cwd, local_files=True)
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        result = await runtime.call_tool({"command": command}, cwd, local_files=True)
        times.append(time.perf_counter() - start)
        if not result.ok:
            raise RuntimeError(f"`{command}` failed: {result.text()[:300]}")
    return times


async def _measure(calls: int) -> list[dict]:
    tree = Tree(root=Group(name="bench", children=[Command(name="big", summary="1 MB of JSON.", handler=ref(big))]))
    rows = []
    with TemporaryDirectory() as cwd:
        async with Runtime(tree) as runtime:
            for stage in STAGES:  # each beside a baseline measured right before it, so drift hits both alike
                baseline = statistics.median(await _times(runtime, "big", cwd, calls))
                ours = statistics.median(await _times(runtime, f"big | {stage}", cwd, calls))
                rows.append({"name": f"`{stage}` after a {len(_BIG) / 1e6:.2f} MB result (median)", "ours": ours,
                             "baseline": baseline, "unit": "s", "target": (baseline + ADDED) / baseline,
                             "baseline_name": "`big` alone"})  # fmt: skip
        assert Path(cwd, "out.json").stat().st_size == len(_BIG)
    return rows


def run(quick: bool = False) -> list[dict]:
    """Rows of {name, ours, baseline, unit, target, baseline_name}."""
    return anyio.run(_measure, 10 if quick else 50)


if __name__ == "__main__":
    for r in run():
        added = (r["ours"] - r["baseline"]) * 1000
        print(f"{r['name']}: {r['ours'] * 1000:.2f} ms vs {r['baseline'] * 1000:.2f} ms, {added:+.2f} ms, "
              f"{r['ours'] / r['baseline']:.3f}x (target <= {r['target']:.3f}x)")  # fmt: skip
