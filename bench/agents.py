"""Real agents, two arms (issue 40): how many calls and tokens an agent spends on a multi-step task, and whether it
finds every tool the task needs, over the same tools shown two ways.

- `tree`: mcp-cli's one tool over the tree `mcp-cli serve` builds from the servers (its definition up front; each
  call an argv `command`, answered as the runtime answers it);
- `host`: host-style deferred tools, as Claude Code's and Codex's tool search: every tool's name up front
  (`mcp__SERVER__TOOL`, one a line), a keyword search that returns the full definitions of the best 5 (BM25 over
  names and descriptions), and a call of a tool a search has loaded (its arguments checked against its schema).

Every tool answers as a simulated echo (`{"ok": true, "tool", "arguments", "id"}`), so a task's steps never depend
on real data. The agent is a helper session that has not seen the code: it gets `brief`'s text and reaches the tools
only through this command line, one process a call; every call is logged (bench/data/agents/runs/). `score`
reads the logs: per task, the calls, the tokens (o200k: what was shown up front, plus every call's words and
answer), and whether every expected tool was called with arguments it accepts. Tasks: bench/data/agents/*.json,
written blind from the tool lists alone (README there).

    python -m bench.agents brief ARM TREE TASK_ID          # what the agent is told; starts the task's log
    python -m bench.agents call RUN -- COMMAND ...         # tree arm: one call of the tool
    python -m bench.agents search RUN -- WORDS ...         # host arm: tool search
    python -m bench.agents invoke RUN NAME 'JSON'          # host arm: a loaded tool
    python -m bench.agents score [RUNS_FOLDER]             # the table
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from mcp_cli.cli import tokens
from mcp_cli.engine.runtime import Runtime
from mcp_cli.handlers import kinds
from mcp_cli.handlers.base import Call, Kind
from mcp_cli.result import Result

from .corpora import Corpus, boundary, github, progressive
from .crowded import crowded
from .economy import FlatIndex, _definition, tree_of
from .turns import _Recorder

DATA = Path(__file__).resolve().parent / "data" / "agents"
RUNS = DATA / "runs"
TREES = {"crowded": crowded, "progressive": progressive, "boundary": boundary, "github": github}
SEARCH_HITS = 5


@dataclass
class Task:
    id: str
    text: str
    expected: list[tuple[str, str]]
    calls_needed: int


def tasks(tree: str) -> dict[str, Task]:
    rows = json.loads((DATA / f"{tree}.json").read_text())
    return {
        r["id"]: Task(r["id"], r["task"], [tuple(e.split(" ", 1)) for e in r["expected"]], r["calls_needed"])
        for r in rows
    }


class _Echo(_Recorder):
    """turns' recording handler, answering an echo of the call with an id instead of "done"."""

    async def run(self, call: Call) -> Result:
        await super().run(call)
        return Result(ok=True, output=echo(self.ref.tool, call.values))


def echo(tool: str, arguments: dict[str, Any]) -> str:
    return json.dumps({"ok": True, "tool": tool, "arguments": arguments, "id": f"{tool}-1"}, ensure_ascii=False)


def _corpus(tree: str) -> Corpus:
    return TREES[tree]()


def _log(run: str) -> Path:
    return RUNS / f"{run}.jsonl"


def _append(run: str, entry: dict[str, Any]) -> None:
    with _log(run).open("a") as f:
        f.write(json.dumps(entry, ensure_ascii=False) + "\n")


def _entries(run: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in _log(run).read_text().splitlines()]


def _names(corpus: Corpus) -> str:
    return "\n".join(f"mcp__{s}__{t['name']}" for s, tools in corpus.servers for t in tools)


SEEN = ("name", "description", "inputSchema")  # what a host shows its model of a tool (not `_meta`)
SEARCH_TOOL = (
    "ToolSearch: finds deferred tools by keywords and loads the best 5 (their full definitions); a tool "
    "must be loaded before it is called."
)


def brief(arm: str, tree: str, task_id: str) -> str:
    """What the agent is told (and its run started): the tools up front, how to call them, the task."""
    corpus, task = _corpus(tree), tasks(tree)[task_id]
    run = f"{arm}-{tree}-{task_id}"
    RUNS.mkdir(parents=True, exist_ok=True)
    home = Path(__file__).resolve().parent.parent
    prefix = f"cd {home} && PYTHONPATH={home} python -m bench.agents"
    if arm == "tree":
        tool = tokens.one_tool(tree_of(corpus))
        shown = json.dumps({k: tool[k] for k in SEEN}, ensure_ascii=False)
        how = (
            f"You have ONE tool, `{tool['name']}`; its definition:\n{shown}\n\nCall it by running, in a shell:\n"
            f"  {prefix} call {run} -- '<command>'\n(the `command` argument, as one string)."
        )
    else:
        shown = _names(corpus) + "\n\n" + SEARCH_TOOL
        how = (
            f"You have these deferred tools (names only; load a tool's definition with the search before calling "
            f"it):\n{_names(corpus)}\n\nSearch (loads the best {SEARCH_HITS}):\n  {prefix} search {run} -- "
            f"<keywords>\nCall a loaded tool:\n  {prefix} invoke {run} <name> '<JSON arguments>'"
        )
    _log(run).write_text("")
    _append(run, {"arm": arm, "tree": tree, "task": task_id, "shown": tokens.count(shown)})
    return (
        f"{how}\n\nEvery tool answers with a simulated result (an echo of your call, with an id you may use). "
        f"Do the task with as few calls as you can; do not ask the user anything.\n\nTASK: {task.text}\n"
    )


def call(run: str, command: str) -> str:
    entry = _entries(run)[0]
    tree = tree_of(_corpus(entry["tree"]))
    found = kinds(tree)
    found["mcp"] = Kind(_Echo, tree)
    _Recorder.calls = []
    result = anyio.run(Runtime(tree, found).call_tool, {"command": command})
    answer = result.text()
    _append(
        run,
        {
            "call": command,
            "said": tokens.count(command),
            "read": tokens.count(answer),
            "ok": result.ok,
            "used": [f"{s} {t}" for s, t, _ in _Recorder.calls],
        },
    )
    return answer


def search(run: str, words: str) -> str:
    entry = _entries(run)[0]
    flat = FlatIndex(_corpus(entry["tree"]))
    named = []
    for _, path, _ in flat.index.search(words, SEARCH_HITS):
        server, name = path.split("/", 1)
        named.append({**_definition(flat.tools[(server, name)]), "name": f"mcp__{server}__{name}"})
    answer = json.dumps(named, ensure_ascii=False, indent=1) if named else "No tools found."
    _append(
        run,
        {
            "search": words,
            "said": tokens.count(words),
            "read": tokens.count(answer),
            "loaded": [d["name"] for d in named],
        },
    )
    return answer


def invoke(run: str, name: str, arguments: str) -> str:
    import jsonschema

    entries = _entries(run)
    loaded = {n for e in entries for n in e.get("loaded", [])}
    corpus = _corpus(entries[0]["tree"])
    tools = {f"mcp__{s}__{t['name']}": (s, t) for s, ts in corpus.servers for t in ts}
    ok, used = False, []
    if name not in tools:
        answer = f"Error: no tool named {name}."
    elif name not in loaded:
        answer = f"Error: {name} is not loaded; load it with the tool search first."
    else:
        server, tool = tools[name]
        try:
            values = json.loads(arguments or "{}")
            try:
                jsonschema.validate(values, tool.get("inputSchema") or {"type": "object"})
            except jsonschema.SchemaError:  # a broken schema is the server's to enforce, as a host leaves it
                pass
        except (ValueError, jsonschema.ValidationError) as exc:
            answer = f"Error: invalid arguments: {str(exc).splitlines()[0]}"
        else:
            ok, used, answer = True, [f"{server} {tool['name']}"], echo(tool["name"], values)
    _append(
        run,
        {
            "invoke": name,
            "arguments": arguments,
            "said": tokens.count(name + arguments),
            "read": tokens.count(answer),
            "ok": ok,
            "used": used,
        },
    )
    return answer


def score(folder: Path = RUNS) -> dict[str, Any]:
    """Per arm and tree: median calls and tokens a task, tasks with every expected tool called."""
    table: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for log in sorted(folder.glob("*.jsonl")):
        entries = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
        if not entries:
            continue
        head, calls = entries[0], entries[1:]
        task = tasks(head["tree"])[head["task"]]
        used = {u for e in calls for u in e.get("used", [])}
        expected = {f"{s} {t}" for s, t in task.expected}
        table.setdefault((head["arm"], head["tree"]), []).append(
            {
                "task": head["task"],
                "calls": len(calls),
                "tokens": head["shown"] + sum(e["said"] + e["read"] for e in calls),
                "found": expected <= used,
            }
        )
    out = {}
    for (arm, tree), rows in sorted(table.items()):
        out[f"{arm} {tree}"] = {
            "tasks": len(rows),
            "calls": statistics.median(r["calls"] for r in rows),
            "tokens": statistics.median(r["tokens"] for r in rows),
            "found": sum(r["found"] for r in rows),
            "rows": rows,
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.agents")
    sub = parser.add_subparsers(dest="what", required=True)
    p = sub.add_parser("brief")
    p.add_argument("arm", choices=["tree", "host"])
    p.add_argument("tree", choices=list(TREES))
    p.add_argument("task")
    for name in ("call", "search"):
        p = sub.add_parser(name)
        p.add_argument("run")
        p.add_argument("words", nargs=argparse.REMAINDER)
    p = sub.add_parser("invoke")
    p.add_argument("run")
    p.add_argument("name")
    p.add_argument("arguments", nargs="?", default="{}")
    p = sub.add_parser("score")
    p.add_argument("folder", nargs="?", default=str(RUNS))
    args = parser.parse_args()
    if args.what == "brief":
        print(brief(args.arm, args.tree, args.task))
    elif args.what in ("call", "search"):
        words = args.words[1:] if args.words[:1] == ["--"] else args.words
        text = " ".join(words) if len(words) != 1 else words[0]
        print(
            (call if args.what == "call" else search)(
                args.run, text if args.what == "search" else (words[0] if len(words) == 1 else shlex.join(words))
            )
        )
    elif args.what == "invoke":
        print(invoke(args.run, args.name, args.arguments))
    else:
        found = score(Path(args.folder))
        print("| arm | tree | tasks | calls a task (median) | tokens a task (median) | every tool found |")
        print("|---|---|---|---|---|---|")
        for key, row in found.items():
            arm, tree = key.split()
            print(f"| {arm} | {tree} | {row['tasks']} | {row['calls']} | {row['tokens']:,.0f} | {row['found']} |")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
