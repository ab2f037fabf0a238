"""The one tool's contract, the same on every surface (MCP, OpenAPI): its input schema, what a call with arguments that
do not fit it answers, the tool's description and the server's instructions."""

from __future__ import annotations

import json
from typing import Any

from ..engine.runtime import Runtime
from ..handlers import CallScope
from ..result import Result
from ..text import clip, named, one_line
from ..tree import Group

INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "argv": {
            "type": "array",
            "items": {"type": "string"},
            "description": "Tokens after the tool name.",
        },
        "command": {"type": "string", "description": "Or one string, split like a POSIX shell."},
    },
    "additionalProperties": False,
}


def malformed(arguments: object) -> str:
    """What is wrong with tool arguments that do not fit INPUT_SCHEMA, or "" when they fit (checked by hand:
    jsonschema would cost more than the rest of a trivial call)."""
    if not isinstance(arguments, dict):
        return "the arguments must be an object"
    unknown = sorted(set(arguments) - set(INPUT_SCHEMA["properties"]))
    if unknown:
        return f"unknown field(s) {', '.join(map(repr, unknown))}; the fields are `argv` and `command`"
    argv, command = arguments.get("argv"), arguments.get("command")  # null: not given (as models send unused fields)
    if argv is not None and not (isinstance(argv, list) and all(isinstance(t, str) for t in argv)):
        return f"`argv` must be a list of strings, not {json.dumps(argv)[:80]}"
    if command is not None and not isinstance(command, str):
        return f"`command` must be a string, not {json.dumps(command)[:80]}"
    return ""


def invalid(runtime: Runtime, problem: str) -> Result:
    """The bad_request result for tool arguments that are not what INPUT_SCHEMA asks for."""
    text = (
        f"Error: invalid tool arguments: {problem}. "
        'Give {"argv": ["--help"]} (a list of strings) or {"command": "--help"} (one string).'
    )
    return Result(ok=False, path=runtime.tree.name, error="bad_request", message=text)


async def run(runtime: Runtime, arguments: Any, scope: CallScope | None = None) -> Result:
    """A call of the one tool, from any surface, from a caller in `scope` (see `Runtime.call_tool`): arguments that
    do not fit INPUT_SCHEMA are a bad_request."""
    problem = malformed(arguments)
    if problem:
        return invalid(runtime, problem)
    return await runtime.call_tool(one_of(arguments), scope)


def one_of(arguments: dict[str, Any]) -> dict[str, Any]:
    """`arguments` with an empty `argv` (`[]`) or a blank `command` (`""`) left out when the other is given: models
    fill the field they do not use so."""
    argv, command = arguments.get("argv"), arguments.get("command")
    if argv is None or command is None:
        return arguments
    if argv == []:
        return {"command": command}
    return {"argv": argv} if not command.strip() else arguments


NAMED = 12  # domain names in the tool description where there are more than EVERY_NAMED ...
EVERY_NAMED = 20  # ... up to which every one is named (a few names cost less than a `--help` to find the rest)
SUMMARY_BUDGET = 1024  # characters of the root summary in the tool description (a skill's description at most)
BUDGET = 2000  # UTF-8 bytes of the description and of the instructions: hosts cut both beyond 2 KB (Claude Code)


def description(runtime: Runtime) -> str:
    """Root summary (a skill's whole description, up to SUMMARY_BUDGET), the domain names (every one up to
    EVERY_NAMED, else the first NAMED and how many more), and the instruction to start with --help (a domain's, when
    there are domains: an agent that knows its domain skips the root; a lone domain is named there only); within
    BUDGET bytes for any tree: fewer names, then a shorter summary."""
    root = runtime.tree.root
    search = root.child("search")
    groups = [n.name for n in root.children if isinstance(n, Group)]
    others = [n.name for n in root.children if not isinstance(n, Group) and n is not search]
    domain = groups[0] if len(groups) == 1 else "DOMAIN"
    most = NAMED if max(len(groups), len(others)) > EVERY_NAMED else EVERY_NAMED
    first = (f"`{domain} --help`" + (" (`--help` for all)" if len(groups) > most else "")) if groups else "--help"
    first += " or `search WORDS`" if search is not None else ""
    first += (
        " first: listings show each command's usage. Several commands in one call: `A ; B` (each runs), "
        "`A && B`; `A | jq FILTER`"
    )
    for shown in range(most, -1, -1):  # the names take at most half of the budget
        parts = []
        if len(groups) > 1:  # a lone domain is named by the instruction
            parts.append(f"Domains: {named(groups, shown)}." if shown else f"{len(groups)} domains.")
        if others:
            parts.append(f"Commands: {named(others, shown)}." if shown else f"{len(others)} commands.")
        tail = " ".join([*parts, f"Run {first}."])
        if _size(tail) <= BUDGET // 2:
            break
    summary = root.summary or f"The {root.name} command line."
    return f"{fit(summary, min(SUMMARY_BUDGET, BUDGET - _size(tail) - 1))} {tail}"


def instructions(runtime: Runtime) -> str:
    """The server's instructions: what the tree is and where to start (the tool's description says the rest:
    clients put both in the model's context), within BUDGET bytes."""
    name = runtime.tree.name
    what = one_line(runtime.tree.root.summary, 160) or f"The {name} command line."
    return fit(f"{what} One tool, `{name}`, runs it: start with `{name} --help`.", BUDGET)


def fit(text: str, limit: int) -> str:
    """`text` `clip`ped to at most `limit` UTF-8 bytes."""
    chars = limit
    while _size(clipped := clip(text, chars)) > limit:
        chars -= max(1, (_size(clipped) - limit) // 4)
    return clipped


def _size(text: str) -> int:
    return len(text.encode("utf-8"))
