"""Search that admits a miss: requests that no tool of the bench corpora serves (bench/data/no-fit/queries.txt,
written for this benchmark) should be answered "no command fits", while Boundary's prompts keep their tools. A
request is answered "no command fits" when its best result fits it less than `ranking.WEAK` (`Index.fits`). The
threshold, the costs of an unheard-of name and of an unheard-of thing, and the embedding model's part in the fit
were chosen on the odd-numbered requests of the first 72 (the largest threshold keeping Boundary's recall targets);
the even-numbered ones are held out, and so are the 28 "later" requests, written once that measure was chosen, and
the 42 "new" ones, written before the second measure (a word only a command's description or parameters have counts
`ranking.BODY_WEIGHT` of its rarity) was chosen, on the same odd-numbered requests. Boundary's recall here counts a
prompt answered "no command fits" as a miss. These rows are words alone (`MCP_CLI_EMBEDDINGS=none`); the last is the
default install, as shipped: WordLlama's model judging the fit too, under `ranking.WEAK_MODEL` (the targets are read
off it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp_cli.search import embeddings, ranking
from mcp_cli.search.ranking import Index

from . import mark
from .corpora import DATA, Corpus, boundary, github, progressive
from .economy import tree_of
from .quality import TARGETS, metrics, rank_of

QUERIES = DATA / "no-fit" / "queries.txt"
TARGET = 0.90  # at least, of the requests on each corpus (issue 28)
CHOSEN_ON = 72  # the first requests, whose odd-numbered ones the measure was chosen on; those after are held out
NEAR = 0.05  # a fit this close to the threshold is on its edge
NEW = 100  # the requests from this one on were written before the second measure was chosen ("new")


def queries(path: Path = QUERIES) -> list[str]:
    return [
        line.strip()
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]


def answered(index: Index, query: str, weak: float) -> bool:
    """Whether search lists commands for the query (its best result fits it at least `weak`)."""
    hits = index.search(query, 1)
    return bool(hits) and index.fits(query, hits[0][1]) >= weak


Semantic = tuple[embeddings.Model, float] | None


def index_of(corpus: Corpus, semantic: Semantic = None) -> Index:
    """The corpus's search index: with the given model judging the fit, or (None) by words alone."""
    index = Index(tree_of(corpus), semantic)
    if semantic is None:
        index.semantic = None  # not the configured default's
    return index


def missed(corpus: Corpus, asked: list[str], weak: float, semantic: Semantic = None) -> tuple[list[float], list[str]]:
    """The shares answered "no command fits" of the odd- and even-numbered requests of the first CHOSEN_ON, of those
    after them up to NEW ("later"), of those from NEW on ("new"), and of all; and the requests answered with
    commands."""
    index = index_of(corpus, semantic)
    listed = [answered(index, q, weak) for q in asked]
    parts = [listed[:CHOSEN_ON:2], listed[1:CHOSEN_ON:2], listed[CHOSEN_ON:NEW], listed[NEW:], listed]
    return [1 - sum(part) / max(len(part), 1) for part in parts], [q for q, a in zip(asked, listed, strict=True) if a]


def recall(corpus: Corpus, weak: float, semantic: Semantic = None) -> dict[str, float]:
    """Recall@1/3/5 and MRR of the corpus's prompts, one answered "no command fits" counted as a miss."""
    index = index_of(corpus, semantic)
    ranks: list[int | None] = []
    for prompt, needed in corpus.tasks:
        ranks.append(rank_of(index, prompt, needed[0]) if answered(index, prompt, weak) else None)
    return metrics(ranks)


def best_fits(corpus: Corpus, asked: list[str]) -> list[float]:
    """How well each request's best result fits it by words alone (0 without a result)."""
    index = index_of(corpus)
    return [index.fits(q, hits[0][1]) if (hits := index.search(q, 1)) else 0.0 for q in asked]


def margin(sets: list[Corpus], asked: list[str], weak: float) -> dict[str, Any]:
    """Where the threshold sits: the lowest fit of a Boundary prompt whose tool is in its top 5, the highest fit
    of a no-fit request under it (on any corpus), and how many of each lie within NEAR of the threshold."""
    index, found = index_of(sets[0]), []
    for prompt, needed in sets[0].tasks:
        hits = index.search(prompt, 5)
        if needed[0] in [(c.handler.server, c.handler.tool) for _, _, c in hits]:
            found.append(index.fits(prompt, hits[0][1]))
    lowest, fits = min(found), [f for c in sets for f in best_fits(c, asked)]
    return {
        "prompt": lowest,
        "request": max((f for f in fits if f < lowest), default=0.0),
        "prompts near": sum(abs(f - weak) < NEAR for f in found),
        "requests near": sum(abs(f - weak) < NEAR for f in fits),
    }


def run(weaks: tuple[float, ...] = (0.0, 0.2, ranking.WEAK, 0.4)) -> dict[str, Any]:
    asked, sets = queries(), [boundary(), github(), progressive()]
    rows = []
    for weak in weaks:
        rows.append(
            {
                "weak": weak,
                "label": f"{weak:.2f}",
                "recall": recall(sets[0], weak),
                "corpora": {c.name: missed(c, asked, weak) for c in sets},
            }
        )
    try:
        model = embeddings.load("wordllama")
    except embeddings.Unusable:
        model = None
    shipped = f"{ranking.WEAK_MODEL:.2f} + WordLlama judging (as shipped)"
    if model is not None:  # judging the fit, its share of the ranking the default's (0)
        semantic = (model, 0.0)
        rows.append(
            {
                "weak": ranking.WEAK_MODEL,
                "label": shipped,
                "recall": recall(sets[0], ranking.WEAK_MODEL, semantic),
                "corpora": {c.name: missed(c, asked, ranking.WEAK_MODEL, semantic) for c in sets},
            }
        )
    return {
        "queries": len(asked),
        "rows": rows,
        "margin": margin(sets, asked, ranking.WEAK),
        "chosen": ranking.WEAK,
        "shipped": shipped if model is not None else f"{ranking.WEAK:.2f}",
        "targets": TARGETS,
        "target": TARGET,
    }


def report(found: dict[str, Any]) -> tuple[list[str], list[str]]:
    names = list(found["rows"][0]["corpora"])
    head = " | ".join(f"{n}: no fit (odd / even / later / new)" for n in names)
    lines = [f"| threshold | Boundary R@1 | R@5 | {head} |", "|---" * (3 + len(names)) + "|"]
    for row in found["rows"]:
        r = row["recall"]
        cells = [" / ".join(f"{share:.0%}" for share in shares[:4]) for shares, _ in row["corpora"].values()]
        label = (
            row["label"]
            + (" (chosen)" if row["label"] == f"{found['chosen']:.2f}" else "")
            + (" (no threshold)" if row["weak"] == 0 else "")
        )
        lines.append(f"| {label} | {r['recall@1']:.3f} | {r['recall@5']:.3f} | " + " | ".join(cells) + " |")
    chosen = next(row for row in found["rows"] if row["label"] == found["shipped"])
    m = found["margin"]
    lines += [
        "",
        f"Margin at the chosen threshold of words alone ({found['chosen']:.2f}): the lowest fit of a Boundary "
        f"prompt with its tool in the top 5 is {m['prompt']:.3f}, the highest fit of a no-fit request under it "
        f"{m['request']:.3f}; within {NEAR} of the threshold: {m['prompts near']} prompts, "
        f"{m['requests near']} request answers (of {found['queries']} requests x 3 corpora).",
    ]
    lines += ["", f"{found['queries']} requests. Still answered with commands, {found['shipped']}:", ""]
    for name, (_, listed) in chosen["corpora"].items():
        lines.append(f"- {name}: " + ("; ".join(f'"{q}"' for q in listed) or "none"))
    targets = []
    for name, ((_, even, later, new, whole), _) in chosen["corpora"].items():
        targets.append(
            f'- no-fit requests answered "no command fits" on {name} >= {found["target"]:.0%}: {whole:.0%} '
            f"(held out: even {even:.0%}, later {later:.0%}, new {new:.0%}) -- {mark(whole >= found['target'])}"
        )
    r = chosen["recall"]
    for key in ("recall@1", "recall@5"):
        least = found["targets"][key]
        targets.append(f"- Boundary {key} with misses admitted >= {least:.2f}: {r[key]:.3f} -- {mark(r[key] >= least)}")
    return lines, targets


if __name__ == "__main__":
    lines, targets = report(run())
    print("\n".join(lines + [""] + targets))
