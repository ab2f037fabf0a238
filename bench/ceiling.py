"""How far can search's signals reach on requests in other words? (issue 38)

Issue 38 asks paraphrases to be found in the first 5 at least 80% of the time. Search has two signals: the words
(BM25 over the tree's commands, with the lexicon's synonyms) and an embedding model (WordLlama by default). This
measures, on every answerable request of the spent blind sets (`fresh.SPENT`: published, so reading them tunes
nothing) and on Boundary's prompts, how often the right command is among:

- `shipped`: the first 5 of `search` as the default install answers;
- `words`, `wordllama`, `minilm`: the first 5 of each signal alone;
- `words or wordllama (10)` and `either, 10 each (20)`: the first 5 (10) of either signal, a ceiling no ranking of
  5 built from those two lists can pass;
- `words or minilm (10)`: the same with all-MiniLM-L6-v2 (`MCP_CLI_EMBEDDINGS=minilm`, the best model whose weights
  come inside a package installable here) in WordLlama's place;
- `minilm places`: what `search` would answer with MiniLM taking the model's places (where the words' best fits
  weakly, `ranking.MODEL_PLACES` of the last places go to its closest), WordLlama still judging the miss.

And what MiniLM costs: its CPU time to embed the crowded tree's commands with no vector kept, and one request.

`python -m bench.ceiling` (the table is also written to bench/data/ceiling/results.md).
"""

from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from mcp_cli.search import embeddings, ranking
from mcp_cli.search.ranking import Index, meaning, plain

from . import fresh
from .corpora import boundary
from .economy import tree_of

OUT = Path(__file__).resolve().parent / "data" / "ceiling" / "results.md"
TOP = 5
COLUMNS = (
    "shipped",
    "words",
    "wordllama",
    "minilm",
    "words or wordllama (10)",
    "either, 10 each (20)",
    "words or minilm (10)",
    "minilm places",
)


@dataclass
class Asked:
    tree: str
    kind: str
    text: str
    expected: set[tuple[str, str]]


def _asked() -> list[Asked]:
    out = []
    for which in (s for s in fresh.SETS if s in fresh.SPENT):
        folder, names = fresh.SETS[which]
        for name in names:
            out += [Asked(name, r.kind, r.text, set(r.expected)) for r in fresh.requests(name, folder) if r.expected]
    source = boundary()
    out += [Asked("boundary prompts", "prompt", p, {tuple(map(str, needed[0]))}) for p, needed in source.tasks]
    return out


def _found(asked: list[Asked], minilm: embeddings.Model | None) -> dict[tuple[str, str], dict[str, list[bool]]]:
    """Per (tree, kind), per column: whether each request's command was among that column's places."""
    found: dict[tuple[str, str], dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    for tree in dict.fromkeys(a.tree for a in asked):
        index = Index(tree_of(boundary() if tree == "boundary prompts" else fresh.corpus(tree)))
        tools = [(str(c.handler.server), str(c.handler.tool)) for _, c in index.docs]
        vectors = minilm.kept([meaning(p, c) for p, c in index.docs]) if minilm else None
        mine = [a for a in asked if a.tree == tree]
        queries = minilm.vectors([plain(index.clean(a.text)) for a in mine]) if minilm else None
        for i, a in enumerate(mine):
            shipped = [p for _, p, _ in index.search(a.text, TOP)]
            semantic, index.semantic = index.semantic, None
            words = [index.at[p] for _, p, _ in index.search(a.text, 2 * TOP)]
            index.semantic = semantic
            cosines = index.cosines(index.clean(a.text))
            wordllama = [int(d) for d in (-cosines).argsort()[: 2 * TOP]] if cosines is not None else []
            places: dict[str, list[int]] = {
                "shipped": [index.at[p] for p in shipped],
                "words": words[:TOP],
                "wordllama": wordllama[:TOP],
                "words or wordllama (10)": words[:TOP] + wordllama[:TOP],
                "either, 10 each (20)": words + wordllama,
            }
            if vectors is not None and queries is not None:
                close = [int(d) for d in (-(vectors @ queries[i])).argsort()[:TOP]]
                sure = bool(words) and index.fits(a.text, index.docs[words[0]][0]) >= ranking.WORDS_SURE
                kept = words[:TOP] if sure else words[: TOP - round(TOP * ranking.MODEL_PLACES)]
                places |= {
                    "minilm": close,
                    "words or minilm (10)": words[:TOP] + close,
                    "minilm places": (kept + [d for d in close if d not in kept])[:TOP],
                }
            for column, docs in places.items():
                hit = any(tools[d] in a.expected for d in docs)
                found[(tree, a.kind)][column].append(hit)
                if a.kind != "prompt":
                    found[(tree, "all answerable")][column].append(hit)
    return found


def _cost(minilm: embeddings.Model) -> str:
    index = Index(tree_of(fresh.corpus("crowded")))
    texts = [meaning(p, c) for p, c in index.docs]
    start = time.process_time()
    minilm.vectors(texts)
    tree = time.process_time() - start
    start = time.process_time()
    minilm.vectors(["move the call with the design team to Thursday afternoon"])
    one = time.process_time() - start
    return (
        f"MiniLM's CPU time (numpy, this machine): {tree:.1f} s to embed the crowded tree's {len(texts)} commands "
        f"with no vector kept, {one * 1000:.0f} ms for one request. WordLlama's: a few hundredths of a second."
    )


def main() -> None:
    try:
        minilm: embeddings.Model | None = embeddings.load("minilm")
    except embeddings.Unusable as exc:
        print(f"MiniLM columns left out: {exc}")
        minilm = None
    found = _found(_asked(), minilm)
    kinds = ("all answerable", "paraphrase", "plain", "values", "typo", "prompt")
    lines = [
        f"Recall@{TOP} (a column of 10 or 20 places: the command among them), spent blind sets "
        f"{', '.join(s for s in fresh.SETS if s in fresh.SPENT)} and Boundary's prompts:",
        "",
        "| tree | requests | n | " + " | ".join(COLUMNS) + " |",
        "|---|---|---|" + "---|" * len(COLUMNS),
    ]
    for (tree, kind), columns in sorted(found.items(), key=lambda kv: (kv[0][0], kinds.index(kv[0][1]))):
        n = len(columns["shipped"])
        cells = [f"{sum(columns[c]) / n:.2f}" if columns.get(c) else "" for c in COLUMNS]
        lines.append(f"| {tree} | {kind} | {n} | " + " | ".join(cells) + " |")
    if minilm is not None:
        lines += ["", _cost(minilm)]
    text = "\n".join(lines) + "\n"
    print(text)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text)


if __name__ == "__main__":
    main()
