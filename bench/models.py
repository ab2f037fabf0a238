"""Embedding models side by side (issue 38): for each model search can load offline (`embeddings.py`) and each
share of the ranking it decides, the fresh requests of one half (bench/fresh.py: Recall@1 and @5 of the answerable
requests, @5 of the paraphrases, the answerable ones declined and the unanswerable ones declined, GitHub's set and
the crowded one's) and Boundary's Recall@1, @5 and MRR (bench/quality.py, whose targets `search` must hold); then
what each model costs: loading it, embedding the crowded tree's 500 commands (cold: not read back from disk), one
query (warm), in CPU seconds (the machine may be shared: wall time tells its load more than the model) and wall seconds.

`python -m bench.models [--half tune|held_out] [--models wordllama,minilm] [--weights 0,0.3,0.5]`.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from typing import Any

from mcp_cli.search import embeddings
from mcp_cli.search.ranking import Index, meaning
from mcp_cli.tree import Tree

from . import quality
from .corpora import boundary
from .economy import tree_of
from .fresh import Ours, corpus, requests, score

SETS = ("github", "crowded")


class Judged(Ours):
    """bench/fresh.py's engine over a given index (a model and a weight of our choosing)."""

    def __init__(self, index: Index) -> None:
        self.index = index


@dataclass
class Cost:
    load: tuple[float, float]  # CPU, wall seconds
    tree: tuple[float, float]  # the crowded tree's commands, cold
    query: tuple[float, float]  # one query, warm (the mean of the tune requests')


def _timed(thunk: Any) -> tuple[Any, tuple[float, float]]:
    cpu, wall = time.process_time(), time.perf_counter()
    out = thunk()
    return out, (time.process_time() - cpu, time.perf_counter() - wall)


def _remembering(model: embeddings.Model) -> embeddings.Model:
    """The model, each text's vector computed once (a query is asked again at each weight)."""
    seen: dict[str, Any] = {}

    def embed(texts: list[str]) -> Any:
        new = [t for t in dict.fromkeys(texts) if t not in seen]
        if new:
            seen.update(zip(new, model.vectors(new), strict=True))
        return [seen[t] for t in texts]

    return embeddings.Model(model.name, embed, model.words, model.weights)


def run(half: str, models: list[str], weights: list[float]) -> dict[str, Any]:
    trees: dict[str, Tree] = {name: tree_of(corpus(name)) for name in SETS}
    asked = {name: [r for r in requests(name) if r.half == half] for name in SETS}
    prompts = boundary()
    trees["boundary"] = tree_of(prompts)
    rows: list[dict[str, Any]] = []
    costs: dict[str, Cost] = {}
    for name in ["words", *models]:
        model: embeddings.Model | None = None
        vectors: dict[str, Any] = {}
        if name != "words":
            loaded, load = _timed(lambda name=name: embeddings.load(name))
            model = _remembering(loaded)
            for set_name, tree in trees.items():
                index = Index(tree, (model, 0.0))
                index.cosines("warm up")  # the commands' vectors (kept on disk by a slow model)
                vectors[set_name] = index.vectors
                if set_name == "crowded":
                    meanings = [meaning(path, cmd) for path, cmd in index.docs]
                    _, cold = _timed(lambda m=loaded, texts=meanings: m.vectors(texts))
            texts = [r.text for r in asked["crowded"]]
            _, warm = _timed(lambda model=model, texts=texts: [model.vectors([t]) for t in texts])
            costs[name] = Cost(load, cold, (warm[0] / len(texts), warm[1] / len(texts)))
        for weight in [0.0] if model is None else weights:
            row: dict[str, Any] = {"model": name, "weight": weight}
            indexes = {}
            for set_name, tree in trees.items():
                index = Index(tree, None if model is None else (model, weight))
                if model is None:
                    index.semantic = None  # words alone, whatever the environment configures
                else:
                    index.vectors = vectors[set_name]
                indexes[set_name] = index
            for set_name in SETS:
                engine = Judged(indexes[set_name])
                answerable = score(engine, [r for r in asked[set_name] if r.expected]).row()
                paraphrase = score(engine, [r for r in asked[set_name] if r.kind == "paraphrase"]).row()
                refusing = score(engine, [r for r in asked[set_name] if not r.expected]).row()
                row[set_name] = {
                    "recall@1": answerable["recall@1"],
                    "recall@5": answerable["recall@5"],
                    "paraphrase recall@5": paraphrase["recall@5"],
                    "wrongly declined": answerable["wrongly declined"],
                    "rightly declined": refusing["rightly declined"],
                }
            ranks = [quality.rank_of(indexes["boundary"], p, needed[0]) for p, needed in prompts.tasks]
            row["boundary"] = quality.metrics(ranks)
            rows.append(row)
            print(row, flush=True)
    return {"half": half, "rows": rows, "costs": costs}


def report(found: dict[str, Any]) -> list[str]:
    lines = [
        f"Half: {found['half']}",
        "",
        "| model | weight | set | R@1 | R@5 | paraphrase R@5 | wrongly declined | rightly declined |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in found["rows"]:
        for set_name in SETS:
            c = row[set_name]
            lines.append(
                f"| {row['model']} | {row['weight']} | {set_name} | {c['recall@1']:.2f} | {c['recall@5']:.2f}"
                f" | {c['paraphrase recall@5']:.2f} | {c['wrongly declined']:.0%} | "
                f"{c['rightly declined']:.0%} |"
            )
    lines += [
        "",
        "| model | weight | Boundary R@1 | R@5 | MRR | holds (R@1 >= .85, R@5 >= .97, MRR >= .90) |",
        "|---|---|---|---|---|---|",
    ]
    for row in found["rows"]:
        b = row["boundary"]
        holds = all(b[k] >= least for k, least in quality.TARGETS.items())
        lines.append(
            f"| {row['model']} | {row['weight']} | {b['recall@1']:.3f} | {b['recall@5']:.3f} | "
            f"{b['mrr']:.3f} | {'yes' if holds else 'no'} |"
        )
    lines += [
        "",
        "| model | load (CPU / wall s) | crowded tree's 500 commands, cold | one query, warm (ms) |",
        "|---|---|---|---|",
    ]
    for name, cost in found["costs"].items():
        lines.append(
            f"| {name} | {cost.load[0]:.2f} / {cost.load[1]:.2f} | {cost.tree[0]:.2f} / {cost.tree[1]:.2f}"
            f" | {cost.query[0] * 1000:.1f} / {cost.query[1] * 1000:.1f} |"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.models")
    parser.add_argument("--half", choices=["tune", "held_out"], default="tune")
    parser.add_argument("--models", default="wordllama,minilm")
    parser.add_argument("--weights", default="0,0.3,0.5")
    args = parser.parse_args()
    found = run(args.half, args.models.split(","), [float(w) for w in args.weights.split(",")])
    print("\n".join(report(found)))


if __name__ == "__main__":
    main()
