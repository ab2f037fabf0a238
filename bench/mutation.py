"""Mutation testing: how many small semantic changes to a module its own fast tests notice.

`python -m bench.mutation` runs every module of TESTS; `--module help` one (repeatable); `--tests FILE` other
tests than TESTS' (repeatable); `-j 2` workers; `--list` prints the mutants without running them; `--write`
rewrites the rows of the modules run in bench/MUTATION.md (the other rows, each dated by its run, and its `## History`
section are kept); `--survivors` runs only the mutants a module's row lists as survivors (after tests were added)
and counts those now killed, or now listed in EQUIVALENT, into its row.

A mutant is one change at one place of a module's syntax tree (`ast`), the module then written back with
`ast.unparse`:

- a comparison flipped (`==`/`!=`, `<`/`<=`, `>`/`>=`, `in`/`not in`, `is`/`is not`), `and`/`or` swapped, a `not`
  or a unary minus dropped, a condition negated (`if`, `while`, `x if c else y`, a comprehension's `if`; not one
  that is a comparison or a `not`, whose flip is already a mutant);
- arithmetic swapped: `+`/`-`, `*`/`/`, `//` to `/`, `|`/`&`;
- a constant changed: an integer n to n + 1, a float x to x + 1, `True`/`False`, a string s to s + "X" (not
  docstrings, f-string text, annotations, prose over 40 characters, or the messages of `raise` and `log.*` calls:
  those say things, and tests check what they say by words, not letter by letter);
- a value dropped: `return X` to `return None`;
- a statement dropped: a call on its own line, a `raise`, an `x += ...`, an `x = f(x)` that rewrites a name;
  `break`/`continue` swapped.

Each mutant runs `python -m pytest -x -q -n 0` (one process, no pytest-xdist workers) over its module's tests
(TESTS; without tests/conftest.py when they pass without it, as in-process case tests do) in a private copy of the
checkout (the working tree is never written; a copy per worker, so subprocesses started by a test import the mutant
too). A failing test or a run over the time limit
kills it. EQUIVALENT lists mutants that change nothing a caller can
observe, each with the reason; they are counted apart, and the kill rate is killed / (mutants - equivalent).

Why not mutmut or cosmic-ray (neither was tried on this tree; these are what their designs imply): mutmut 3 chooses
each mutant's tests from a first run of the whole suite (minutes of real servers here), by which tests call the
mutated function in-process, with one test selection for the whole run, not one per module; cosmic-ray takes a
test command per session, but applies each mutant to the working tree itself and makes a mutant for every
alternative operator at each place (3 to 5 per comparison). This runner has no dependency, runs each module against
its own table row, never writes the working tree, and names mutants by function and change (not line), so that
EQUIVALENT survives edits elsewhere in a module.
"""

from __future__ import annotations

import argparse
import ast
import concurrent.futures
import datetime
import functools
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# module -> its own fast tests (in-process; no server processes). Moving a module means changing its line here.
TESTS: dict[str, list[str]] = {
    "mcp_cli/engine/parser.py": ["tests/test_parser_cases.py"],
    "mcp_cli/surfaces/scopes.py": ["tests/test_scopes_cases.py"],
    "mcp_cli/engine/help.py": ["tests/test_help_cases.py"],
    "mcp_cli/search/ranking.py": ["tests/test_search_cases.py"],
    "mcp_cli/engine/schema.py": ["tests/test_schema_cases.py"],
    "mcp_cli/surfaces/http_guard.py": ["tests/test_http_guard_cases.py"],
    "mcp_cli/engine/answers.py": ["tests/test_answers_cases.py"],
    "mcp_cli/engine/builtins.py": ["tests/test_builtins_cases.py"],
}
# What the same run gave before those tests, with each module's end-to-end tests (bench/MUTATION.md, History):
# parser: test_runtime, test_tree, test_skill_scripts; scopes: test_scopes; help: test_help; search: test_search,
# test_context; schema: test_wrap_schema; http_guard: test_http_security.

# module -> {mutant name: why no test can tell it from the original}
EQUIVALENT: dict[str, dict[str, str]] = {
    "mcp_cli/engine/parser.py": {
        "_Parser.exit: 0 -> 1": "the status is never used: exit raises UsageError",
        "_add: '...' -> '...X'": "argparse.REMAINDER is '...' itself: nargs '...' means the same either way",
        "parse: 1 -> 2": "the name before `=`: split('=', 1)[0] is split('=', 2)[0]",
    },
    "mcp_cli/surfaces/scopes.py": {
        "prune.covers: 1 -> 2 #2": "prefixes names[:i] up to len + 1: the last is names itself again",
        "prune.part: True -> False": "zip(strict=...) runs only after the lengths were found equal",
    },
    "mcp_cli/engine/help.py": {
        "lead: 10000 -> 10001": "a summary clipped at 10,000 or 10,001 characters leads the same way (both are cut "
        "to 200 or matched whole against the first sentence)",
        "lead: 1 -> 2": "the first paragraph: split('\\n\\n', 1)[0] is split('\\n\\n', 2)[0]",
        "lead: 0 -> 1 #2": "the pattern always matches: the first sentence's words are the text's first words",
        "group_help: 10 -> 11": "10**9 or 11**9 characters: no budget for listings at all either way",
        "group_help: 9 -> 10": "10**9 or 10**10 characters: no budget for listings at all either way",
        "group_help: 10 -> 11 #2": "10**9 or 11**9 characters: no budget for listings at all either way",
        "group_help: 9 -> 10 #2": "10**9 or 10**10 characters: no budget for listings at all either way",
        "group_help: break -> continue": "once the listings fit, every later turn of the loop finds them fitting",
        "group_help: 0 -> 1 #3": "a listing with a budget of 0 or 1 character: no listing fits either",
        "group_help: 0 < len(commands) <= SMALL_GROUP -> 0 <= len(commands) <= SMALL_GROUP": "a group without "
        "commands has no Commands listing to carry usage lines",
        "_invocation: ', ' -> ', X' #2": "long_only: one flag, so nothing is joined",
        "command_help: 10 -> 11": "10**9 or 11**9 characters: no budget either way",
        "command_help: 9 -> 10": "10**9 or 10**10 characters: no budget either way",
        "_listing: True -> False": "zip(strict=...) of the nodes and the rows made from them, one each",
        "_command_help: True -> False": "zip(strict=...) of the params and the rows made from them, one each",
    },
    "mcp_cli/search/ranking.py": {
        "_phrases: ' ' -> ' X'": "every phrase of the lexicon reads as one word: nothing is joined",
        "Index._mixed: 1.0 -> 2.0": "the best of no scores: then there is no score to divide by it",
        "Index._mixed: 1.0 -> 2.0 #2": "the closest cosine when all are 0: then no command is mixed in",
        "Index.fits: '' -> 'X'": "the rarity of a term no command has: '' and 'X' alike (a term is lower-case)",
        "Index.misses: self.fits(query, hits[0][1]) < WEAK -> self.fits(query, hits[0][1]) <= WEAK": "a fit is a "
        "ratio of logarithms, less whole costs: never exactly WEAK",
        "Index.fits: True -> False": "zip(strict=...) of a query's words and which of them are things: read() makes "
        "both from the same words, one each",
        "Index.no_fit: True -> False": "the same zip of a query's words and things, in the miss sentence",
        "Index.search: 1.0 -> 2.0": "the score of a command named outright when no word scored: then only named "
        "commands are ranked, all at that score, and callers read scores only against each other",
    },
    "mcp_cli/engine/schema.py": {
        "_Schema.__init__: 'urn:mcp-cli:schema' -> 'urn:mcp-cli:schemaX'": "the name of a schema without $id: "
        "references within it are relative ('#/...') and resolve under any name",
        "_flags.claim: return False -> return None": "read only as true or false",
        "params.visit: 1 -> 2": "with MAX_DEPTH 2 the walk goes down once: depth + 1 or + 2, no deeper either way",
        "params: True -> False #2": "zip(strict=...) of three lists made from the same one",
        "_convert: 'array' in kinds and isinstance(value, list) -> 'array' in kinds or isinstance(value, list)": "an "
        "option of a list is repeatable (argparse gives it a list), any other one value: both hold or neither",
        "_convert: kind in ('object', 'any', 'union') and isinstance(value, str) -> kind in ('object', 'any', "
        "'union') or isinstance(value, str)": "the other options' text values are strings, which _scalar gives back as "
        "they are",
        "_scalar: 'array' -> 'arrayX'": "a union that takes a list reaches _scalar only without it (_convert reads a "
        "list itself)",
        "validate: '' -> 'X'": "a required property's name is always quoted in the message: never taken",
        "validate: 'an option' -> 'an optionX'": "a required property's name is always quoted in the message: never "
        "taken",
    },
    "mcp_cli/engine/answers.py": {
        "asked: 0 -> 1 #3": "the first token after those taken in front is never a reserved option: the scan may start "
        "after it",
        "tabular: 0 -> 1": "every row must have the keys of the first; then every row has those of the second too",
        "table: 0 -> 1": "the header from the second row's keys: a table's rows have the same keys in one order",
        "_indent: ' ' -> ' X'": "no line of JSON starts with spaces and then an X",
        "_indent: 0 -> 1": "the text is stripped first: its first newline is never at 0",
        "_indent: at < 0 -> at <= 0": "the text is stripped first: its first newline is never at 0",
        "_indent: 0 -> 1 #2": "a newline's place after the first character of a stripped text: never 0",
        "_indent: at >= 0 -> at > 0": "a newline's place after the first character of a stripped text: never 0",
        "_indent: 0 -> 1 #3": "a newline found after another one: never at 0",
        "_indent: end >= 0 -> end > 0": "a newline found after another one: never at 0",
        "Body._rendered: 1 -> 2": "how many renderings are kept (two or three): only how often a part is rendered "
        "again, never what it is",
        "Body._rendered: len(self._last) > 1 -> len(self._last) >= 1": "how many renderings are kept (two or one): "
        "only how often a part is rendered again, never what it is",
        "_sizer: 'c_make_encoder' -> 'c_make_encoderX'": "without the C encoder json.dumps measures each item, the "
        "same lengths",
        "_sizer: make is None -> make is not None": "json.dumps in place of the C encoder: the same lengths",
        "_sizer: False -> True": "json.dumps is the fallback of a Python without json's C encoder (CPython has it)",
        "_sizer: return lambda value: len(json.dumps(value, ensure_ascii=False)) -> return None": "the fallback of a "
        "Python without json's C encoder (CPython has it)",
        "_sizer: False -> True #2": "sort_keys: keys sorted or not, the same characters",
        "_sizer: False -> True #3": "skipkeys: the items measured are JSON values, whose keys are all strings",
        "_sizer: 0 -> 1": "the indentation level of a compact encoder (no indent): not read",
        "finer: 0 -> 1": "the largest of no units: a body always has one (a text's lines, an array's items)",
        "finer: 0 -> 1 #3": "the largest of no units: a body always has one (a text's lines, an array's items)",
        "end_of: 4 -> 5": "how far the scan for a part's end goes: a rendering over 4 characters a token never fits, "
        "so looking further finds no more",
        "end_of: 2 -> 3": "how far the scan goes for JSON: its compact forms are not a third of it; no more is found",
        "end_of: 1 -> 2": "how far the scan goes for lines: over 4 characters a token, no more is found",
        "end_of: upto[-1] + sizes[hi] -> upto[-1] - sizes[hi]": "the scan then goes to the end: the aims, made from "
        "the same sizes, find the same end",
        "end_of: start + 1 -> start - 1 #2": "every unit is within the scan's reach (finer made each smaller than "
        "the room), so the scan always takes one",
        "end_of: 0 -> 1 #2": "the size of the longest part that fits, before one did: 1 character more in an aim "
        "over thousands, the same end",
        "end_of: 0 -> 1 #5": "the tokens of the shortest part that did not fit are read only once one did not, and "
        "then set",
        "end_of: lefts[-2] // 2 -> lefts[-2] / 2": "when two renderings did not halve the units left: half a unit "
        "later, the same end in as few renderings",
        "end_of: hi - lo > lefts[-2] // 2 -> hi - lo >= lefts[-2] // 2": "when two renderings did not halve the units "
        "left: at exactly half, the same end in as few renderings",
        "end_of: 1 -> 2 #8": "a halving's middle rounded up once more: between the bounds still, the same end",
        "end_of: lo + hi + 1 -> lo + hi - 1": "a halving's middle rounded down: a halving comes only with more than a "
        "few units left, so it stays above the lower bound, and the search ends at the same place",
        "end_of: 1 -> 2 #9": "the tokens between the parts that fit and did not, at least 2 rather than 1: an aim a "
        "unit off, the same end",
        "end_of: 3 -> 4": "the first aim at 4 characters a token rather than 3: the next aims are from the tokens "
        "measured, the same end in as few renderings",
        "end_of: 0 -> 1 #6": "the tokens of the part that did not fit for its size: both 0 until one did not fit, then "
        "both over 0",
        "end_of: hi - lo -> hi + lo #2": "halvings then come later or not at all: the aims find the same end in as "
        "few renderings",
        "end_of: 4 -> 5 #2": "a part within its tokens is within 4 characters a token of them (a token is at most 4 "
        "characters), and the scan tries no part longer",
        "end_of: len(text) <= 4 * limit -> len(text) < 4 * limit": "a part of exactly 4 characters a token is never "
        "tried: the scan counts a separator after its last unit",
        "end_of: 1 -> 2 #12": "the size of a part that fits, one unit short when it reaches the scan's end: an aim a "
        "unit off, the same end",
        "end_of: len(upto) - 1 -> len(upto) + 1": "a part never goes past the scan's end (finer made every unit fit "
        "the room, so the scan takes at least one): the index is never clipped",
        "end_of: 1 -> 2 #14": "the size of a part that did not fit, one unit short when it reaches the scan's end: an "
        "aim a unit off, the same end",
        "end_of: len(upto) - 1 -> len(upto) + 1 #2": "a part never goes past the scan's end (finer made every unit "
        "fit the room, so the scan takes at least one): the index is never clipped",
        "_fitted: 0 -> 1 #4": "the first part's text is read only over a million characters, far over any budget's "
        "room; under it its tokens, counted, are the size",
        "_fitted: 1 -> 2": "the characters of a first part: each unit's size is at least 1, and a part of one empty "
        "line is never all that fits",
        "_fitted: '' -> 'X' #2": "why the store did not keep the answer: read only when it did not, and then set",
        "_part: '' -> 'X'": "why an answer was not kept: read only for an answer cut and not kept, and fit passes it",
        "_answer: return result -> return None": "every call passes changed=True: the early return is never taken",
    },
    "mcp_cli/engine/builtins.py": {
        "Flow.is_json: True -> False": "a text flow not marked parsed is parsed again when asked again: the same value",
    },
    "mcp_cli/surfaces/http_guard.py": {
        "<module>: 'mcp_cli.access' -> 'mcp_cli.accessX'": "a key every reader takes from ACCESS, never spelled out",
        "Guard.wrap: ':*' -> ':*X' #2": "an origin pattern `http://h:*` in the exact list matches no real Origin",
        "_host_patterns: '' -> 'X'": "the port of a value without one: read only when it has one",
        "_host_patterns: '' -> 'X' #2": "the port of a value without one: read only when it has one",
        "_host_patterns: '[]' -> '[]X'": "the value is lower-cased first: no 'X' to strip",
    },
}

PROSE = 40  # strings longer than this are text for people, not values the code acts on
QUIET_CALLS = ("log", "logging", "warnings")  # `log.warning("...")`: messages, like those of `raise`


@dataclass
class Mutant:
    module: str
    index: int  # its place in the walk: the same module source gives the same numbers
    scope: str  # the function (or class, or <module>) it is in
    line: int
    before: str
    after: str
    name: str = ""  # `scope: before -> after`, with `#2`... when a function has the same change twice

    def label(self) -> str:
        return f"{Path(self.module).name}:{self.line} {self.name}"


def _clip(text: str, n: int = 90) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 3] + "..."


def _negate(test: ast.expr) -> ast.expr:
    return ast.UnaryOp(op=ast.Not(), operand=test)


_COMPARE = {
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}
_ARITH = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.Div,
    ast.Div: ast.Mult,
    ast.FloorDiv: ast.Div,
    ast.BitOr: ast.BitAnd,
    ast.BitAnd: ast.BitOr,
}


class Mutator(ast.NodeTransformer):
    """Walks a module offering each mutation in turn; applies the one numbered `target` (None: only lists them)."""

    def __init__(self, target: int | None = None) -> None:
        self.target = target
        self.found: list[tuple[str, int, str, str]] = []  # (scope, line, before, after)
        self.scope: list[str] = []
        self.quiet = 0  # > 0 inside a raise or a log call: its strings are messages

    def offer(self, node: ast.AST, new: ast.AST) -> ast.AST | None:
        self.found.append(
            (
                ".".join(self.scope) or "<module>",
                getattr(node, "lineno", 0),
                _clip(ast.unparse(node)),
                _clip(ast.unparse(new)),
            )
        )
        if len(self.found) - 1 == self.target:
            return ast.copy_location(new, node)
        return None

    # the walk: annotations, docstrings and TYPE_CHECKING blocks are left out

    def generic_visit(self, node: ast.AST) -> ast.AST:
        for field, old in ast.iter_fields(node):
            if field in ("annotation", "returns"):
                continue
            if isinstance(old, list):
                new_list = []
                for item in old:
                    if isinstance(item, ast.AST):
                        item = self.visit(item)
                        if item is None:
                            continue
                    new_list.append(item)
                old[:] = new_list
            elif isinstance(old, ast.AST):
                setattr(node, field, self.visit(old))
        return node

    def _scoped(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> ast.AST:
        self.scope.append(node.name)
        try:
            return self.generic_visit(node)
        finally:
            self.scope.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _scoped

    def visit_Expr(self, node: ast.Expr) -> ast.AST:
        if isinstance(node.value, ast.Constant):  # a docstring, or a string standing alone
            return node
        if isinstance(node.value, (ast.Call, ast.Await)):
            replaced = self.offer(node, ast.Pass())
            if replaced:
                return replaced
        return self.generic_visit(node)

    def visit_If(self, node: ast.If) -> ast.AST:
        if isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            return node
        return self._test(node)

    def _test(self, node: ast.If | ast.While | ast.IfExp) -> ast.AST:
        node = self.generic_visit(node)
        if not isinstance(node.test, ast.Compare) and not (
            isinstance(node.test, ast.UnaryOp) and isinstance(node.test.op, ast.Not)
        ):
            negated = type(node)(**{**dict(ast.iter_fields(node)), "test": _negate(node.test)})
            return self.offer(node, negated) or node
        return node

    visit_While = visit_IfExp = _test

    def visit_comprehension(self, node: ast.comprehension) -> ast.AST:
        node = self.generic_visit(node)
        for i, test in enumerate(node.ifs):
            if isinstance(test, ast.Compare) or (isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)):
                continue
            self.found.append(
                (
                    ".".join(self.scope) or "<module>",
                    test.lineno,
                    _clip(f"if {ast.unparse(test)}"),
                    _clip(f"if not ({ast.unparse(test)})"),
                )
            )
            if len(self.found) - 1 == self.target:
                node.ifs[i] = ast.copy_location(_negate(test), test)
        return node

    def visit_Raise(self, node: ast.Raise) -> ast.AST:
        replaced = self.offer(node, ast.Pass())
        if replaced:
            return replaced
        self.quiet += 1
        try:
            return self.generic_visit(node)
        finally:
            self.quiet -= 1

    def visit_Call(self, node: ast.Call) -> ast.AST:
        func = node.func
        quiet = isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in QUIET_CALLS
        self.quiet += quiet
        try:
            return self.generic_visit(node)
        finally:
            self.quiet -= quiet

    def visit_JoinedStr(self, node: ast.JoinedStr) -> ast.AST:
        node.values = [self.visit(v) if isinstance(v, ast.FormattedValue) else v for v in node.values]
        return node

    def visit_Return(self, node: ast.Return) -> ast.AST:
        node = self.generic_visit(node)
        if node.value is not None and not (isinstance(node.value, ast.Constant) and node.value.value is None):
            return self.offer(node, ast.Return(value=ast.Constant(None))) or node
        return node

    def visit_AugAssign(self, node: ast.AugAssign) -> ast.AST:
        return self.offer(node, ast.Pass()) or self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> ast.AST:
        names = {t.id for t in node.targets if isinstance(t, ast.Name)}
        used = {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)}
        if names & used:  # `value = value.lower()`: a rewrite, which dropping leaves the old value
            replaced = self.offer(node, ast.Pass())
            if replaced:
                return replaced
        return self.generic_visit(node)

    def visit_Break(self, node: ast.Break) -> ast.AST:
        return self.offer(node, ast.Continue()) or node

    def visit_Continue(self, node: ast.Continue) -> ast.AST:
        return self.offer(node, ast.Break()) or node

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        node = self.generic_visit(node)
        for i, op in enumerate(node.ops):
            ops = list(node.ops)
            ops[i] = _COMPARE[type(op)]()
            replaced = self.offer(node, ast.Compare(left=node.left, ops=ops, comparators=node.comparators))
            if replaced:
                return replaced
        return node

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.AST:
        node = self.generic_visit(node)
        other = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        return self.offer(node, ast.BoolOp(op=other, values=node.values)) or node

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:
        node = self.generic_visit(node)
        if isinstance(node.op, (ast.Not, ast.USub)):
            return self.offer(node, node.operand) or node
        return node

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        node = self.generic_visit(node)
        swap = _ARITH.get(type(node.op))
        if swap:
            return self.offer(node, ast.BinOp(left=node.left, op=swap(), right=node.right)) or node
        return node

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        value = node.value
        if isinstance(value, bool):
            new = not value
        elif isinstance(value, int):
            new = value + 1
        elif isinstance(value, float):
            new = value + 1.0
        elif isinstance(value, str) and not self.quiet and len(value) <= PROSE:
            new = value + "X"
        else:
            return node
        return self.offer(node, ast.Constant(new)) or node


def mutants(module: str, source: str) -> list[Mutant]:
    walker = Mutator()
    walker.visit(ast.parse(source))
    out, seen = [], {}
    for index, (scope, line, before, after) in enumerate(walker.found):
        name = f"{scope}: {before} -> {after}"
        seen[name] = seen.get(name, 0) + 1
        out.append(Mutant(module, index, scope, line, before, after, name + (f" #{seen[name]}" * (seen[name] > 1))))
    return out


def mutated(source: str, index: int | None) -> str:
    tree = Mutator(index).visit(ast.parse(source))
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def _copy(destination: Path) -> None:
    """The checkout's files (tracked and new, not ignored) into `destination`; node_modules linked, not copied."""
    listed = (
        subprocess.run(
            ["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True, check=True
        )
        .stdout.decode()
        .split("\0")
    )
    for name in filter(None, listed):
        source = ROOT / name
        if "node_modules" in Path(name).parts or not source.exists() and not source.is_symlink():
            continue
        target = destination / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target, follow_symlinks=False)
    modules = ROOT / "tests" / "node" / "node_modules"
    if modules.exists():
        (destination / "tests" / "node" / "node_modules").symlink_to(modules.resolve())


def _pytest(copy: Path, tests: list[str], timeout: float) -> tuple[str, float]:
    """('passed' | 'failed' | 'timeout', seconds) of the tests in `copy` (`tests` may lead with pytest options)."""
    env = {**os.environ, "PYTHONPATH": str(copy), "PYTHONDONTWRITEBYTECODE": "1"}
    argv = [sys.executable, "-m", "pytest", "-x", "-q", "-n", "0", "-p", "no:cacheprovider", "--no-header", *tests]
    start = time.monotonic()
    proc = subprocess.Popen(
        argv, cwd=copy, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    try:
        code = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # the test run and whatever it started
        proc.wait()
        return "timeout", time.monotonic() - start
    return ("passed" if code == 0 else "failed"), time.monotonic() - start


def _attempt(
    copies: queue.Queue[Path], module: str, source: str, tests: list[str], limit: float, m: Mutant | None
) -> tuple[Mutant | None, str, float]:
    """Run `tests` against mutant `m` (None: the module unmutated) in a free copy of the checkout."""
    copy = copies.get()
    try:
        (copy / module).write_text(mutated(source, None if m is None else m.index), encoding="utf-8")
        return (m, *_pytest(copy, tests, limit))
    finally:
        (copy / module).write_text(source, encoding="utf-8")
        copies.put(copy)


def run_module(
    module: str, tests: list[str], copies: queue.Queue[Path], jobs: int, snapshot: Path, only: set[str] | None = None
) -> dict:
    """Every mutant of `module` (as it was in `snapshot`, a copy of the checkout; `only`: those named) against
    `tests`: the counts (of the mutants run; `mutants` of all), the kill rate, the survivors."""
    source = (snapshot / module).read_text(encoding="utf-8")
    made, equivalent = mutants(module, source), EQUIVALENT.get(module, {})
    found = [m for m in made if only is None or m.name in only]
    # as `ast.unparse` writes it; without tests/conftest.py where they pass without it (in-process case tests): its
    # imports (the MCP SDK, bench) and its end-of-session daemon stop are most of a run's time
    _, outcome, took = _attempt(copies, module, source, ["--noconftest", *tests], 1800, None)
    if outcome == "passed":
        tests = ["--noconftest", *tests]
    else:
        _, outcome, took = _attempt(copies, module, source, tests, 1800, None)
    if outcome != "passed":
        sys.exit(f"{module}: its tests fail without a mutant ({outcome}): {' '.join(tests)}")
    limit = max(20.0, 4 * took)
    print(f"{module}: {len(found)} mutants, tests {' '.join(tests)} ({took:.1f} s unmutated)", flush=True)
    counts = {"killed": 0, "timeout": 0, "survived": 0, "equivalent": 0}
    survivors, told = [], set()  # told: listed as equivalent, yet a test told them apart
    attempt = functools.partial(_attempt, copies, module, source, tests, limit)
    start = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        for done, (m, outcome, _) in enumerate(pool.map(attempt, found), 1):
            assert m is not None
            if done % 50 == 0:
                print(f"  {done}/{len(found)} in {time.monotonic() - start:.0f} s", flush=True)
            if m.name in equivalent and outcome == "passed":
                counts["equivalent"] += 1
            elif outcome == "passed":
                counts["survived"] += 1
                survivors.append(m)
                print(f"  survived {m.label()}", flush=True)
            else:  # counted as killed even where EQUIVALENT lists it: a test tells it apart
                counts["killed" if outcome == "failed" else "timeout"] += 1
                if m.name in equivalent:
                    told.add(m.name)
                    print(f"  listed as equivalent but killed (take it off EQUIVALENT): {m.label()}", flush=True)
    for name in sorted(set(equivalent) - {m.name for m in made}):
        print(f"  listed as equivalent but no longer made (take it off EQUIVALENT): {name}", flush=True)
    live = len(found) - counts["equivalent"]
    rate = (counts["killed"] + counts["timeout"]) / live if live else 1.0
    print(f"{module}: {rate:.1%} killed ({counts})", flush=True)
    same = [m for m in made if m.name in equivalent and m.name not in told]
    return {
        "mutants": len(made),
        **counts,
        "rate": rate,
        "tests": tests,
        "survivors": survivors,
        "equivalents": same,
        "run": str(datetime.date.today()),
    }


def run(
    modules: list[str], jobs: int, tests: list[str] | None = None, only: dict[str, set[str]] | None = None
) -> dict[str, dict]:
    """Each module's mutants (`only`: those named, by module) against its tests (TESTS, or `tests` for all), `jobs` at
    once, each job in its own copy of the checkout."""
    with tempfile.TemporaryDirectory(prefix="mcp-cli-mutation-") as tmp:
        copies: queue.Queue[Path] = queue.Queue()
        for i in range(jobs):
            _copy(Path(tmp) / str(i))
            copies.put(Path(tmp) / str(i))
        snapshot = Path(tmp) / "0"  # the checkout as the run began: later edits change nothing of it
        return {
            module: run_module(module, tests or TESTS[module], copies, jobs, snapshot, (only or {}).get(module))
            for module in modules
        }


COUNTS = ("mutants", "killed", "timeout", "survived", "equivalent")


def _row(module: str, r: dict) -> dict:
    """A module's row of bench/MUTATION.md from its run, with its lines under Survivors and Equivalent mutants."""
    return {
        "module": module,
        "tests": ", ".join(Path(t).name for t in r["tests"] if t[:1] != "-"),
        "run": r["run"],
        **{k: r[k] for k in COUNTS},
        "survivors": [f"- `{m.label()}`" for m in r["survivors"]],
        "equivalents": [f"- `{m.label()}`: {EQUIVALENT[module][m.name]}" for m in r["equivalents"]],
    }


def previous(text: str) -> dict[str, dict]:
    """The rows of an earlier bench/MUTATION.md by module (as `_row` makes them), each with the date of its run."""
    date = re.search(r" on (\d{4}-\d\d-\d\d)", text)
    rows: dict[str, dict] = {}
    for line in text.split("## History")[0].splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("| mcp_cli/") or len(cells) not in (8, 9):
            continue
        if len(cells) == 8:  # written before rows had the date of their run
            cells.insert(2, date.group(1) if date else "?")
        counts = dict(zip(COUNTS, map(int, cells[3:8]), strict=True))
        rows[cells[0]] = {
            "module": cells[0],
            "tests": cells[1],
            "run": cells[2],
            **counts,
            "survivors": [],
            "equivalents": [],
        }
    section = ""
    for line in text.split("## History")[0].splitlines():
        section = {"## Survivors": "survivors", "## Equivalent mutants": "equivalents"}.get(line, section)
        for row in rows.values():
            if section and line.startswith(f"- `{Path(row['module']).name}:"):
                row[section].append(line)
    return rows


def _survivor_names(row: dict) -> set[str]:
    """The mutants a row lists as survivors, by name (`- `schema.py:12 NAME``)."""
    return {line.split(" ", 2)[2].rstrip("`") for line in row["survivors"]}


def again(row: dict, module: str, r: dict) -> dict:
    """`row` (a module's earlier full run) after its survivors were run again (`r`): those now killed count as
    killed, those now listed in EQUIVALENT as equivalent."""
    if r["mutants"] != row["mutants"]:
        sys.exit(f"{module}: {r['mutants']} mutants now, {row['mutants']} in its row: the module changed, run it whole")
    new = _row(module, r)
    for k in ("killed", "timeout", "equivalent"):
        new[k] += row[k]
    new["run"] = f"{row['run'].split(' ')[0]} (survivors again {r['run']})"
    return new


def _rate(row: dict) -> float:
    live = row["mutants"] - row["equivalent"]
    return (row["killed"] + row["timeout"]) / live if live else 1.0


def report(rows: list[dict], argv: list[str]) -> str:
    """bench/MUTATION.md (without its History) for `rows`, in TESTS' order."""
    total = {k: sum(r[k] for r in rows) for k in COUNTS}
    lines = [
        "# Mutation testing",
        "",
        f"Written by `python -m bench.mutation {' '.join(argv)}` on {datetime.date.today()}, Python "
        f"{sys.version.split()[0]}; each row's date is that of its module's run (`--write` with `--module` rewrites "
        "those modules' rows only; `--survivors` runs a row's survivors again). A mutant is killed when a test of its "
        "module fails (or runs over the time limit); the rate is killed / (mutants - equivalent). What a mutant is: "
        "bench/mutation.py.",
        "",
        "| module | tests | run on | mutants | killed | timeout | survived | equivalent | kill rate |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['module']} | {r['tests']} | {r['run']} | {r['mutants']} | {r['killed']} | {r['timeout']} | "
            f"{r['survived']} | {r['equivalent']} | {_rate(r):.1%} |"
        )
    if len(rows) > 1:
        lines.append(
            f"| all | | | {total['mutants']} | {total['killed']} | {total['timeout']} | {total['survived']} | "
            f"{total['equivalent']} | {_rate(total):.1%} |"
        )
    lines += ["", "## Survivors", ""]
    lines += [line for r in rows for line in r["survivors"]] or ["None."]
    lines += ["", "## Equivalent mutants", ""]
    lines += [line for r in rows for line in r["equivalents"]]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.mutation", description=__doc__.split("\n\n")[0])
    parser.add_argument("--module", action="append", help="a module of TESTS, by path or name (repeatable)")
    parser.add_argument("-j", "--jobs", type=int, default=2, help="mutants run at once (default 2)")
    parser.add_argument("--tests", action="append", help="run these tests instead of TESTS' (repeatable)")
    parser.add_argument("--list", action="store_true", help="print the mutants, run nothing")
    write = "write bench/MUTATION.md: the rows of the modules run (the others' rows and its ## History kept)"
    parser.add_argument("--write", action="store_true", help=write)
    rerun = "run only the mutants bench/MUTATION.md lists as survivors; count those now killed or equivalent"
    parser.add_argument("--survivors", action="store_true", help=rerun)
    args = parser.parse_args(argv)
    modules = list(TESTS)
    if args.module:
        wanted = {m if "/" in m else m.removesuffix(".py") for m in args.module}
        modules = [m for m in TESTS if m in wanted or Path(m).stem in wanted]
        if len(modules) != len(wanted):
            parser.error(f"--module: the modules are {', '.join(Path(m).stem for m in TESTS)}")
    if args.list:
        for module in modules:
            for m in mutants(module, (ROOT / module).read_text(encoding="utf-8")):
                print(m.label() + ("  [equivalent]" if m.name in EQUIVALENT.get(module, {}) else ""))
        return
    path = ROOT / "bench" / "MUTATION.md"
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    rows = previous(old)
    only = None
    if args.survivors:
        missing = [m for m in modules if m not in rows]
        if missing:
            parser.error(f"--survivors: bench/MUTATION.md has no row for {', '.join(missing)}")
        only = {m: _survivor_names(rows[m]) for m in modules}
    results = run(modules, max(args.jobs, 1), args.tests, only)
    old = path.read_text(encoding="utf-8") if path.exists() else ""  # as another run may have left it meanwhile
    rows = previous(old) | {m: again(rows[m], m, r) if args.survivors else _row(m, r) for m, r in results.items()}
    text = report([rows[m] for m in TESTS if m in rows], sys.argv[1:] if argv is None else argv)
    print("\n" + text)
    if args.write:
        history = old[old.index("## History") :] if "## History" in old else "## History\n"
        path.write_text(text + "\n" + history, encoding="utf-8")
        print(f"wrote {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
