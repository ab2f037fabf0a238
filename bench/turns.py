"""Calls per task: a scripted agent over the one-tool surface, counting its calls from the tool definition to a
correct call (the task's tool, with arguments its schema accepts), on the bench corpora's tasks (issue 28).

The agent is simple and sees only what the surface shows it: the task's words, and the text of each answer. It never
reads a schema. Two ways in: *via search* (`search` with the task's words; then for each of the first 3 hits, in
order: the hit's usage line if the answer shows one, else the hit's `--help`; then the call) and *via the root*
(where the tool's description says to start: its lone domain's help, or the help of a domain it names that the task
names too, else the root's; then the domain, group and command whose rows share the most words with the task; a
group that shows its commands' usage lines is called from there, else the command's `--help`). It fills the
options the usage line requires: a choice the task names (else the first), a number the task gives (else 1),
`true`, text the task quotes or an identifier-like word of it (else `x`), a JSON object with the required fields the
help shows (`name*:`).
After a refused call it reads the error (which carries the command's help) and tries once more; a call that reached
another tool moves it on to the next hit (or row). A task fails after that, or after MAX_CALLS calls.
`python -m bench.turns` prints the table."""

from __future__ import annotations

import re
import statistics
from typing import Any

import anyio

from mcp_cli.cli import tokens
from mcp_cli.engine.runtime import Runtime
from mcp_cli.handlers import kinds
from mcp_cli.handlers.base import Call, Kind
from mcp_cli.refs import McpToolRef
from mcp_cli.result import Result
from mcp_cli.tree import Tree

from . import mark
from .corpora import Corpus, boundary, github, progressive
from .economy import tree_of

MAX_CALLS = 10
HITS = 3
_STOP = {
    "the",
    "a",
    "an",
    "to",
    "of",
    "in",
    "on",
    "for",
    "and",
    "or",
    "all",
    "my",
    "me",
    "with",
    "from",
    "is",
    "it",
    "this",
    "that",
    "what",
    "show",
    "please",
    "can",
    "you",
    "i",
    "we",
    "our",
    "get",
    "by",
    "at",
    "be",
}


class _Recorder:
    """A handler that runs nothing: it notes which tool was called with which arguments."""

    calls: list[tuple[str, str, dict[str, Any]]] = []

    def __init__(self, ref: McpToolRef, tree: Tree) -> None:
        self.ref = ref

    async def run(self, call: Call) -> Result:
        _Recorder.calls.append((self.ref.server, self.ref.tool, call.values))
        return Result(ok=True, output="done")


def _words(text: str) -> set[str]:
    """A text's words, lower-case, cut to 5 letters (a crude stem), without stop words."""
    return {w[:5] for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in _STOP}


class Agent:
    """One task's agent: its calls, counted."""

    def __init__(self, runtime: Runtime, prompt: str) -> None:
        self.runtime, self.prompt, self.calls = runtime, prompt, 0

    def call(self, argv: list[str]) -> Result:
        self.calls += 1
        return anyio.run(self.runtime.call, argv)

    def value(self, flag: str, metavar: str, help_text: str) -> str:
        """What the task gives for an option, or a plausible placeholder of its shape."""
        prompt = self.prompt
        choices = metavar[1:-1].split(",") if metavar.startswith("{") else []
        if metavar == "CHOICE":
            row = next((line for line in help_text.splitlines() if line.strip().startswith(flag + " ")), "")
            found = re.search(r"one of: ([^)\]]*)", row)
            choices = [c.strip() for c in found[1].split(",")] if found else []
            if not choices:  # the choices are the lines under the option
                at = help_text.splitlines().index(row) if row else -1
                for line in help_text.splitlines()[at + 1 :] if at >= 0 else []:
                    if not line.startswith(" " * 6):
                        break
                    choices.append(line.split()[0])
        if choices:
            return next((c for c in choices if c.lower() in prompt.lower()), choices[0])
        kinds_shown = metavar.split("|")
        if "JSON" in kinds_shown and kinds_shown == ["JSON"]:
            return self.json_value(flag, help_text)
        if kinds_shown[0] in ("INT", "NUM"):
            number = re.search(r"(?<![\w.])\d+(?![\w.])" if kinds_shown[0] == "INT" else r"\b\d+(\.\d+)?\b", prompt)
            return number[0] if number else "1"
        if kinds_shown[0] == "BOOL":
            return "true"
        quoted = re.search(r"['\"`]([^'\"`]+)['\"`]", prompt)
        if quoted:
            return quoted[1]
        named = [w.strip(".,?") for w in prompt.split() if re.search(r"[/_\-.\d]|^[A-Z]{2,}", w.strip(".,?"))]
        return named[0] if named else "x"

    def json_value(self, flag: str, help_text: str) -> str:
        """An object with the required fields the help shows for the option (its lines, or its compact shape)."""
        lines = help_text.splitlines()
        at = next((i for i, line in enumerate(lines) if line.strip().startswith(flag + " ")), None)
        if at is None:
            return "{}"
        shown = [lines[at]]
        for line in lines[at + 1 :]:
            if not line.startswith(" " * 6):
                break
            shown.append(line)
        fields = re.findall(r"(\w+)\*: (\w+|\[)", " ".join(shown))
        sample = {"string": "x", "integer": 1, "number": 1, "boolean": True, "[": []}
        return "{" + ", ".join(f'"{k}": {_json(sample.get(t, "x"))}' for k, t in fields) + "}"

    def argv(self, path: list[str], usage: str, help_text: str) -> list[str]:
        """The call for a command whose usage line (and help) it read: the options the usage line requires."""
        line = " ".join(usage.split())
        line = line.split(" ".join(["tools", *path]), 1)[-1]
        line = _unbracket(line)
        line = re.sub(r"\(([^()|]*)\|[^()]*\)", r"\1", line)  # of exclusive options, the first
        out = list(path)
        for flag, metavar in re.findall(r"(--[\w.-]+)(?: ([^\s-][^\s]*))?", line):
            if "/--no-" in flag:
                continue
            out.append(flag)
            if metavar:
                out.append(self.value(flag, metavar, help_text))
        return out

    def attempt(self, path: list[str], usage: str, help_text: str) -> Result:
        """Call the command; refused, read the error's help and call once more."""
        result = self.call(self.argv(path, usage, help_text))
        if not result.ok and result.error == "usage" and self.calls < MAX_CALLS:
            fresh = _usage(result.message, path) or usage
            result = self.call(self.argv(path, fresh, result.message))
        return result


def _json(value: object) -> str:
    import json

    return json.dumps(value)


def _unbracket(text: str) -> str:
    """The text without its optional parts (`[...]`, nested)."""
    out, depth = [], 0
    for ch in text:
        depth += ch == "["
        if depth == 0:
            out.append(ch)
        depth -= ch == "]" and depth > 0
    return "".join(out)


def _usage(text: str, path: list[str]) -> str:
    """The usage line of the command at `path` in a text (a help, an error, a listing, a search answer), with its
    wrapped lines: written whole (`tools PATH ...`), or as a listing writes it, the command's row and under it what
    follows the path (a row under `Commands:` with nothing under it: a command that takes nothing)."""
    lines = text.splitlines()
    head = " ".join(["tools", *path])
    for i, line in enumerate(lines):
        said = re.sub(r"^\s*[A-Z][^:`]*: (?=tools )", "", line)  # `Usage of the first: tools ...` says it too
        if said.strip() == head or said.strip().startswith(head + " "):
            indent = len(line) - len(line.lstrip())
            more = []  # its wrapped lines, under its first piece
            for x in lines[i + 1 : i + 6]:
                if not (x.startswith(" " * (indent + len(head))) and x.strip()[:1] in ("-", "(", "[")):
                    break
                more.append(x)
            return " ".join([line, *more])
    heading = ""
    for i, line in enumerate(lines):
        if line.endswith(":") and not line.startswith(" "):
            heading = line
        if not line.startswith("  ") or line.startswith("   "):
            continue
        name = re.split(r"\s{2,}", line.strip())[0]
        for named in (" ".join(path), path[-1]):
            if name != named and not name.startswith(named + " "):
                continue
            under = []
            for x in lines[i + 1 : i + 6]:
                if not x.startswith("    ") or x.strip()[:1] not in ("-", "(", "[") and not x.strip()[:1].isupper():
                    break
                under.append(x.strip())
            if under or name != named or heading.startswith("Commands"):
                return " ".join([head, name[len(named) :].strip(), *under]).strip()
    return ""


def _rows(text: str) -> list[tuple[str, str]]:
    """(name or path, summary) of each row of a listing or a search answer."""
    out = []
    for line in text.splitlines():
        found = re.match(r"^  (\S(?:.*?\S)?)(?:\s{2,}(.*))?$", line)
        if found and not line.startswith("   ") and not found[1].startswith("tools"):
            out.append((found[1], found[2] or ""))
    return out


def _correct(expected: tuple[str, str], result: Result, before: int) -> bool | None:
    """True: the call reached the task's tool; False: another tool; None: it was refused."""
    if not result.ok or len(_Recorder.calls) == before:
        return None
    server, tool, _ = _Recorder.calls[-1]
    return (server, tool) == expected


def via_search(runtime: Runtime, prompt: str, expected: tuple[str, str], description: str = "") -> int | None:
    agent = Agent(runtime, prompt)
    answer = agent.call(["search", *prompt.split()[:40]]).output
    for path_text, _ in _rows(answer)[:HITS]:
        path = path_text.split()
        usage = _usage(answer, path)
        help_text = answer
        if not usage:
            help_text = agent.call([*path, "--help"]).output
            usage = _usage(help_text, path)
        before = len(_Recorder.calls)
        verdict = _correct(expected, agent.attempt(path, usage, help_text), before)
        if verdict:
            return agent.calls
        if agent.calls >= MAX_CALLS:
            break
    return None


def start(description: str, wanted: set[str]) -> list[str]:
    """Where the tool's description says to start: the one domain it names to run `--help` on, else a domain it
    names whose name shares a word with the task, else the root."""
    told = re.search(r"Run `([a-z0-9][\w -]*?) --help`", description)
    if told:
        return told[1].split()
    listed = re.search(r"Domains: ([^.]*)", description)
    names = [n.strip() for n in listed[1].replace(" and ", ", ").split(",")] if listed else []
    return next(([n] for n in names if wanted & _words(n.replace("-", " "))), [])


def via_root(runtime: Runtime, prompt: str, expected: tuple[str, str], description: str = "") -> int | None:
    agent, wanted = Agent(runtime, prompt), _words(prompt)
    path = start(description, wanted)
    text = agent.call([*path, "--help"]).output
    while agent.calls < MAX_CALLS:
        rows = [r for r in _rows(text) if r[0] != "search"]
        if not rows:
            return None
        ranked = sorted(rows, key=lambda r: -len(wanted & _words(f"{r[0]} {r[1]}")))
        for name, _ in ranked[: HITS if any(_usage(text, [*path, n]) for n, _ in ranked) else 1]:
            here = [*path, name]
            usage = _usage(text, here)
            if usage:  # a command, called from the listing
                before = len(_Recorder.calls)
                if _correct(expected, agent.attempt(here, usage, text), before):
                    return agent.calls
                continue
            answer = agent.call([*here, "--help"]).output
            usage = _usage(answer, here)
            if answer.startswith("Usage:") and usage:  # a command's help
                before = len(_Recorder.calls)
                return agent.calls if _correct(expected, agent.attempt(here, usage, answer), before) else None
            path, text = here, answer
            break
        else:
            return None
    return None


def run(corpus: Corpus) -> dict[str, Any]:
    tree = tree_of(corpus)
    found = kinds(tree)
    found["mcp"] = Kind(_Recorder, tree)
    runtime = Runtime(tree, found)
    out: dict[str, Any] = {"corpus": corpus.name, "tasks": len(corpus.tasks)}
    description = tokens.one_tool(tree)["description"]
    for name, way in (("search", via_search), ("root", via_root)):
        counts = [way(runtime, prompt, needed[0], description) for prompt, needed in corpus.tasks]
        done = [c for c in counts if c is not None]
        out[name] = {
            "done": len(done),
            "median": statistics.median(done) if done else None,
            "within3": sum(1 for c in done if c <= 3),
        }
    return out


BEFORE = {
    ("boundary", "search"): 2,
    ("boundary", "root"): 4,
    ("github", "search"): 2,
    ("github", "root"): 4,
    ("progressivemcpbench", "search"): 2,
    ("progressivemcpbench", "root"): 2,
}  # medians at e7d8130, same agent (the agent of 1933145 read no usage line in a search answer and started at the
# root whatever the description said: 3/4, 3/5, 3/4)


def table(results: list[dict[str, Any]]) -> list[str]:
    lines = [
        "| corpus | tasks | way in | correct call reached | median calls | before (e7d8130) | within 3 calls |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in results:
        for way in ("search", "root"):
            m = r[way]
            median = "-" if m["median"] is None else f"{m['median']:g}"
            lines.append(
                f"| {r['corpus']} | {r['tasks']} | {way} | {m['done']} ({m['done'] / r['tasks']:.0%}) | "
                f"{median} | {BEFORE.get((r['corpus'], way), '-')} | {m['within3']} "
                f"({m['within3'] / r['tasks']:.0%}) |"
            )
    return lines


def report(corpora: list[Corpus]) -> tuple[list[str], list[str]]:
    """(markdown lines, target lines): the table, and the target of at most 3 calls (median, the better way in)."""
    results = [run(c) for c in corpora]
    targets = []
    for r in results:
        best = min((r[w]["median"] for w in ("search", "root") if r[w]["median"] is not None), default=None)
        ok = best is not None and best <= 3
        targets.append(
            f"- {r['corpus']}: calls per task to a correct call, median {best:g} <= 3 -- {mark(ok)}"
            if best is not None
            else f"- {r['corpus']}: no task reached a correct call -- {mark(False)}"
        )
    return table(results), targets


def main() -> None:
    print("\n".join(report([boundary(), github(), progressive()])[0]))


if __name__ == "__main__":
    main()
