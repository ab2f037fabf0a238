"""Search on fresh requests (issue 38): sets written blind, from the tool lists alone (bench/data/fresh/README.md).

For each set (GitHub's 117 tools; the crowded 70-server config) and each half (`tune`, which tuning may look at, and
`held_out`, which it may not), by kind of request: Recall@1 and @5 of the answerable requests (a hit is any of the
request's expected tools), the share of answerable requests `search` declines ("no command fits": a wrong refusal),
and the share of unanswerable ones it declines (a right one). Beside it, the baseline: plain BM25 (rank-bm25's
Okapi) over each tool's name and description, with no other reading of the words.

A second set (`--set second`, bench/data/fresh2: GitHub's tools, the crowded config and ProgressiveMCPBench's 15
servers) was written by another blind helper after the search's last change and measured whole, once; published, it
became tuning material. A third (`--set third`, bench/data/fresh3: the same three and Boundary's 150 tools) was written
by a third blind helper and measured whole, once; published, it too became tuning material, and a fourth (`--set
fourth`, bench/data/fresh4, the same four lists, a fourth blind helper) was measured once after the change it led to.
A fifth (`--set fifth`, bench/data/fresh5) and a sixth (`--set sixth`, bench/data/fresh6), each by another blind
helper, were written after the last search change and measured once each, as they came out.

`python -m bench.fresh [--set first|second|third|fourth|fifth|sixth] [--half tune|held_out|all] [--misses]`.
"""

from __future__ import annotations

import argparse
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp_cli.search.ranking import Index
from mcp_cli.tree import Command

from .corpora import Corpus, boundary, github, progressive
from .crowded import crowded
from .economy import tree_of

FRESH = Path(__file__).resolve().parent / "data" / "fresh"
SETS = {
    "first": (FRESH, ("github", "crowded")),
    "second": (FRESH.with_name("fresh2"), ("github", "crowded", "progressive")),
    "third": (FRESH.with_name("fresh3"), ("github", "crowded", "progressive", "boundary")),
    "fourth": (FRESH.with_name("fresh4"), ("github", "crowded", "progressive", "boundary")),
    "fifth": (FRESH.with_name("fresh5"), ("github", "crowded", "progressive", "boundary")),
    "sixth": (FRESH.with_name("fresh6"), ("github", "crowded", "progressive", "boundary")),
    "seventh": (FRESH.with_name("fresh7"), ("github", "crowded", "progressive", "boundary")),
    "eighth": (FRESH.with_name("fresh8"), ("github", "crowded", "progressive", "boundary")),
    "ninth": (FRESH.with_name("fresh9"), ("github", "crowded", "progressive", "boundary")),
}
# sets measured once and published: tuning may read their misses now
SPENT = {"second", "third", "fourth", "fifth", "sixth", "seventh", "eighth"}
DEPTH = 5
KINDS = ("plain", "paraphrase", "values", "typo", "unanswerable")
TARGETS = {
    "recall@1": 0.75,
    "recall@5": 0.90,
    "paraphrase recall@5": 0.80,
    "wrongly declined": 0.02,
    "rightly declined": 0.85,
}


@dataclass
class Request:
    id: str
    text: str
    kind: str
    expected: list[tuple[str, str]]
    half: str


def requests(name: str, folder: Path = FRESH) -> list[Request]:
    """A set's requests; a request of the second set, which has no halves, is held out."""
    rows = json.loads((folder / f"{name}.json").read_text())
    return [
        Request(
            r["id"], r["request"], r["kind"], [tuple(e.split(" ", 1)) for e in r["expected"]], r.get("half", "held_out")
        )
        for r in rows
    ]


def corpus(name: str) -> Corpus:
    return {"github": github, "crowded": crowded, "progressive": progressive, "boundary": boundary}[name]()


def _words(text: str) -> list[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text)
    return re.findall(r"[^\W_]+", spaced.lower())


class Plain:
    """The baseline: Okapi BM25 over each tool's name and description."""

    def __init__(self, source: Corpus) -> None:
        from rank_bm25 import BM25Okapi

        self.tools = [(s, t["name"]) for s, ts in source.servers for t in ts]
        docs = [_words(f"{t['name']} {t.get('description') or ''}") for _, ts in source.servers for t in ts]
        self.bm25 = BM25Okapi(docs)

    def ranked(self, text: str) -> list[tuple[str, str]]:
        scores = self.bm25.get_scores(_words(text))
        order = sorted(range(len(self.tools)), key=lambda i: -scores[i])
        return [self.tools[i] for i in order[:DEPTH] if scores[i] > 0]


class Ours:
    """mcp-cli's search over the tree made of the corpus, as `search` answers: with its default embedding model
    (WordLlama), or by words alone (`MCP_CLI_EMBEDDINGS=none`)."""

    def __init__(self, source: Corpus, model: bool = True) -> None:
        self.index = Index(tree_of(source))
        if not model:
            self.index.semantic = None

    def ranked(self, text: str) -> list[tuple[str, str]]:
        return [_tool(c) for _, _, c in self.index.search(text, DEPTH)]

    def declines(self, text: str) -> bool:
        return self.index.misses(text, self.index.search(text))


def _tool(cmd: Command) -> tuple[str, str]:
    return str(cmd.handler.server), str(cmd.handler.tool)


@dataclass
class Score:
    found1: int = 0
    found5: int = 0
    answerable: int = 0
    declined: int = 0  # of the answerable
    refused: int = 0  # of the unanswerable: declined
    unanswerable: int = 0
    misses: list[dict[str, Any]] = field(default_factory=list)

    def row(self) -> dict[str, float | int]:
        n, u = self.answerable or 1, self.unanswerable or 1
        return {
            "n": self.answerable + self.unanswerable,
            "recall@1": self.found1 / n,
            "recall@5": self.found5 / n,
            "wrongly declined": self.declined / n if self.answerable else 0.0,
            "rightly declined": self.refused / u if self.unanswerable else 0.0,
        }


def score(engine: Ours | Plain, asked: list[Request]) -> Score:
    out = Score()
    for r in asked:
        declines = engine.declines(r.text) if isinstance(engine, Ours) else False
        if not r.expected:
            out.unanswerable += 1
            out.refused += declines
            if not declines and isinstance(engine, Ours):
                out.misses.append({"id": r.id, "request": r.text, "answered": engine.ranked(r.text)[:1]})
            continue
        ranked = engine.ranked(r.text)
        out.answerable += 1
        out.found1 += bool(ranked[:1]) and ranked[0] in r.expected
        out.found5 += any(t in r.expected for t in ranked[:DEPTH])
        out.declined += declines
        if isinstance(engine, Ours) and (declines or not ranked[:1] or ranked[0] not in r.expected):
            out.misses.append(
                {"id": r.id, "request": r.text, "expected": r.expected, "top": ranked[:3], "declined": declines}
            )
    return out


def run(half: str = "held_out", which: str = "first") -> dict[str, Any]:
    """Per set, per kind (and all answerable together): ours and the baseline."""
    found: dict[str, Any] = {}
    folder, names = SETS[which]
    for name in names:
        source = corpus(name)
        ours, words, plain = Ours(source), Ours(source, model=False), Plain(source)
        asked = [r for r in requests(name, folder) if half == "all" or r.half == half]
        table: dict[str, Any] = {}
        for kind in (*KINDS, "answerable"):
            chosen = [r for r in asked if (r.kind == kind if kind != "answerable" else r.expected)]
            mine = score(ours, chosen)
            table[kind] = {
                "ours": mine.row(),
                "words": score(words, chosen).row(),
                "bm25": score(plain, chosen).row(),
                "misses": mine.misses,
            }
        found[name] = table
    return found


def report(found: dict[str, Any], half: str) -> list[str]:
    lines = [
        f"Half: {half}",
        "",
        "| set | requests | n | ours R@1 / R@5 | words only R@1 / R@5 | BM25 R@1 / R@5 | answerable declined "
        "(words only) | unanswerable declined (words only) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, table in found.items():
        for kind, cell in table.items():
            o, w, b = cell["ours"], cell["words"], cell["bm25"]
            if kind == "unanswerable":
                lines.append(
                    f"| {name} | {kind} | {o['n']} | | | | | {o['rightly declined']:.0%} "
                    f"({w['rightly declined']:.0%}) |"
                )
                continue
            lines.append(
                f"| {name} | {kind} | {o['n']} | {o['recall@1']:.2f} / {o['recall@5']:.2f} | "
                f"{w['recall@1']:.2f} / {w['recall@5']:.2f} | {b['recall@1']:.2f} / {b['recall@5']:.2f} | "
                f"{o['wrongly declined']:.0%} ({w['wrongly declined']:.0%}) | |"
            )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.fresh")
    parser.add_argument("--set", dest="which", choices=sorted(SETS), default="first")
    parser.add_argument("--half", choices=["tune", "held_out", "all"], default="held_out")
    parser.add_argument(
        "--misses",
        action="store_true",
        help="print each miss (of a tune half, or of a spent set: a held-out one is not read)",
    )
    args = parser.parse_args()
    found = run(args.half, args.which)
    print(f"Set: {args.which}")
    print("\n".join(report(found, args.half)))
    if args.misses and (args.half == "tune" or args.which in SPENT):
        for name, table in found.items():
            for kind in KINDS:
                for miss in table[kind]["misses"]:
                    print(name, kind, json.dumps(miss, ensure_ascii=False))


if __name__ == "__main__":
    main()
