"""Search quality: for each Boundary prompt, the rank of its expected tool in mcp-cli's `search` results
(Recall@1, @3, @5 and MRR), next to a plain substring match as a floor. The odd- and even-numbered prompts are
also measured apart: the search vocabulary was revised looking at the misses of the odd half only, so the even
half tells how it does on prompts it was not fitted to. With the `embeddings` extra installed, the same search mixed
with WordLlama's bundled model (`MCP_CLI_EMBEDDINGS=wordllama`, default weight) is measured too."""

from __future__ import annotations

from typing import Any

from mcp_cli.search import embeddings
from mcp_cli.search.ranking import SHOWN, Index

from .corpora import Corpus
from .economy import tree_of

DEPTH = 50
TARGETS = {"recall@1": 0.85, "recall@5": 0.97, "mrr": 0.90}  # at least, on all prompts (issue 14)


def metrics(ranks: list[int | None]) -> dict[str, float]:
    """Recall@1/3/5 and MRR from 1-based ranks (None = not found)."""
    n = len(ranks) or 1
    return {
        "recall@1": sum(1 for r in ranks if r is not None and r <= 1) / n,
        "recall@3": sum(1 for r in ranks if r is not None and r <= 3) / n,
        "recall@5": sum(1 for r in ranks if r is not None and r <= 5) / n,
        "mrr": sum(1 / r for r in ranks if r is not None) / n,
    }


def substring_ranks(corpus: Corpus) -> list[int | None]:
    """The floor: tools ranked by how many of the prompt's words occur in their name and description."""
    tools = [
        (s, t["name"], (t["name"] + " " + t.get("description", "")).lower()) for s, ts in corpus.servers for t in ts
    ]
    ranks = []
    for prompt, needed in corpus.tasks:
        words = [w for w in prompt.lower().split() if len(w) > 2]
        scored = sorted(tools, key=lambda t: (-sum(w in t[2] for w in words), t[1]))
        names = [(s, n) for s, n, _ in scored]
        ranks.append(names.index(needed[0]) + 1 if names.index(needed[0]) < DEPTH else None)
    return ranks


def tokens_per_result(corpus: Corpus) -> float:
    """Mean o200k tokens per result (row) of the `search` command's answer, over all prompts: the first's usage line,
    under its row, counts as the results' share."""
    import anyio

    from mcp_cli.cli import tokens
    from mcp_cli.engine.runtime import Runtime

    runtime = Runtime(tree_of(corpus))
    total = results = 0
    for prompt, _ in corpus.tasks:
        out = anyio.run(runtime.call, ["search", *prompt.split()]).output
        total += tokens.count(out)
        results += sum(1 for line in out.splitlines() if line.startswith("  ") and not line.startswith("   "))
    return total / max(results, 1)


def rank_of(index: Index, prompt: str, tool: tuple[str, str]) -> int | None:
    """Where the tool (server, name) comes in the index's results for the prompt: its place in an answer of SHOWN,
    as an agent reads it, else in one of DEPTH, never before SHOWN + 1 (None: not in the first DEPTH). The two can
    differ: where the words fit weakly, the embedding model takes a share of an answer's last places."""
    for limit in (SHOWN, DEPTH):
        found = [(c.handler.server, c.handler.tool) for _, _, c in index.search(prompt, limit)]
        if tool in found:
            return max(found.index(tool) + 1, 1 if limit == SHOWN else SHOWN + 1)
    return None


def run(corpus: Corpus) -> dict[str, Any]:
    tree = tree_of(corpus)
    index = Index(tree)
    ranks: list[int | None] = []
    misses = []
    for prompt, needed in corpus.tasks:
        rank = rank_of(index, prompt, needed[0])
        ranks.append(rank)
        if rank is None or rank > 5:
            misses.append(
                {
                    "prompt": prompt,
                    "expected": needed[0][1],
                    "rank": rank,
                    "top": [h[1] for h in index.search(prompt, 3)],
                }
            )
    try:
        model = (embeddings.load("wordllama"), embeddings.WEIGHT)
    except embeddings.Unusable:
        semantic = None
    else:
        semantic = metrics([rank_of(Index(tree, model), prompt, needed[0]) for prompt, needed in corpus.tasks])
    return {
        "ours": metrics(ranks),
        "odd": metrics(ranks[0::2]),
        "even": metrics(ranks[1::2]),
        "semantic": semantic,
        "substring": metrics(substring_ranks(corpus)),
        "targets": TARGETS,
        "misses": misses,
        "prompts": len(ranks),
        "tokens_per_result": tokens_per_result(corpus),
    }
