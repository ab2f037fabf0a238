"""The meta-tools surface (`serve --surface meta`): `search_tools`, `describe_tools` and `call_tool` over the same
runtime, for clients that prefer to find, read and call commands as tools. A command is named by its path
(`math add`). `call_tool` checks the arguments object against the command's JSON Schema, then runs the command as
argv through `Runtime.call`, so that parsing, errors, caps, timeouts and the result envelope stay in one place; its
`then` pipes the output on through pipeline stages (`engine/pipeline.py`)."""

from __future__ import annotations

import json
from functools import cache, partial
from typing import TYPE_CHECKING, Any

from mcp import types

from ..engine import answers, sequence
from ..engine.runtime import Runtime
from ..engine.schema import input_schema, validator
from ..engine.sequence import Step
from ..errors import BadRequest, CallError, NotFound, close_to
from ..handlers.base import CallScope, in_thread
from ..result import Result
from ..search.ranking import SHOWN, Index, bounded
from ..text import one_line, rows
from ..tree import Command, Param, Tree

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

DESCRIBE_MAX = 20  # names one describe_tools call may ask for

_NAME = {"type": "string", "description": "A command's path, as search_tools gives it (e.g. `issues list`)."}
TOOLS: dict[str, tuple[str, dict[str, Any], bool]] = {  # name: description, input schema, read-only
    "search_tools": (
        "Find commands by what they do. Returns the best matches, each with its path and a one-line summary; "
        "then describe_tools for their arguments.",
        {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What to do, in a few words."},
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 50,
                    "description": "How many commands to "
                    f"return; default: the strong matches (at least half the best score), up to {SHOWN}.",
                },
            },
            "required": ["query"],
            "additionalProperties": False,
        },
        True,
    ),
    "describe_tools": (
        "The JSON Schema of each named command's arguments, with its description.",
        {
            "type": "object",
            "properties": {"names": {"type": "array", "items": _NAME, "minItems": 1, "maxItems": DESCRIBE_MAX}},
            "required": ["names"],
            "additionalProperties": False,
        },
        True,
    ),
    "call_tool": (
        "Run a command with an arguments object that fits its schema (see describe_tools). An answer over its "
        "budget ends with a note giving the call for its next part: pass that call as `name`.",
        {
            "type": "object",
            "properties": {
                "name": _NAME,
                "arguments": {"type": "object", "description": "The command's arguments.", "default": {}},
                "then": {
                    "type": "string",
                    "description": "Optional pipeline stages for its output, e.g. "
                    "`jq '.items[].name' | head 5` (built-ins: jq, head, tail, each, save).",
                },
                "budget": {
                    "type": "integer",
                    "minimum": answers.BUDGET_MIN,
                    "description": "Optional: tokens the answer may take; over it, cut with a note.",
                },
                "format": {
                    "enum": list(answers.FORMS),
                    "description": "Optional: a JSON answer as json, toon or table.",
                },
            },
            "required": ["name"],
            "additionalProperties": False,
        },
        False,
    ),
}


def tools(meta: dict[str, Any] | None = None) -> list[types.Tool]:
    """The three tools, as `tools/list` gives them, each with `meta` (as the one tool's `_meta`)."""
    return [
        types.Tool(
            name=name,
            description=text,
            input_schema=schema,
            _meta=meta,
            annotations=types.ToolAnnotations(read_only_hint=True) if read_only else None,
        )
        for name, (text, schema, read_only) in TOOLS.items()
    ]


def instructions(tree: Tree) -> str:
    """The server's instructions: what the tree is, and how the three tools go together."""
    what = one_line(tree.root.summary, 200) or f"The {tree.name} commands."
    return f"{what} Find a command with search_tools, read its arguments with describe_tools, run it with call_tool."


class Meta:
    """Answers the three tools from `runtime` (whose tree may be replaced while serving)."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self._index: tuple[Tree, Index] | None = None  # the tree it indexes, and the index

    async def call(self, name: str, arguments: dict[str, Any] | None, scope: CallScope | None = None) -> Result:
        """The result of one meta tool call from a caller in `scope` (see `Runtime.call_tool`); a bad name or bad
        arguments as an error result, never a raise. The caller's session context ranks search, and calls add to it."""
        arguments, scope = arguments or {}, scope or CallScope()
        context = scope.context
        try:
            if name not in TOOLS:
                raise NotFound(f"no tool named {name!r}; the tools are {', '.join(TOOLS)}.", close_to(name, [*TOOLS]))
            check(TOOLS[name][1], arguments, f"arguments of {name}", _own_validator(name))
            if name == "search_tools":
                prefer = context.domains() if context is not None else []
                search = partial(self._search, bounded(arguments["query"]), arguments.get("limit"), prefer)
                return await self._answer(await in_thread(search, self.runtime.tree.settings.timeout, "search_tools"))
            if name == "describe_tools":
                return await self._answer(self._describe(arguments["names"]))
            if "--more" in arguments["name"].split():  # the next part of a cut answer, as its note gives it
                steps = sequence.steps_of(self.runtime.commands, {"command": arguments["name"]})
            else:
                path, cmd, prog = self.command(arguments["name"])
                values = arguments.get("arguments", {})
                checker = self.runtime.commands.checker(cmd, prog)  # an upstream tool's, kept as its call keeps it
                made = checker.validator if checker is not None else None
                check(input_schema(cmd), values, f"arguments of `{path}`", made)
                steps = [
                    Step([sequence.tokens_of(self.runtime.commands, {"argv": [*path.split(), *argv(cmd, values)]})])
                ]  # checked
                if arguments.get("then") is not None:  # its stages, and the commands after it (`;`, `&&`)
                    then = sequence.steps_of(self.runtime.commands, {"command": arguments["then"]})
                    steps[0].stages += then[0].stages
                    steps += then[1:]
            first = steps[0].stages[0]
            reserved = [[f"--{k}", str(arguments[k])] for k in ("budget", "format") if arguments.get(k) is not None]
            at = answers.leading(first)  # after those of a note's call (answers.py): these win
            first[at:at] = [t for option in reserved for t in option]
            return await self.runtime.run_steps(steps, scope)
        except CallError as exc:
            return self.runtime.commands.failure(exc, None)

    def command(self, name: str) -> tuple[str, Command, str]:
        """The path and command a name gives, and the command's `prog` as its call runs it; NotFound with close paths
        when there is none."""
        inv = self.runtime.commands.invocation(name.split())
        if isinstance(inv.node, Command) and not inv.rest:
            return " ".join(n.name for n in inv.walked[1:]), inv.node, inv.prog
        paths = [" ".join(p) for p, node in self.runtime.tree.walk() if isinstance(node, Command)]
        raise NotFound(f"no command `{name}`; find one with search_tools.", close_to(name, paths))

    def _search(self, query: str, limit: int | None, prefer: list[str]) -> Result:
        tree = self.runtime.tree
        if self._index is None or self._index[0] is not tree:
            self._index = (tree, Index(tree))
        index = self._index[1]
        hits = index.search(query, limit, prefer)
        if not hits:
            return Result(ok=True, path="search_tools", output=f"{index.no_fit(query)}\n")
        lines = rows([(path, node.summary) for _, path, node in hits], widest=40)
        if index.misses(query, hits):  # said first, the closest still shown: this surface has no domains to browse
            lines = [f"{index.no_fit(query)} The closest:", *lines]
        return Result(
            ok=True, path="search_tools", output="\n".join([*lines, "", "Describe them with describe_tools."]) + "\n"
        )

    def _describe(self, names: list[str]) -> Result:
        described = []
        for name in names:
            path, cmd, _ = self.command(name)
            described.append(
                {"name": path, "description": cmd.description or cmd.summary, "inputSchema": input_schema(cmd)}
            )
        return Result(ok=True, path="describe_tools", output=json.dumps(described, ensure_ascii=False) + "\n")

    async def _answer(self, result: Result) -> Result:
        rt = self.runtime
        return await answers.fit(rt.tree, rt.kept, result, answers.Asked([]), None)


@cache
def _own_validator(name: str) -> Validator:
    """The validator of one of the three tools' own schemas, made once."""
    return validator(TOOLS[name][1])


def check(schema: dict[str, Any], value: Any, where: str, made: Validator | None = None) -> None:
    """BadRequest naming the first field of `value` that does not fit `schema` (a broken schema checks nothing);
    `made`: its validator, made before."""
    import jsonschema

    try:
        error = jsonschema.exceptions.best_match((made or validator(schema)).iter_errors(value))
    except Exception:  # an unknown type or reference, a keyword of the wrong type, a pattern that is no regex:
        return  # an upstream's broken schema is the upstream's to enforce
    if error is not None:
        field = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
        at = f"`{field[1:]}`" if field else "the object"
        raise BadRequest(f"invalid {where}: {at}: {error.message}.")


def argv(cmd: Command, values: dict[str, Any]) -> list[str]:
    """The tokens after a command's path that give it `values` (an object that fits its `input_schema`):
    `--json` for an upstream tool; for other commands, an option per value (`--flag=VALUE`, so that no value is
    read as an option), then the positionals (after `--` when one starts with a dash)."""
    if cmd.schema is not None:
        return ["--json", json.dumps(values, ensure_ascii=False)] if values else []
    if cmd.passthrough:
        return [str(v) for v in values.get("args", [])]
    options: list[str] = []
    positionals: list[str] = []
    for p in cmd.params:
        if p.name not in values:
            continue
        value = values[p.name]
        if p.positional:
            positionals += [_token(p, v) for v in (value if isinstance(value, list) else [value])]
        elif p.action in ("store_true", "store_false"):
            options += [p.flags[0]] if value == (p.action == "store_true") else []
        elif p.action == "negatable":
            long = next(f for f in p.flags if f.startswith("--"))
            options.append(long if value else "--no-" + long[2:])
        elif p.action == "count":
            options += [p.flags[0]] * value
        else:
            options += [f"{p.flags[0]}={_token(p, v)}" for v in (value if p.action == "append" else [value])]
    dashes = ["--"] if any(t.startswith("-") for t in positionals) else []
    return options + dashes + positionals


def _token(p: Param, value: object) -> str:
    """A value as argv text: strings as they are (unless the param reads JSON), anything else as JSON."""
    return value if isinstance(value, str) and p.type != "json" else json.dumps(value, ensure_ascii=False)
