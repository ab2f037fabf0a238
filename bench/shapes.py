"""Option shapes: of every option row of every command's help (as the runtime shows it, within its budget), how many
show a bare `JSON` placeholder, i.e. neither a type, choices nor a shape, and how many of those come from a property
whose schema says nothing of its value (`{}`, perhaps with a description), the only ones allowed to (issue 28); and
how many options have choices in their schema (`enum`, `const`, constants in `anyOf`/`oneOf`, their items') that
their row and the lines under it do not show.

`python -m bench.shapes` prints the table."""

from __future__ import annotations

import json
import re
from typing import Any

from mcp_cli.engine import help as helptext
from mcp_cli.engine.schema import _Schema
from mcp_cli.tree import Command, Param

from . import mark
from .corpora import Corpus, boundary, github, progressive
from .economy import tree_of

_SAID = {"description", "title", "default", "examples", "nullable"}  # what says nothing of a value's type
_SHAPED = re.compile(r"JSON (\{|\[|object)|each a JSON|one of|text or JSON|repeatable")  # a shape, choices, a list


def _row(text: str, flag: str) -> tuple[str, list[str]]:
    """An option's row in a command's help and the lines under it."""
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith(f"  {flag} ") or line == f"  {flag}")
    under = []
    for line in lines[at + 1 :]:
        if not line.startswith(" " * helptext.DETAIL):
            break
        under.append(line)
    return lines[at], under


def bare(p: Param, text: str) -> bool:
    """Whether an option's row shows its value as nothing but a `JSON` placeholder."""
    if helptext.metavar(p) != "JSON":
        return False
    row, under = _row(text, helptext._invocation(p, long_only=False).split(" ")[0].rstrip(","))
    return not under and not _SHAPED.search(row.split("JSON", 1)[1])


def _property(cmd: Command, p: Param) -> dict[str, Any]:
    doc = _Schema(cmd.schema or {})
    node = doc.resolve(cmd.schema)
    for part in p.name.split("."):
        node = doc.resolve((node.get("properties") or {}).get(part, {}))
    return node


def says_nothing(cmd: Command, p: Param) -> bool:
    """Whether the option's property schema says nothing of its value."""
    return not set(_property(cmd, p)) - _SAID


def _constants(node: object) -> list[Any]:
    """The constants a schema lists (`enum`, `const`, an `anyOf`/`oneOf` of them), its items' too."""
    if not isinstance(node, dict):
        return []
    found = list(node["enum"]) if isinstance(node.get("enum"), list) else []
    found += [node["const"]] if "const" in node else []
    for key in ("anyOf", "oneOf"):
        found += [v for member in node.get(key) or [] for v in _constants(member)]
    return found + _constants(node.get("items"))


def hidden_choices(cmd: Command, p: Param, text: str) -> bool:
    """Whether the option's schema lists choices that its help row (and the lines under it) does not show."""
    values = [v for v in _constants(_property(cmd, p)) if v is not None]
    row, under = _row(text, helptext._invocation(p, long_only=False).split(" ")[0].rstrip(","))
    shown = " ".join([row, *under])
    return any((v if isinstance(v, str) else json.dumps(v)) not in shown for v in values)


def run(corpus: Corpus) -> dict[str, Any]:
    tree = tree_of(corpus)
    budget = tree.settings.help_budget // 2  # as the runtime gives a command's help
    rows = shapeless = empty = hidden = 0
    examples: list[str] = []
    for path, node in tree.walk():
        if not isinstance(node, Command) or node.schema is None:
            continue
        text = helptext.command_help(" ".join(["tools", *path]), node, budget)
        for p in helptext._options(node):
            rows += 1
            hidden += hidden_choices(node, p, text)
            if bare(p, text):
                shapeless += 1
                if says_nothing(node, p):
                    empty += 1
                elif len(examples) < 5:
                    examples.append(f"{'/'.join(path)} {p.flags[0]}")
    return {
        "corpus": corpus.name,
        "rows": rows,
        "bare": shapeless,
        "empty": empty,
        "examples": examples,
        "hidden": hidden,
    }


# measured the same way at 1933145: (bare placeholders whose schema says something, options with choices not shown)
BEFORE = {"boundary": (0, 0), "github": (3, 8), "progressivemcpbench": (16, 0)}


def table(results: list[dict[str, Any]]) -> list[str]:
    lines = [
        "| corpus | option rows | bare JSON placeholder | of which the schema says nothing | others (before) | "
        "choices in the schema not shown (before) |",
        "|---|---|---|---|---|---|",
    ]
    for r in results:
        before = BEFORE.get(r["corpus"], ("-", "-"))
        lines.append(
            f"| {r['corpus']} | {r['rows']:,} | {r['bare']} | {r['empty']} | {r['bare'] - r['empty']} "
            f"({before[0]}) | {r['hidden']} ({before[1]}) |"
        )
    return lines


def report(corpora: list[Corpus]) -> tuple[list[str], list[str]]:
    """(markdown lines, target lines): the table, and the target that only options whose schema says nothing show a
    bare placeholder."""
    results = [run(c) for c in corpora]
    lines = table(results)
    lines += [f"- {r['corpus']}: {', '.join(f'`{e}`' for e in r['examples'])}" for r in results if r["examples"]]
    others, hidden = sum(r["bare"] - r["empty"] for r in results), sum(r["hidden"] for r in results)
    return lines, [
        f"- option rows with a bare JSON placeholder whose schema says something: {others}, with choices "
        f"not shown: {hidden} -- {mark(others == hidden == 0)}"
    ]


def main() -> None:
    print("\n".join(report([boundary(), github(), progressive()])[0]))


if __name__ == "__main__":
    main()
