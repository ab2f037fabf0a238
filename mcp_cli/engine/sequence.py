"""Sequences: several commands in one call. `A ; B` runs each in turn, whatever the ones before did; `A && B` runs B
only when everything before it succeeded. Each step is a command or a pipeline (`pipeline.py`), and each is checked
before any runs (a wrong name, a bad option, a stage out of scope: nothing runs, the answer names the step). The
answer holds each step's output under its own header, `[2/3] github create-issue ...`, a failed step's error in its
place and a step `&&` skipped said so; it is one answer, fitted to the call's one budget. `--budget` and `--format`
go before the first command and apply to the whole; an answer's `--more` is a call of its own.

In `command`, an unquoted `;` or `&&` separates steps (quoted, they are data); in `argv`, a token that is exactly `;`
or `&&`. A `;` at the very end is allowed, as in a shell. Every call is read here into its steps (`steps_of`), one
step or several, and run by `run`: a step's stages by `pipeline.py`.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Any

from ..errors import BadRequest, CallError, UsageError, unsplittable
from ..handlers import CallScope
from ..result import Result, has_surrogate
from ..text import clip
from ..tree import Command, Tree
from . import pipeline
from .command import Commands

THEN, AND = ";", "&&"
MAX_STEPS = 100  # as many as `each` runs: 19 shapes or 9 paragraphs are one call
LABEL = 48  # characters of a step's command in its header: its path and first options; the number tells it apart,
# and the agent has the rest in its own call


@dataclass
class Step:
    """One command or pipeline of a sequence: its stages, and how it follows the step before (`;`, `&&`; '' first)."""

    stages: list[list[str]]
    joiner: str = ""

    @property
    def words(self) -> list[str]:
        return [t for i, stage in enumerate(self.stages) for t in ([pipeline.SEP] if i else []) + stage]

    def label(self, number: int, count: int) -> str:
        words = " ".join("|" if t == pipeline.SEP else shlex.quote(t) for t in self.words)
        return f"[{number}/{count}] {clip(words, LABEL)}"


def steps_of(commands: Commands, arguments: dict[str, Any]) -> list[Step]:
    """The steps of a call's arguments, each its stages: its tokens cut at each unquoted `;`, `&&` and `|` of
    `command`, each `;`, `&&` and `|` token of `argv`; the tool's own name dropped in front of each step."""
    command = arguments.get("command")
    if not isinstance(command, str) or arguments.get("argv") is not None:
        steps = _split(tokens_of(commands, arguments))
    elif (pieces := pipeline.cut(command)) is None:  # none, or a quote left open: one command, its words
        steps = [Step([tokens_of(commands, arguments)])]
    else:
        steps = []
        for sep, piece in pieces:
            first = sep != pipeline.SEP
            tokens = tokens_of(commands, {"command": piece}, first) if piece.strip() else []
            if first:
                steps.append(Step([tokens], sep))
            else:
                steps[-1].stages.append(tokens)
    return _unnamed(commands.tree, trimmed(steps))


def tokens_of(commands: Commands, arguments: dict[str, Any], first: bool = True) -> list[str]:
    """The tokens of a call's arguments, `argv` or `command` (`first`: of its first stage, where the tool's own name
    is dropped); BadRequest for arguments that give neither, or no tokens a command line can carry."""
    argv: list[str] | None = arguments.get("argv")
    command: str | None = arguments.get("command")
    name = commands.tree.name
    example = f'Example: {{"argv": ["--help"]}} or {{"command": "--help"}}; start with `{name} --help`.'
    if argv is not None and command is not None:
        raise BadRequest(f"give either `argv` or `command`, not both. {example}")
    unsplit = None  # the command, when it is not shell syntax
    if argv is not None:
        tokens = list(argv)
    elif command is not None:
        try:
            tokens = shlex.split(command, posix=True)
        except ValueError:  # `search What's open?` is words, not shell: split on spaces
            tokens, unsplit = command.split(), command
    else:
        raise BadRequest(f"give `argv` (a list of strings) or `command` (one string). {example}")
    for i, token in enumerate(tokens):
        if "\0" in token:
            raise BadRequest(f"argv[{i}] holds a NUL character, which no command line can carry; remove it.")
        if has_surrogate(token):
            raise BadRequest(f"argv[{i}] holds a lone surrogate, which is not text; send the text as UTF-8.")
    if first:
        tokens = unnamed(commands.tree, tokens)
    if unsplit is not None:
        node = commands.invocation(tokens).node
        if not (isinstance(node, Command) and node.handler.free_text):
            raise unsplittable(unsplit)
    return tokens


def split_argv(tokens: list[str], tree: Tree | None = None) -> list[Step]:
    """`tokens` cut at each token that is exactly `;` or `&&`, each piece cut at `|`; given the `tree`, the tool's own
    name dropped in front of each step after the first."""
    steps = trimmed(_split(tokens))
    return steps if tree is None else _unnamed(tree, steps)


def unnamed(tree: Tree, tokens: list[str]) -> list[str]:
    """Tokens without the tool's own name in front (agents often repeat it: "pdf text extract"), unless it names
    a child."""
    if tokens and tokens[0] == tree.name and tree.root.child(tree.name) is None:
        return tokens[1:]
    return tokens


def _unnamed(tree: Tree, steps: list[Step]) -> list[Step]:
    for step in steps[1:]:
        step.stages[0] = unnamed(tree, step.stages[0])
    return steps


def _split(tokens: list[str]) -> list[Step]:
    """`tokens` cut at each `;` and `&&` token, each piece at `|`."""
    steps: list[Step] = []
    piece: list[str] = []
    joiner = ""
    for token in tokens:
        if token in (THEN, AND):
            steps.append(Step(pipeline.split_argv(piece), joiner))
            piece, joiner = [], token
        else:
            piece.append(token)
    steps.append(Step(pipeline.split_argv(piece), joiner))
    return steps


def trimmed(steps: list[Step]) -> list[Step]:
    """Without the empty step a trailing `;` leaves (`a ; b ;`)."""
    if len(steps) > 1 and steps[-1].joiner == THEN and steps[-1].stages == [[]]:
        return steps[:-1]
    return steps


def joined(steps: list[Step]) -> list[str]:
    """The tokens of a whole sequence, as `argv` would give it."""
    return [t for step in steps for t in ([step.joiner] if step.joiner else []) + step.words]


async def run(commands: Commands, steps: list[Step], scope: CallScope, name: str | None = None) -> Result:
    """The whole result of a call's steps, before it is fitted to the call's budget; `name`: how the caller runs the
    tool (`--prog`). One step is its command or pipeline (`pipeline.run`); several are every step checked (CallError
    naming the first that cannot run), then each run in turn (`&&` stops after a failure), their outputs under their
    headers."""
    count = len(steps)
    if count == 1:
        return await pipeline.run(commands, steps[0].stages, scope, name)
    _check(commands, steps, scope)
    parts: list[str] = []
    failed: Result | None = None  # the first that failed
    failures = 0
    for number, step in enumerate(steps, 1):
        head = step.label(number, count)
        if step.joiner == AND and failed is not None:
            parts.append(f"{head}: not run, as a command before it failed (`&&`)")
            continue
        result = await pipeline.run(commands, step.stages, scope, name)
        if result.ok:
            parts.append(f"{head}\n{result.output.rstrip()}")
        else:
            failed, failures = failed or result, failures + 1
            said = result.text().removeprefix("Error: ").rstrip()
            parts.append(f"{head}: failed ({result.error or 'error'})\n{said}")
    text = "\n\n".join(parts) + "\n"
    whole = Result(ok=failed is None, path=commands.tree.name, output=text, error=failed.error if failed else None)
    if failed is not None:
        whole.message = f"Error: {failures} of {count} commands failed; each answer follows under its header."
    return whole


def _check(commands: Commands, steps: list[Step], scope: CallScope) -> None:
    """Check every step as it would be checked alone, none run; the first that cannot run, named."""
    count = len(steps)
    if count > MAX_STEPS:
        raise UsageError(f"the call has {count} commands, more than the {MAX_STEPS} a sequence may have; split it.")
    for number, step in enumerate(steps, 1):
        if step.stages == [[]]:
            where = "starts with" if number == 1 else "ends with" if number == count else "has two"
            raise UsageError(
                f"the sequence {where} `{step.joiner or steps[1].joiner}` (command {number} is empty); "
                "put a command on each side of every `;` and `&&`."
            )
        try:
            pipeline.check(commands, step.stages, scope)
        except CallError as exc:
            exc.message = f"{step.label(number, count)}: {exc.message}"
            raise
