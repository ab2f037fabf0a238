"""The root, read blind (issue 40): for each server of a wrapped config, can a reader who sees only the root
listing say which row leads to it?

For each server one of its tools is drawn (fixed seed) and written as a need, in the tool's own words (the first
sentence of its description, or its name's words where it has none), without the server's name or key. A helper
session that has not seen the code gets the root listing (`--help` of the tree `mcp-cli serve` builds) and the
needs, and answers, for each need, the row it would open. `score` reads its answers against the key.

    python -m bench.rootread material TREE      # writes bench/data/rootread/TREE.json (needs) and TREE.key.json
    python -m bench.rootread listing TREE       # the root listing as the reader sees it now
    python -m bench.rootread score TREE ANSWERS # ANSWERS: JSON {need id: row name}
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

import anyio

from mcp_cli.engine.runtime import Runtime
from mcp_cli.handlers import kinds
from mcp_cli.text import first_sentence, words

from .corpora import SEED, boundary, progressive
from .crowded import crowded
from .economy import tree_of

DATA = Path(__file__).resolve().parent / "data" / "rootread"
TREES = {"crowded": crowded, "progressive": progressive, "boundary": boundary}


def listing(tree: str) -> str:
    built = tree_of(TREES[tree]())
    return anyio.run(Runtime(built, kinds(built)).call_tool, {"command": "--help"}).text()


def material(tree: str) -> None:
    rng = random.Random(SEED)
    needs, key = [], {}
    for i, (server, tools) in enumerate(TREES[tree]().servers, 1):
        tool = rng.choice(tools)
        text = first_sentence(tool.get("description") or "", 200) or " ".join(words(tool["name"])).capitalize()
        need_id = f"n{i:02d}"
        needs.append({"id": need_id, "need": text})
        key[need_id] = server
    rng.shuffle(needs)
    DATA.mkdir(parents=True, exist_ok=True)
    (DATA / f"{tree}.json").write_text(json.dumps(needs, ensure_ascii=False, indent=1) + "\n")
    (DATA / f"{tree}.key.json").write_text(json.dumps(key, indent=1) + "\n")


def score(tree: str, answers: Path) -> None:
    key = json.loads((DATA / f"{tree}.key.json").read_text())
    said = json.loads(answers.read_text())
    wrong = {i: (said.get(i), s) for i, s in key.items() if said.get(i) != s}
    print(
        f"{tree}: {len(key) - len(wrong)} of {len(key)} servers found from the root listing "
        f"({(len(key) - len(wrong)) / len(key):.0%})"
    )
    for i, (got, right) in sorted(wrong.items()):
        print(f"  {i}: said {got}, is {right}")


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.rootread")
    sub = parser.add_subparsers(dest="verb", required=True)
    for verb in ("material", "listing", "score"):
        p = sub.add_parser(verb)
        p.add_argument("tree", choices=sorted(TREES))
        if verb == "score":
            p.add_argument("answers", type=Path)
    args = parser.parse_args()
    if args.verb == "material":
        material(args.tree)
    elif args.verb == "listing":
        print(listing(args.tree))
    else:
        score(args.tree, args.answers)


if __name__ == "__main__":
    main()
