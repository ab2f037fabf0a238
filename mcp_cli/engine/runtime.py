"""The one place where argv becomes a call: resolve the path, show help or parse, run the handler, shape the result."""

from __future__ import annotations

import contextlib
import logging
import shlex
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

import anyio

from .. import entities, handlers
from ..entities import Context, domain
from ..errors import BadRequest, CallError, HandlerError, NotFound, UsageError, close_to, unsplittable
from ..handlers import Call, Handler, Kind
from ..handlers.processes import kill_all
from ..result import Result, has_surrogate, wire_text
from ..text import clip
from ..tree import Command, Group, Node, Topic, Tree
from ..types import LOCAL_FILES
from . import answers, builtins, jq_pool, pipeline, schema, sequence, topics
from . import help as helptext
from . import parser as argparser
from .builtins import Flow
from .kept import Memory, Store
from .sequence import Step

if TYPE_CHECKING:
    from argparse import ArgumentParser

log = logging.getLogger("mcp_cli")
HELP = ("-h", "--help")
HELP_ALL = "--help-all"
RETRY_DELAY, RETRY_MAX = 15.0, 600.0  # seconds before asking a source for its unavailable parts again


@dataclass
class Invocation:
    """One call on its way: the tree, the nodes walked from the root, the tokens left, where the caller works, the
    caller's session context, whether its `@FILE` arguments name files of this machine (its surface says: see
    `types.LOCAL_FILES`). Errors carry it, and the help shown with them is rendered from it only when they are."""

    tree: Tree
    walked: list[Node]
    rest: list[str] = field(default_factory=list)
    cwd: str | None = None
    context: Context | None = None
    local_files: bool = False
    piped: Flow | None = None  # what the stage before it in a pipeline gave (`pipeline.py`)
    name: str | None = None  # how the caller runs the tool (`--prog`), which help names it by; None: its name

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
        if isinstance(node, Group):
            text = helptext.group_help(self.prog, node, self.is_root, budget)
            if self.is_root and self.context is not None and self.context.entities:
                text += helptext.in_context([(e.value, e.domains) for e in self.context.entities])
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


class Runtime:
    """Runs argv against a tree. The tree's handler references are checked when the runtime is made (a broken tree
    raises SourceError naming the command); each command is compiled on first use and kept. Given the `kinds` of a
    serving runtime, it runs a part of that one's tree (a client's scope) with its upstream servers and processes,
    and is not entered itself."""

    def __init__(self, tree: Tree, kinds: dict[str, Kind] | None = None) -> None:
        handlers.check(tree)
        self.tree = tree
        self.kinds: dict[str, Kind] = handlers.kinds(tree) if kinds is None else kinds
        self._compiled: dict[int, tuple[Command, _Compiled]] = {}
        self.kept: Store = Memory()  # answers cut to their budget, for their next parts (a server may share one)
        self.prog: str | None = None  # how its callers run the tree, which the notes' calls start with (`mcp-cli run
        # SOURCE --` for a shell's); None: the tool's name; a call's `--prog` wins

    async def __aenter__(self) -> Runtime:
        """Open what calls need while serving: what each kind of handler shares (the pool of upstream servers;
        none start until called), and for a tree with unavailable parts, a background task that asks its source
        again until it has all."""
        self._stack = contextlib.AsyncExitStack()
        try:
            for kind in self.kinds.values():
                await kind.start()
                self._stack.push_async_callback(kind.aclose)
            self._background = await self._stack.enter_async_context(anyio.create_task_group())
        except BaseException:  # what did open closes again
            await self._stack.aclose()
            raise
        if self.tree.rediscover:
            self._background.start_soon(self._rediscover)
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._background.cancel_scope.cancel()
        await self._stack.aclose()
        await jq_pool.POOL.aclose()

    async def _rediscover(self) -> None:
        delay = RETRY_DELAY
        while self.tree.rediscover is not None:
            await anyio.sleep(delay)
            try:
                tree = await self.tree.rediscover()
                handlers.check(tree)
            except Exception as exc:  # the source is still broken: keep serving what is known
                log.info("asking the source again failed: %s", exc)
            else:
                self.adopt(tree)
            delay = min(delay * 2, RETRY_MAX)

    def adopt(self, tree: Tree) -> None:
        """Serve `tree` from now on (a fuller version of the same source); calls under way finish on the old."""
        self.tree = tree
        self._compiled.clear()
        for kind in self.kinds.values():
            kind.adopt(tree)

    async def restart(self, servers: set[str]) -> None:
        """End the sessions of these upstream servers (their login changed): the next call starts them again."""
        for kind in self.kinds.values():
            await kind.restart(servers)

    async def stop(self) -> None:
        """Stop what calls started, from any task: upstream servers and running processes."""
        for kind in self.kinds.values():
            await kind.stop()
        kill_all()

    async def call_tool(
        self,
        arguments: dict[str, Any] | None,
        cwd: str | None = None,
        context: Context | None = None,
        local_files: bool = False,
    ) -> Result:
        """A call from the MCP tool: exactly one of `argv` (list of strings) or `command` (one string).
        `cwd` is where the caller works (commands that run processes run there); `context` is the caller's session
        context, which a call that reaches a command adds the entities it names to; `local_files`: the caller is on
        this machine, so `@FILE` arguments are read (never for an HTTP client)."""
        try:
            steps = self.steps_of(arguments or {})
        except CallError as exc:
            return self.failure(exc, None)
        return await self.run_steps(steps, cwd, context, local_files)

    def steps_of(self, arguments: dict[str, Any]) -> list[Step]:
        """The steps of a call (`sequence.py`), each its stages: its tokens cut at each unquoted `;`, `&&` and `|` of
        `command`, each `;`, `&&` and `|` token of `argv`; the tool's own name dropped in front of each step."""
        command = arguments.get("command")
        if not isinstance(command, str) or arguments.get("argv") is not None:
            steps = sequence.split_argv(self.tokens_of(arguments))
        elif (pieces := pipeline.cut(command)) is None:  # none, or a quote left open: one command, its words
            steps = [Step([self.tokens_of(arguments)])]
        else:
            steps = []
            for sep, piece in pieces:
                first = sep != pipeline.SEP
                tokens = self.tokens_of({"command": piece}, first) if piece.strip() else []
                if first:
                    steps.append(Step([tokens], sep))
                else:
                    steps[-1].stages.append(tokens)
            steps = sequence.trimmed(steps)
        for step in steps[1:]:
            step.stages[0] = self.unnamed(step.stages[0])
        return steps

    async def run_steps(
        self, steps: list[Step], cwd: str | None = None, context: Context | None = None, local_files: bool = False
    ) -> Result:
        """The answer to a call's steps: one command or pipeline as it always was, several as a sequence. Never raises
        (see `run_stages`)."""
        if len(steps) == 1:
            return await self.run_stages(steps[0].stages, cwd, context, local_files)
        try:
            return await sequence.run(self, steps, cwd, context, local_files)
        except Exception as exc:
            log.exception("internal error answering a call of %s", self.tree.name)
            return self.failure(internal(exc, self.tree.name), None)

    def unnamed(self, tokens: list[str]) -> list[str]:
        """Tokens without the tool's own name in front (agents often repeat it: "pdf text extract"), unless it names
        a child."""
        if tokens and tokens[0] == self.tree.name and self.tree.root.child(self.tree.name) is None:
            return tokens[1:]
        return tokens

    def tokens_of(self, arguments: dict[str, Any], first: bool = True) -> list[str]:
        """The tokens of a call (`first`: of its first stage, where the tool's own name is dropped)."""
        argv: list[str] | None = arguments.get("argv")
        command: str | None = arguments.get("command")
        name = self.tree.name
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
            tokens = self.unnamed(tokens)
        if unsplit is not None:
            node = self.invocation(tokens).node
            if not (isinstance(node, Command) and node.handler.free_text):
                raise unsplittable(unsplit)
        return tokens

    def invocation(
        self, tokens: list[str], cwd: str | None = None, context: Context | None = None, local_files: bool = False
    ) -> Invocation:
        """Walk groups by name as far as the tokens go. A name a group lacks that names exactly one node of one of
        its subgroups reaches it there (`everything trigger-elicitation-request`, the tool filed under `everything
        request`): a tool's own name finds it at its server's level."""
        walked: list[Node] = [self.tree.root]
        i = 0
        while isinstance(walked[-1], Group) and i < len(tokens):
            group, token = walked[-1], tokens[i]
            child = group.child(token)
            if child is None:
                below = [(g, c) for g in group.children if isinstance(g, Group) and (c := g.child(token)) is not None]
                if len(below) != 1 or token in HELP:
                    break
                walked.append(below[0][0])
                child = below[0][1]
            walked.append(child)
            i += 1
        return Invocation(self.tree, walked, tokens[i:], cwd, context, local_files)

    async def call(
        self, tokens: list[str], cwd: str | None = None, context: Context | None = None, local_files: bool = False
    ) -> Result:
        """The answer to one call (see `call_tool`), a pipeline when a token is `|`, a sequence when one is `;` or
        `&&`; never raises for what a caller sent."""
        steps = sequence.split_argv(tokens)
        for step in steps[1:]:
            step.stages[0] = self.unnamed(step.stages[0])
        return await self.run_steps(steps, cwd, context, local_files)

    async def run_stages(
        self, stages: list[list[str]], cwd: str | None = None, context: Context | None = None, local_files: bool = False
    ) -> Result:
        """The answer to a call split into stages, one command or a pipeline (`pipeline.py`), within its token
        budget (`answers.py`: the options it reserves count at the front of the first stage). Never raises: a bug
        is an `internal` failure, logged, and the server keeps serving."""
        words = stages[0]
        if len(stages) == 1 and words[:1] and words[0] in builtins.USAGE and words[1:] in (["--help"], ["-h"]):
            if self.tree.root.child(words[0]) is None:  # `each --help`: the built-in explains itself
                return Result(ok=True, path=words[0], output=builtins.help_of(words[0], self.tree.name))
        try:
            asked = answers.asked(stages[0], self.flags_of if len(stages) == 1 else lambda tokens: None)
            named, asked.prog = asked.prog, asked.prog or self.prog
            if asked.more is not None:
                return await answers.more(self.tree, self.kept, asked, context)
            stages = [asked.tokens, *stages[1:]]
            result = await self.result(stages, cwd, context, local_files, named)
            asked.tokens = [t for i, stage in enumerate(stages) for t in ([pipeline.SEP] if i else []) + stage]
            return await answers.fit(self.tree, self.kept, result, asked, context)
        except CallError as exc:
            return self.failure(exc, None)
        except Exception as exc:
            log.exception("internal error answering a call of %s", self.tree.name)
            return self.failure(internal(exc, self.tree.name), None)

    def flags_of(self, tokens: list[str]) -> list[str] | None:
        """The option flags of the command `tokens` reach (none for a group or topic; None when not known)."""
        node = self.invocation(tokens).node
        if not isinstance(node, Command):
            return []
        return None if node.passthrough else [f for p in node.params for f in p.flags]

    async def result(
        self,
        stages: list[list[str]],
        cwd: str | None = None,
        context: Context | None = None,
        local_files: bool = False,
        name: str | None = None,
    ) -> Result:
        """The whole result of a call's stages, before it is fitted to a budget; `name`: how the caller runs the tool
        (`--prog`), which the help of one command's call names it by."""
        reading = LOCAL_FILES.set(local_files)
        try:
            if len(stages) > 1 or stages[0][:1] == [pipeline.DRY_RUN]:
                return await pipeline.run(self, stages, cwd, context, local_files)
            inv = self.invocation(stages[0], cwd, context, local_files)
            inv.name = name
            return await self.run_invocation(inv)
        finally:
            LOCAL_FILES.reset(reading)

    async def run_invocation(self, inv: Invocation) -> Result:
        """The whole result of one command's call, errors included."""
        try:
            result = await self._dispatch(inv)
        except CallError as exc:
            return self.failure(exc, inv)
        except Exception as exc:  # a bug or a broken tree: report it, keep serving
            log.exception("internal error in %s", inv.prog)
            return self.failure(internal(exc, inv.prog), inv)
        result.path = inv.prog
        return result

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

    def check_stages(
        self, stages: list[list[str]], cwd: str | None = None, context: Context | None = None, local_files: bool = False
    ) -> None:
        """Check a call's stages without running any: raise what it would fail with first (a wrong name or bad usage
        with the help of where it got to)."""
        if len(stages) > 1 or stages[0][:1] == [pipeline.DRY_RUN]:
            pipeline.check(self, stages, cwd, context, local_files)
            return
        inv = self.invocation(stages[0], cwd, context, local_files)
        try:
            self.check(inv)
        except (NotFound, UsageError) as exc:
            exc.usage = exc.usage or inv.usage
            raise

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
                raise HandlerError(f"`{inv.prog}` has no commands at the moment. {node.description}".rstrip(), (),
                                   inv.usage)  # fmt: skip
            what = "domain" if inv.is_root else "command"
            names = [n for c in node.children for n in (c.name, *c.aliases)]
            raise NotFound(f"`{inv.prog}` has no {what} `{word}`.", close_to(word, names))
        if not isinstance(node, Command) or self._helps(node, rest):
            return None
        return self._values(node, inv, None)

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
        rest = inv.rest
        if self._helps(cmd, rest):
            full = HELP_ALL in (rest[: rest.index("--")] if "--" in rest else rest)
            return Result(ok=True, output=helptext.command_help(inv.prog, cmd, self.tree.settings.help_budget // 2,
                                                                full))  # fmt: skip
        stdin, base = pipeline.feed(cmd, inv)
        values = self._values(cmd, inv, base)
        if inv.context is not None and cmd.entities:  # named by a call that reached its command, whatever it gives
            inv.context.record(domain(inv.walked), entities.found(cmd.entities, values))
        handler = self._compile(cmd, inv.prog).handler
        call = Call(
            inv.prog, values, rest, inv.cwd, inv.context, stdin=stdin, usage=partial(helptext.usage, counted=True)
        )
        result = await handler.run(call)
        if inv.context is not None and cmd.entities and result.ok and isinstance(result.data, dict):
            inv.context.record(domain(inv.walked), entities.found(cmd.entities, result.data))
        return result

    def failure(self, exc: CallError, inv: Invocation | None) -> Result:
        """The result of a failed call: the error's message; a wrong name or bad usage with the help of where the
        call got to (unless the error brings its own)."""
        if inv is not None and not exc.usage and isinstance(exc, (NotFound, UsageError)):
            exc.usage = inv.usage
        prog = inv.prog if inv is not None else self.tree.name
        return Result(ok=False, path=prog, error=exc.kind, message=wire_text(exc.render()))
