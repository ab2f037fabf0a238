"""Pipeline built-ins: what a built-in stage adds on a 1 MB result (issue 27: at most 5 ms), and what fitting a 1 MB
answer to the budget costs.

Through the runtime in-process, as a served call runs (no client hop, which would only add the same to both), in
CPU time of the process (`time.process_time`, all its threads: other work on a shared machine does not count in it;
the median of many calls), plus that of its child processes (a jq filter runs in a worker process: its CPU time, read
from /proc in clock ticks, is taken over all the calls and added as a mean). A
built-in's row is `big | STAGE`, where `big` outputs 1 MB of JSON text (an array of 5,000 objects, as an upstream
tool's text answer), against `big | head 0`: the same pipeline through a built-in that reads none of its input and
answers `[]`, so the difference is the stage's own work on the 1 MB (reading, parsing, filtering, writing) and the
fitting of its own answer, and not the fitting of the 1 MB, which `big` alone would pay. The target ratio of each
row is (baseline + 5 ms) / baseline. A jq row's floor is the jq library's own reading of the 1 MB, measured apart
(the `jq` library alone: `compile(FILTER).input_text(TEXT).all()`, beside Python's `json.loads` of the same text).
A fitting row is a command whose output is 1 MB of one shape, answered alone (fitted to the default 8,000-token
budget: a first part and a note), against reading and writing the same text once (`json.loads` + `json.dumps`; for
text, splitting it into lines and joining them); its target is 50 ms in all, as a ratio to that baseline. Two
shapes are fitted to a budget of 50,000 tokens too, for information.
"""

from __future__ import annotations

import json
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from tempfile import TemporaryDirectory

import anyio

from mcp_cli.engine.runtime import Runtime
from mcp_cli.handlers import CallScope
from mcp_cli.handlers.python import ref
from mcp_cli.tree import Command, Group, Param, Tree

ADDED = 0.005  # seconds a built-in stage may add
FITTING = 0.050  # seconds fitting a 1 MB answer may take
ITEMS = 5_000
STAGES = ["head 10", "tail 10", "jq '.[0]'", "jq length", "save out.json"]
NULL = "head 0"  # the baseline stage: reads nothing of its input
JQ = [".[0]", "length"]
BIGGER = ["uniform", "lines"]  # shapes also fitted to a budget of 50,000 tokens

_TEXT = "lorem ipsum dolor sit amet, consectetur adipiscing elit " * 2
_BIG = json.dumps(
    [{"id": i, "name": f"item-{i:05d}", "tags": ["alpha", "beta", "gamma"], "text": _TEXT} for i in range(ITEMS)]
)


def _shapes() -> dict[str, tuple[str, str]]:
    """About 1 MB of each shape an answer comes in: {command: (what it is, its text)}."""
    table = [{"id": i, "name": f"item-{i:05d}", "size": i * 37, "text": _TEXT} for i in range(5_700)]
    mixed = [{"id": i, "tags": ["a", "b"], "text": _TEXT} if i % 3 else f"line {i} {_TEXT}" for i in range(6_500)]
    people = [{"name": f"e{i}", "entityType": "person", "observations": [_TEXT]} for i in range(4_300)]
    graph = {
        "entities": people,
        "relations": [{"from": f"e{i}", "to": f"e{i + 1}", "relationType": "knows"} for i in range(4_300)],
    }
    keyed = {f"key-{i:05d}": {"id": i, "text": _TEXT} for i in range(6_600)}
    long = [dict(row, text=_TEXT * 200) if i == 3 else row for i, row in enumerate(table[:5_600])]
    lines = "\n".join(f"{i:06d} {_TEXT}" for i in range(9_000))
    return {
        "uniform": ("an array of uniform flat objects (TOON by default)", json.dumps(table)),
        "indented": ("the same array written indented", json.dumps(table[:5_000], indent=2)),
        "mixed": ("an array of objects and strings", json.dumps(mixed)),
        "graph": ("an object of two arrays (a memory graph)", json.dumps(graph)),
        "keyed": ("an object of 6,600 keys, no arrays", json.dumps(keyed)),
        "lines": ("plain text lines", lines),
        "long": ("uniform objects, one longer than a part (re-rendered whole, then cut in pieces)", json.dumps(long)),
    }


SHAPES = _shapes()


def big() -> str:
    """About 1 MB of JSON text: an array of ITEMS objects."""
    return _BIG


def shaped(shape: str) -> str:
    """About 1 MB of one shape of answer."""
    return SHAPES[shape][1]


CLOCK = time.process_time


def _median(run: Callable[[], object], calls: int) -> float:
    for _ in range(3):
        run()
    times = []
    for _ in range(calls):
        start = CLOCK()
        run()
        times.append(CLOCK() - start)
    return statistics.median(times)


def _children_cpu() -> float:
    """CPU seconds the live child processes of this one have used (the jq workers, where filters run), from
    /proc (Linux; 0 elsewhere)."""
    total, tick = 0, os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    for children in Path("/proc/self/task").glob("*/children"):
        for pid in children.read_text().split():
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / tick


async def _cpu(runtime: Runtime, command: str, cwd: str, calls: int) -> float:
    """A call's CPU time: the median of this process's (all its threads) over `calls` calls, plus the mean of its
    children's (a jq stage's worker process; counted in clock ticks, so over all the calls)."""
    for _ in range(3):  # warm-up: the command compiled, jq loaded
        await runtime.call_tool({"command": command}, CallScope(cwd, local_files=True))
    times, before = [], _children_cpu()
    for _ in range(calls):
        start = CLOCK()
        result = await runtime.call_tool({"command": command}, CallScope(cwd, local_files=True))
        times.append(CLOCK() - start)
        if not result.ok:
            raise RuntimeError(f"`{command}` failed: {result.text()[:300]}")
    return statistics.median(times) + max(0.0, _children_cpu() - before) / calls


def _reread(text: str) -> Callable[[], object]:
    """Reading and writing `text` once: JSON parsed and written, else lines split and joined."""
    if text[:1] in "[{":
        return lambda: json.dumps(json.loads(text), ensure_ascii=False)
    return lambda: "\n".join(text.split("\n"))


async def _measure(calls: int) -> list[dict]:
    shape = Param(name="shape", choices=list(SHAPES))
    tree = Tree(
        root=Group(
            name="bench",
            children=[
                Command(name="big", summary="1 MB of JSON.", handler=ref(big)),
                Command(name="shaped", summary="1 MB of a shape.", params=[shape], handler=ref(shaped)),
            ],
        )
    )
    mb = f"{len(_BIG) / 1e6:.2f} MB"
    rows = []
    with TemporaryDirectory() as cwd:
        async with Runtime(tree) as runtime:
            for stage in STAGES:  # each beside a baseline measured right before it, so drift hits both alike
                baseline = await _cpu(runtime, f"big | {NULL}", cwd, calls)
                ours = await _cpu(runtime, f"big | {stage}", cwd, calls)
                rows.append(
                    {
                        "name": f"`{stage}` after a {mb} result (median)",
                        "ours": ours,
                        "baseline": baseline,
                        "unit": "s",
                        "target": (baseline + ADDED) / baseline,
                        "baseline_name": f"`big \\| {NULL}`",
                    }
                )
            for name, (about, text) in SHAPES.items():
                baseline = _median(_reread(text), calls)
                ours = await _cpu(runtime, f"shaped {name}", cwd, calls)
                rows.append(
                    {
                        "name": f"fitting {len(text) / 1e6:.2f} MB: {about} (median)",
                        "ours": ours,
                        "baseline": baseline,
                        "unit": "s",
                        "target": FITTING / baseline,
                        "baseline_name": "read and written once",
                    }
                )
            for name in BIGGER:  # parts six times as long, so each rendering of one costs more: for information
                text = SHAPES[name][1]
                baseline = _median(_reread(text), calls)
                ours = await _cpu(runtime, f"--budget 50000 shaped {name}", cwd, calls)
                rows.append(
                    {
                        "name": f"fitting {len(text) / 1e6:.2f} MB: {SHAPES[name][0]}, `--budget 50000` (median)",
                        "ours": ours,
                        "baseline": baseline,
                        "unit": "s",
                        "target": None,
                        "baseline_name": "read and written once",
                    }
                )
        assert Path(cwd, "out.json").stat().st_size == len(_BIG)
    import jq

    loads = _median(lambda: json.loads(_BIG), calls)
    for source in JQ:
        program = jq.compile(source)
        alone = _median(lambda p=program: p.input_text(_BIG).all(), calls)
        rows.append(
            {
                "name": f"the jq library alone, `{source}` over the {mb} (median)",
                "ours": alone,
                "baseline": loads,
                "unit": "s",
                "target": None,
                "baseline_name": "`json.loads`",
            }
        )
    return rows


def run(quick: bool = False) -> list[dict]:
    """Rows of {name, ours, baseline, unit, target, baseline_name}."""
    return anyio.run(_measure, 10 if quick else 50)


if __name__ == "__main__":
    for r in run():
        added = (r["ours"] - r["baseline"]) * 1000
        target = f"target <= {r['target']:.3f}x" if r["target"] is not None else "info"
        print(
            f"{r['name']}: {r['ours'] * 1000:.2f} ms vs {r['baseline'] * 1000:.2f} ms ({r['baseline_name']}), "
            f"{added:+.2f} ms, {r['ours'] / r['baseline']:.3f}x ({target})"
        )
