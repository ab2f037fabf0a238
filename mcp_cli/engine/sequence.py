"""Sequences: several commands in one call. `A ; B` runs each in turn, whatever the ones before did; `A && B` runs B
only when everything before it succeeded. Each step is a command or a pipeline (`pipeline.py`), and each is checked
before any runs (a wrong name, a bad option, a stage out of scope: nothing runs, the answer names the step). The
answer holds each step's output under its own header, `[2/3] github create-issue ...`, a failed step's error in its
place and a step `&&` skipped said so; it is one answer, fitted to the call's one budget. `--budget` and `--format`
go before the first command and apply to the whole; an answer's `--more` is a call of its own.

In `command`, an unquoted `;` or `&&` separates steps (quoted, they are data); in `argv`, a token that is exactly `;`
or `&&`. A `;` at the very end is allowed, as in a shell.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..entities import Context
from ..errors import CallError, UsageError
from ..result import Result
from ..text import clip
from . import answers, pipeline

if TYPE_CHECKING:
    from .runtime import Runtime

THEN, AND = ";", "&&"
MAX_STEPS = 100  # as many as `each` runs: 19 shapes or 9 paragraphs are one call


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
        return f"[{number}/{count}] {clip(words, 100)}"


def split_argv(tokens: list[str]) -> list[Step]:
    """`tokens` cut at each token that is exactly `;` or `&&`, each piece cut at `|`."""
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
    return trimmed(steps)


def trimmed(steps: list[Step]) -> list[Step]:
    """Without the empty step a trailing `;` leaves (`a ; b ;`)."""
    if len(steps) > 1 and steps[-1].joiner == THEN and steps[-1].stages == [[]]:
        return steps[:-1]
    return steps


def joined(steps: list[Step]) -> list[str]:
    """The tokens of a whole sequence, as `argv` would give it."""
    return [t for step in steps for t in ([step.joiner] if step.joiner else []) + step.words]


async def run(runtime: Runtime, steps: list[Step], cwd: str | None, context: Context | None,
              local_files: bool) -> Result:  # fmt: skip
    """The answer to a sequence of more than one step: every step checked, then each run in turn (`&&` stops
    after a failure), their outputs under their headers in one answer within the call's budget."""
    count = len(steps)
    try:
        ask = answers.asked(steps[0].stages[0], lambda tokens: None)
        named, ask.prog = ask.prog, ask.prog or runtime.prog  # how the caller runs the tool (see `Runtime.prog`)
        if ask.more is not None:  # the next part of a sequence's answer, as its note gives it: read, not run again
            ask.tokens = joined([Step([ask.tokens, *steps[0].stages[1:]]), *steps[1:]])
            return await answers.more(runtime.tree, runtime.kept, ask, context)
        steps[0].stages[0] = ask.tokens
        _check(runtime, steps, cwd, context, local_files)
    except CallError as exc:
        return runtime.failure(exc, None)
    parts: list[str] = []
    failed: Result | None = None  # the first that failed
    failures = 0
    for number, step in enumerate(steps, 1):
        head = step.label(number, count)
        if step.joiner == AND and failed is not None:
            parts.append(f"{head}: not run, as a command before it failed (`&&`)")
            continue
        result = await runtime.result(step.stages, cwd, context, local_files, named)
        if result.ok:
            parts.append(f"{head}\n{result.output.rstrip()}")
        else:
            failed, failures = failed or result, failures + 1
            said = result.text().removeprefix("Error: ").rstrip()
            parts.append(f"{head}: failed ({result.error or 'error'})\n{said}")
    ask.tokens = joined(steps)
    text = "\n\n".join(parts) + "\n"
    whole = Result(ok=failed is None, path=runtime.tree.name, output=text, error=failed.error if failed else None)
    if failed is not None:
        whole.message = f"Error: {failures} of {count} commands failed; each answer follows under its header."
    return await answers.fit(runtime.tree, runtime.kept, whole, ask, context)


def _check(runtime: Runtime, steps: list[Step], cwd: str | None, context: Context | None, local_files: bool) -> None:
    """Check every step as it would be checked alone, none run; the first that cannot run, named."""
    count = len(steps)
    if count > MAX_STEPS:
        raise UsageError(f"the call has {count} commands, more than the {MAX_STEPS} a sequence may have; split it.")
    for number, step in enumerate(steps, 1):
        if step.stages == [[]]:
            where = "starts with" if number == 1 else "ends with" if number == count else "has two"
            raise UsageError(f"the sequence {where} `{step.joiner or steps[1].joiner}` (command {number} is empty); "
                             "put a command on each side of every `;` and `&&`.")  # fmt: skip
        try:
            runtime.check_stages(step.stages, cwd, context, local_files)
        except CallError as exc:
            exc.message = f"{step.label(number, count)}: {exc.message}"
            raise
