"""Pipelines: one call of stages joined by `|` (an unquoted `|` in `command`, a token that is exactly `|` in `argv`;
a quoted `'|'` is data). Never a shell: `>`, `$(...)` and the like stay words.

The first stage is always a command of the tree (so a call without `|` means what it always did). In a later
stage, `jq`, `head`, `tail`, `each` and `save` are the built-ins (`builtins.py`); to pipe into a command of the
tree that has one of those names, write the tool's name first (`demo jq ...`). A command stage gets the previous
stage's output: a script on its standard input, an upstream tool as its arguments object (a JSON object, under the
options the stage gives). Every stage is checked before any runs; a stage that fails stops the pipeline, and the
answer names it. Only the last stage's output is answered (fitted to the call's budget as any answer); the stages
before it keep their whole output. A call that starts with `--dry-run` shows the planned calls and runs nothing.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, replace
from typing import Any

import anyio

from ..errors import CallError, NotFound, UsageError
from ..handlers import CallScope
from ..result import Result
from ..text import clip, spellings
from ..tree import Command, Group
from . import builtins
from .builtins import Flow
from .command import Commands, Invocation, takes

SEP = "|"
DRY_RUN = "--dry-run"
MAX_STAGES = 32
MAX_EACH = 100  # items `each` runs its command for
EACH_AT_ONCE = 4  # of them at a time
_FIELD = re.compile(r"\{((?:\.[A-Za-z_][\w-]*)*)\}")  # {} or {.a.b}


def cut(command: str) -> list[tuple[str, str]] | None:
    """`command` cut at each `|`, `;` and `&&` that is neither quoted nor escaped, each piece with the separator
    before it ('' for the first); None when it has none (or a quote is left open: then it is not cut here)."""
    pieces: list[tuple[str, str]] = []
    start, quote, i, before = 0, "", 0, ""
    while i < len(command):
        ch = command[i]
        if quote == "'":
            quote = "" if ch == "'" else quote
        elif ch == "\\":
            i += 1
        elif quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in (SEP, ";") or command.startswith("&&", i):
            sep = "&&" if ch == "&" else ch
            pieces.append((before, command[start:i]))
            before, start = sep, i + len(sep)
            i += len(sep) - 1
        i += 1
    return None if quote or not pieces else [*pieces, (before, command[start:])]


def split_command(command: str) -> list[str] | None:
    """`command` cut at each `|` that is neither quoted nor escaped; None when it has none (or a quote is left
    open: then it is not split here)."""
    pieces = cut(command)
    if pieces is None or any(sep not in ("", SEP) for sep, _ in pieces):
        return None if pieces is None else [command]
    return [piece for _, piece in pieces]


def split_argv(tokens: list[str]) -> list[list[str]]:
    """`tokens` cut at each token that is exactly `|`."""
    stages: list[list[str]] = [[]]
    for token in tokens:
        if token == SEP:
            stages.append([])
        else:
            stages[-1].append(token)
    return stages


@dataclass
class _Stage:
    """A checked stage: its number and words; an invocation of the tree, or a built-in (`each`: a template)."""

    number: int
    words: list[str]
    inv: Invocation | None = None
    values: dict[str, Any] | None = None
    builtin: builtins.Slice | builtins.Jq | builtins.Save | None = None
    each: list[str] | None = None

    @property
    def label(self) -> str:
        return f"stage {self.number} ({clip(shlex.join(self.words), 60)})"


class _Refused(Exception):
    """A stage that cannot run, with the invocation whose help teaches the fix."""

    def __init__(self, error: CallError, inv: Invocation | None) -> None:
        self.error, self.inv = error, inv


async def run(commands: Commands, stages: list[list[str]], scope: CallScope, name: str | None = None) -> Result:
    """The whole result of one step's stages, one command or a pipeline, before it is fitted to a budget; `name`:
    how the caller runs the tool (`--prog`), which the help of one command's call names it by."""
    if len(stages) > 1 or stages[0][:1] == [DRY_RUN]:
        return await _run(commands, stages, scope)
    inv = commands.invocation(stages[0], scope)
    inv.name = name
    return await commands.run(inv)


def check(commands: Commands, stages: list[list[str]], scope: CallScope) -> None:
    """Check one step's stages without running any: raise what it would fail with first (a wrong name or bad usage
    with the help of where it got to)."""
    if len(stages) > 1 or stages[0][:1] == [DRY_RUN]:
        _check_all(commands, stages, scope)
    else:
        commands.checked(commands.invocation(stages[0], scope))


async def _run(commands: Commands, stages: list[list[str]], scope: CallScope) -> Result:
    """The answer of a pipeline (or of a `--dry-run` of one call): every stage checked, then run in turn."""
    dry = stages[0][:1] == [DRY_RUN]
    if dry:
        stages = [stages[0][1:], *stages[1:]]
    try:
        planned = _plan(commands, stages, scope)
    except _Refused as exc:
        return commands.failure(exc.error, exc.inv)
    if dry:
        return Result(ok=True, path=commands.tree.name, output=_describe(planned))
    flow: Flow | None = None
    result = Result(ok=True)
    for stage in planned:
        try:
            result = await _step(commands, stage, flow, replace(scope, whole=stage is not planned[-1]))
        except CallError as exc:
            result = commands.failure(exc, None)
        if not result.ok:
            return _failed(stage, result, len(planned))
        flow = Flow.of(result.data, result.output, result.value)
    return result


def _check_all(commands: Commands, stages: list[list[str]], scope: CallScope) -> None:
    """Check every stage of a pipeline (or a `--dry-run` of one call) without running any: raise what the first that
    cannot run fails with (a wrong name or bad usage with the help of where it got to)."""
    if stages[0][:1] == [DRY_RUN]:
        stages = [stages[0][1:], *stages[1:]]
    try:
        _plan(commands, stages, scope)
    except _Refused as exc:
        if exc.inv is not None and not exc.error.usage and isinstance(exc.error, (NotFound, UsageError)):
            exc.error.usage = exc.inv.usage
        raise exc.error from None


def _plan(commands: Commands, stages: list[list[str]], scope: CallScope) -> list[_Stage]:
    """Every stage checked, none run; _Refused naming the first that cannot run."""
    if len(stages) > MAX_STAGES:
        raise _Refused(
            UsageError(
                f"the call has {len(stages):,} stages, more than the {MAX_STAGES} a pipeline may "
                "have; split it into several calls."
            ),
            None,
        )
    planned: list[_Stage] = []
    for number, words in enumerate(stages, 1):
        stage = _Stage(number, words)
        try:
            _check(commands, stage, len(stages), scope)
        except CallError as exc:
            exc.message = f"{stage.label}: {exc.message}" if words else exc.message
            raise _Refused(exc, stage.inv) from None
        planned.append(stage)
    return planned


def _check(commands: Commands, stage: _Stage, count: int, scope: CallScope) -> None:
    """Check one stage (UsageError, NotFound), filling in what it runs."""
    words, number = stage.words, stage.number
    if not words and count == 1:  # `--dry-run` alone
        raise UsageError(f"`{DRY_RUN}` shows the calls a call would make: give one after it ({DRY_RUN} CMD ...).")
    if not words:
        where = "starts with" if number == 1 else "ends with" if number == count else "has two"
        raise UsageError(
            f"the pipeline {where} `|` (stage {number} is empty); put a command or a built-in "
            "(jq, head, tail, each, save) on each side of every `|`."
        )
    first, name = number == 1, commands.tree.name
    if not first and words[0] in builtins.USAGE:
        usage = builtins.help_of(words[0], name)
        try:
            if words[0] == "each":
                stage.each = _template(commands, words[1:], scope)
            else:
                stage.builtin = builtins.make(words[0], words[1:], scope.cwd, scope.local_files)
        except CallError as exc:
            exc.usage = exc.usage or usage
            raise
        if words[0] == "save" and number != count:
            raise UsageError("`save` answers with a summary of what it wrote: make it the last stage.", (), usage)
        return
    if first and words[0] in builtins.USAGE and commands.tree.root.child(words[0]) is None:
        raise UsageError(
            f"`{words[0]}` is a built-in, which takes the output of a stage before it; start with a "
            f"command of {name} (`{name} --help` lists them).",
            (),
            builtins.help_of(words[0], name),
        )
    if not first and words[0] == name and commands.tree.root.child(name) is None:
        words = words[1:]  # the tool's name first: the tree's command, even one named like a built-in
    stage.inv = inv = commands.invocation(words, scope)
    if not first:
        node = inv.node
        if isinstance(node, Group) and inv.rest:
            commands.check(inv)  # NotFound for a name it does not have
        if not isinstance(node, Command) or takes(node) is None:
            what = f"`{inv.prog}`" if len(inv.walked) > 1 else "the root"
            raise UsageError(
                f"{what} takes no input from a stage before it; only scripts (on their standard input) "
                "and upstream tools (a JSON object as arguments) do."
            )
        inv.piped = Flow(text="")  # a stand-in while checking: the real output comes when the stage runs
    stage.values = commands.check(inv)


def _template(commands: Commands, words: list[str], scope: CallScope) -> list[str]:
    """The command `each` runs (with `{}` / `{.field}` in its words), checked: a command of the tree, with options
    it has."""
    if not words:
        raise UsageError("`each` needs a command to run per item: each issues show --number {.number}.")
    inv = commands.invocation(words, scope)
    if isinstance(inv.node, Group):
        commands.check(inv)  # NotFound for a name it does not have
    cmd = inv.node
    if not isinstance(cmd, Command):
        raise UsageError(f"`each` runs a command; `{inv.prog}` is not one ({inv.prog} --help lists them).")
    if not cmd.passthrough:
        flags = {f for p in cmd.params for f in p.flags}
        for token in inv.rest[: inv.rest.index("--")] if "--" in inv.rest else inv.rest:
            flag = token.partition("=")[0]
            if flag[:1] == "-" and flag not in flags and not flag.lstrip("-").replace(".", "").isdigit():
                near = [f for f in spellings([f for p in cmd.params for f in p.flags]) if f.startswith(flag[:3])]
                raise UsageError(f"`{inv.prog}` has no option {flag}.", near[:3])
    return words


def _substitute(words: list[str], item: Any) -> list[str]:
    """The words with `{}` replaced by the item (a string as it is, anything else as JSON) and `{.a.b}` by a
    field of it; KeyError naming a field the item does not have."""

    def field(match: re.Match[str]) -> str:
        value = item
        for key in match.group(1).split(".")[1:]:
            if not isinstance(value, dict) or key not in value:
                raise KeyError(f"the item has no field .{key}")
            value = value[key]
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)

    return [_FIELD.sub(field, word) for word in words]


async def _step(commands: Commands, stage: _Stage, flow: Flow | None, scope: CallScope) -> Result:
    """Run one checked stage on the previous stage's output."""
    if stage.inv is not None:
        stage.inv.piped, stage.inv.scope = flow, scope
        return await commands.run(stage.inv)
    assert flow is not None  # built-ins come after the first stage
    if stage.each is not None:
        return await _each(commands, stage.each, flow, scope)
    assert stage.builtin is not None
    out = await stage.builtin.run(flow, commands.tree.settings.timeout)
    return Result(ok=True, path=stage.words[0], output=out.text, value=out.written_value)


async def _each(commands: Commands, words: list[str], flow: Flow, scope: CallScope) -> Result:
    """`each`: the command once per item (at most MAX_EACH, EACH_AT_ONCE at a time), each item's answer or failure
    beside the others', as a JSON array of {"item", "ok", "output" or "error"}."""
    if not flow.is_json or not isinstance(flow.value, list):
        raise UsageError(
            f"`each` runs once per item of a JSON array, but its input is {flow.shape()}; make an array "
            "with jq first, e.g. | jq '.items'."
        )
    items: list[Any] = flow.value
    if len(items) > MAX_EACH:
        raise UsageError(
            f"`each` runs at most {MAX_EACH} items, and its input has {len(items):,}; take fewer first "
            f"(| head {MAX_EACH})."
        )
    rows: list[dict[str, Any]] = [{"item": item} for item in items]
    whole = replace(scope, whole=True)  # what each item's command gives goes on into the array
    limiter = anyio.CapacityLimiter(EACH_AT_ONCE)

    async def one(row: dict[str, Any]) -> None:
        try:
            tokens = _substitute(words, row["item"])
        except KeyError as exc:
            row.update(ok=False, error=exc.args[0])
            return
        async with limiter:
            result = await commands.run(commands.invocation(tokens, whole))
        if result.ok:
            out = Flow.of(result.data, result.output)
            row.update(ok=True, output=out.value if out.is_json else out.text)
        else:
            said = result.message.split("\n\n")[0].removeprefix("Error: ") or result.output.strip()  # an upstream's
            row.update(ok=False, error=clip(said, 500))  # error is its answer

    async with anyio.create_task_group() as tg:
        for row in rows:
            tg.start_soon(one, row)
    failed = sum(not row["ok"] for row in rows)
    note = f"[each: {failed} of {len(rows)} items failed; see their `error`]\n" if failed else ""
    return Result(ok=True, path="each", output=json.dumps(rows, ensure_ascii=False) + "\n" + note)


def _failed(stage: _Stage, result: Result, count: int) -> Result:
    """The answer when a stage failed: which one and why (its own message, stderr and output)."""
    why = result.message.removeprefix("Error: ") or "its answer follows."  # an upstream's error is its answer
    result.message = f"Error: {stage.label} of {count} failed: {why}"
    return result


def _describe(planned: list[_Stage]) -> str:
    """The planned calls of a dry run, one line per stage."""
    lines = [f"Dry run: {len(planned)} stage{'s' * (len(planned) > 1)}, nothing run."]
    for stage in planned:
        words = shlex.join(stage.words)
        if stage.each is not None:
            each = shlex.join(stage.each)
            what = f"built-in: runs `{each}` once per item (at most {MAX_EACH}, {EACH_AT_ONCE} at a time)"
        elif stage.builtin is not None:
            what = "built-in"
        else:
            assert stage.inv is not None
            what = _planned_call(stage.inv, stage.values, stage.number > 1)
        lines.append(f"stage {stage.number}: {words}\n  {what}")
    return "\n".join(lines) + "\n"


def _planned_call(inv: Invocation, values: dict[str, Any] | None, piped: bool) -> str:
    """What a command stage would call."""
    node = inv.node
    if not isinstance(node, Command):
        return "help" if isinstance(node, Group) else "a document"
    ref = node.handler
    given = json.dumps(values or {}, ensure_ascii=False)
    if ref.tool is not None:
        under = " under them the JSON object from the stage before" if piped else ""
        return f"upstream tool `{ref.tool}` of server `{ref.server}`, arguments {given}{under}"
    if ref.piped_as == "stdin":
        return "script, arguments " + json.dumps(inv.rest) + (", the stage before's output on stdin" if piped else "")
    return f"{ref.kind} command, values {given}"
