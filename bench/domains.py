"""Domain summaries: on bench's crowded config (bench/crowded.py: 500 tools, 70 servers, poor config keys, tools
without a description, servers described in Chinese), built with its seed and five others, the root rows that say
nothing (no summary, or fewer than two words besides the row's name, as `Ticker.`: `summaries.says_something`),
and the root help's o200k tokens. Targets (issue 28): no such row, and a root of at most 400 tokens."""

from __future__ import annotations

from typing import Any

import anyio

from mcp_cli.cli import tokens
from mcp_cli.engine.runtime import Runtime
from mcp_cli.sources.summaries import says_something
from mcp_cli.tree import Group

from . import mark
from .corpora import SEED
from .crowded import crowded
from .economy import tree_of

SEEDS = (SEED, 1, 2, 3, 4, 5)
MOST = 400  # root help tokens, at most


def run(seeds: tuple[int, ...] = SEEDS) -> list[dict[str, Any]]:
    found = []
    for seed in seeds:
        tree = tree_of(crowded(seed))
        root = anyio.run(Runtime(tree).call, ["--help"]).output
        rows = [g for g in tree.root.children if isinstance(g, Group)]
        silent = [g.name for g in rows if not says_something(g.summary, g.name)]
        found.append({"seed": seed, "rows": len(rows), "silent": silent, "tokens": tokens.count(root)})
    return found


def report(found: list[dict[str, Any]]) -> tuple[list[str], list[str]]:
    lines = ["| seed | root rows | rows that say nothing | root help tokens |", "|---|---|---|---|"]
    for r in found:
        lines.append(f"| {r['seed']} | {r['rows']} | {len(r['silent'])} | {r['tokens']} |")
    silent, most = sum(len(r["silent"]) for r in found), max(r["tokens"] for r in found)
    targets = [
        f"- crowded configs ({len(found)} seeds): root rows that say nothing: {silent} -- {mark(silent == 0)}",
        f"- crowded configs: root help <= {MOST} tokens: largest {most} -- {mark(most <= MOST)}",
    ]
    return lines, targets


if __name__ == "__main__":
    lines, targets = report(run())
    print("\n".join(lines + [""] + targets))
