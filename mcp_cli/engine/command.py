"""The command level: one command's call. Walk the tree as far as the tokens go, check and parse them into the values
its handler gets, run the handler, answer a failure with the help of where the call got to. The call level above it
(`runtime.py`, `sequence.py`, `pipeline.py`: steps, stages, budgets, answers) hands it invocations; it never calls
back up."""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import entities
from ..entities import domain
from ..errors import CallError, HandlerError, NotFound, UsageError, close_to
from ..handlers import Call, CallScope, Handler, Kind
from ..result import Result, wire_text
from ..text import clip
from ..tree import Command, Group, Node, Topic, Tree
from ..types import LOCAL_FILES
from . import answers, schema, topics
from . import help as helptext
from . import parser as argparser
from .builtins import Flow

if TYPE_CHECKING:
    from argparse import ArgumentParser

log = logging.getLogger("mcp_cli")
HELP = ("-h", "--help")
HELP_ALL = "--help-all"


@dataclass
class Invocation:
    """One command's call on its way: the tree, the nodes walked from the root, the tokens left, what the call
    carries from its caller (`scope`). Errors carry it, and the help shown with them is rendered from it only when
    they are."""

    tree: Tree
    walked: list[Node]
    rest: list[str] = field(default_factory=list)
    scope: CallScope = field(default_factory=CallScope)
    piped: Flow | None = None  # what the stage before it in a pipeline gave (`pipeline.py`)
    name: str | None = None  # how the caller runs the tool (`--prog`), which help names it by; None: its name
    # groups' listings rendered for the tree's calls (`Commands`): the same tree, the same bytes, rendered once
    listings: dict[tuple[str, int, bool], tuple[Group, str]] = field(default_factory=dict, repr=False, compare=False)

    @property
    def node(self) -> Node:
        return self.walked[-1]

    @property
    def prog(self) -> str:
        return " ".join([self.name or self.walked[0].name, *(n.name for n in self.walked[1:])])

    @property
    def is_root(self) -> bool:
        return len(self.walked) == 1

    def usage(self) -> str:
        """The help of where the call got to: a group's listing, a command's usage."""
        node, budget = self.node, self.tree.settings.help_budget
        context = self.scope.context
        if isinstance(node, Group):
            key = (self.prog, id(node), self.is_root)
            kept = self.listings.get(key)
            if kept is None or kept[0] is not node:
                kept = self.listings[key] = (node, helptext.group_help(self.prog, node, self.is_root, budget))
            text = kept[1]
            if self.is_root and context is not None and context.entities:
                text += helptext.in_context([(e.value, e.domains) for e in context.entities])
            return text
        if isinstance(node, Command):
            return helptext.command_help(self.prog, node, budget // 2)
        return ""


def internal(exc: BaseException, where: str) -> CallError:
    """The `internal` error a bug (`exc`) in a call of `where` is answered with (what it was, briefly)."""
    return CallError(f"internal error in `{where}`: {type(exc).__name__}: {clip(str(exc), 300)}")


@dataclass
class _Compiled:
    """What a command needs to run, made on its first call and kept: its parser, schema checker and handler."""

    parser: ArgumentParser | None  # None for a passthrough command
    checker: schema.Checker | None
    handler: Handler


class Commands:
    """The commands of one tree, each compiled on first use and kept, run with the handlers its `kinds` make. A
    runtime makes a new one when it adopts a new tree; calls under way finish on the old."""

    def __init__(self, tree: Tree, kinds: dict[str, Kind]) -> None:
        self.tree = tree
        self.kinds = kinds
        self._compiled: dict[int, tuple[Command, _Compiled]] = {}
        self._listings: dict[tuple[str, int, bool], tuple[Group, str]] = {}  # see `Invocation.listings`

    def invocation(self, tokens: list[str], scope: CallScope | None = None) -> Invocation:
        """Walk groups by name as far as the tokens go. A name a group lacks that names exactly one node of one of
        its subgroups reaches it there (`everything trigger-elicitation-request`, the tool filed under `everything
        request`): a tool's own name finds it at its server's level."""
        walked: list[Node] = [self.tree.root]
        i = 0
        while isinstance(walked[-1], Group) and i < len(tokens):
            group, token = walked[-1], tokens[i]
            child = group.child(token)
            if child is None:
                if token in HELP:
                    break
                below = [(g, c) for g in group.children if isinstance(g, Group) and (c := g.child(token)) is not None]
                if len(below) != 1:
                    break
                walked.append(below[0][0])
                child = below[0][1]
            walked.append(child)
            i += 1
        return Invocation(self.tree, walked, tokens[i:], scope or CallScope(), listings=self._listings)

    def flags_of(self, tokens: list[str]) -> list[str] | None:
        """The option flags of the command `tokens` reach (none for a group or topic; None when not known)."""
        node = self.invocation(tokens).node
        if not isinstance(node, Command):
            return []
        return None if node.passthrough else [f for p in node.params for f in p.flags]

    def check(self, inv: Invocation) -> dict[str, Any] | None:
        """Check a call without running it: raise what it would fail with before its handler runs; the values its
        handler would get (None for help, a group's listing or a topic). The values of an upstream tool given an
        object by a pipeline stage are checked when it runs (the object may hold what is required)."""
        node, rest = inv.node, inv.rest
        if isinstance(node, Group):
            if not rest or rest[0] in HELP:
                return None
            word = rest[0]
            if word.startswith("-"):
                raise UsageError(f"`{inv.prog}` takes no options; unknown option {word}. Pick a name below.")
            if not node.children:  # e.g. a server that could not list its tools: its description says why
                raise HandlerError(
                    f"`{inv.prog}` has no commands at the moment. {node.description}".rstrip(), (), inv.usage
                )
            what = "domain" if inv.is_root else "command"
            names = [n for c in node.children for n in (c.name, *c.aliases)]
            near = [*named_in_summaries(word, node.children), *close_to(word, names)]
            raise NotFound(f"`{inv.prog}` has no {what} `{word}`.", list(dict.fromkeys(near))[:3])
        if not isinstance(node, Command) or self._helps(node, rest):
            return None
        with _reading(inv.scope):
            return self._values(node, inv, None)

    def checked(self, inv: Invocation) -> None:
        """`check`, its wrong name or bad usage raised with the help of where the call got to."""
        try:
            self.check(inv)
        except (NotFound, UsageError) as exc:
            exc.usage = exc.usage or inv.usage
            raise

    async def run(self, inv: Invocation) -> Result:
        """The whole result of one command's call, errors included."""
        try:
            with _reading(inv.scope):
                result = await self._dispatch(inv)
        except CallError as exc:
            return self.failure(exc, inv)
        except Exception as exc:  # a bug or a broken tree: report it, keep serving
            log.exception("internal error in %s", inv.prog)
            return self.failure(internal(exc, inv.prog), inv)
        result.path = inv.prog
        return result

    def failure(self, exc: CallError, inv: Invocation | None) -> Result:
        """The result of a failed call: the error's message; a wrong name or bad usage with the help of where the
        call got to (unless the error brings its own)."""
        if inv is not None and not exc.usage and isinstance(exc, (NotFound, UsageError)):
            exc.usage = inv.usage
        prog = inv.prog if inv is not None else self.tree.name
        return Result(ok=False, path=prog, error=exc.kind, message=wire_text(exc.render()))

    async def _dispatch(self, inv: Invocation) -> Result:
        node = inv.node
        if isinstance(node, Group):
            self.check(inv)
            return Result(ok=True, output=inv.usage())
        if isinstance(node, Topic):
            settings = self.tree.settings
            pages = answers.room(settings.budget)  # a document's parts each fit an answer's budget
            return Result(ok=True, output=topics.read(inv.prog, node, inv.rest, settings.help_budget, pages))
        return await self._run(node, inv)

    def _helps(self, cmd: Command, rest: list[str]) -> bool:
        """Whether the tokens ask a command for its help (`-h`, `--help`, `--help-all`, unless its own options)."""
        before_dashes = rest[: rest.index("--")] if "--" in rest else rest
        own_flags = {f for p in cmd.params for f in p.flags}
        return any(t in (*HELP, HELP_ALL) and t not in own_flags for t in before_dashes)

    def _values(self, cmd: Command, inv: Invocation, base: dict[str, Any] | None) -> dict[str, Any]:
        """The values a command's handler gets from the tokens (under them, `base`: an object piped into an
        upstream tool)."""
        compiled = self._compile(cmd, inv.prog)
        if compiled.parser is None:
            return {}
        values = argparser.parse(compiled.parser, cmd, inv.rest)
        if compiled.checker is not None and (base is not None or inv.piped is None):
            values = schema.arguments(cmd, values, compiled.checker, base)
        return values

    def checker(self, cmd: Command, prog: str) -> schema.Checker | None:
        """The schema checker of a command run as `prog`, made once with its parser, as its call makes it (None for a
        command that has no schema)."""
        return self._compile(cmd, prog).checker

    def _compile(self, cmd: Command, prog: str) -> _Compiled:
        kept = self._compiled.get(id(cmd))
        if kept is not None and kept[0] is cmd:
            return kept[1]
        try:
            parser = None if cmd.passthrough else argparser.build(prog, cmd)
        except ValueError as exc:  # parameters argparse refuses (a required positional in an exclusive group)
            raise CallError(f"`{prog}` cannot run: its parameters are malformed ({exc}).") from None
        checker = schema.checker(cmd) if cmd.schema is not None and not cmd.passthrough else None
        compiled = _Compiled(parser, checker, self.kinds[cmd.handler.kind].make(cmd.handler, self.tree))
        self._compiled[id(cmd)] = (cmd, compiled)  # the command is kept too: its id is never reused meanwhile
        return compiled

    async def _run(self, cmd: Command, inv: Invocation) -> Result:
        rest, context = inv.rest, inv.scope.context
        if self._helps(cmd, rest):
            full = HELP_ALL in (rest[: rest.index("--")] if "--" in rest else rest)
            return Result(
                ok=True, output=helptext.command_help(inv.prog, cmd, self.tree.settings.help_budget // 2, full)
            )
        stdin, base = feed(cmd, inv)
        values = self._values(cmd, inv, base)
        if context is not None and cmd.entities:  # named by a call that reached its command, whatever it gives
            context.record(domain(inv.walked), entities.found(cmd.entities, values))
        handler = self._compile(cmd, inv.prog).handler
        call = Call(inv.prog, values, rest, inv.scope, stdin=stdin, usage=helptext.arguments)
        result = await handler.run(call)
        if context is not None and cmd.entities and result.ok and isinstance(result.data, dict):
            context.record(domain(inv.walked), entities.found(cmd.entities, result.data))
        return result


@contextlib.contextmanager
def _reading(scope: CallScope) -> Iterator[None]:
    """While a command is checked or run, whether its `@FILE` arguments are read (`types.LOCAL_FILES`: argparse's
    type callbacks, which no parameter reaches, read it)."""
    reading = LOCAL_FILES.set(scope.local_files)
    try:
        yield
    finally:
        LOCAL_FILES.reset(reading)


def feed(cmd: Command, inv: Invocation) -> tuple[bytes | None, dict[str, Any] | None]:
    """What a command stage gets of the previous stage's output: a script's standard input, or an upstream tool's
    arguments object (under the options given); (None, None) outside a pipeline."""
    flow = inv.piped
    if flow is None:
        return None, None
    taker = takes(cmd)
    if taker == "stdin":
        return flow.text.encode("utf-8"), None
    if flow.is_json and isinstance(flow.value, dict):
        return None, flow.value
    raise UsageError(
        f"`{inv.prog}` takes a JSON object as its arguments, but its input is {flow.shape()}; make one "
        "with jq first, e.g. | jq '{path: .[0]}'."
    )


def takes(cmd: Command) -> str | None:
    """How a command takes a previous stage's output: "stdin" (a script), "arguments" (an upstream tool), or None."""
    piped_as = cmd.handler.piped_as
    return piped_as if piped_as != "arguments" or cmd.schema is not None else None


def named_in_summaries(word: str, children: list[Node]) -> list[str]:
    """The children whose summary names `word` as words of its own: a server a row calls by its product's name
    (`pipedrive` -> `mcp`, whose row reads `Pipedrive: contacts, deals, company.`), which no spelling of its key
    is close to."""
    said = re.sub(r"[-_]+", " ", word).strip().lower()
    if len(said) < 3:
        return []
    pattern = re.compile(rf"(?<![\w-]){re.escape(said)}(?![\w-])")
    return [c.name for c in children if pattern.search(c.summary.lower())]
