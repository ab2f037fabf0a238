"""The one place where argv becomes a call: resolve the path, show help or parse, run the handler, shape the result."""

from __future__ import annotations

import contextlib
import logging
import shlex
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio

from .. import entities, handlers
from ..entities import Context, domain
from ..errors import BadRequest, CallError, HandlerError, NotFound, UsageError, close_to, unsplittable
from ..handlers import Call, Handler, Kind
from ..handlers.processes import kill_all
from ..result import Result, has_surrogate, wire_text
from ..tree import Command, Group, Node, Topic, Tree
from ..types import LOCAL_FILES
from . import answers, pipeline, schema, topics
from . import help as helptext
from . import parser as argparser
from .builtins import Flow
from .kept import Memory, Store

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

    @property
    def node(self) -> Node:
        return self.walked[-1]

    @property
    def prog(self) -> str:
        return " ".join(n.name for n in self.walked)

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
            stages = self.stages_of(arguments or {})
        except CallError as exc:
            return self.failure(exc, None)
        return await self.run_stages(stages, cwd, context, local_files)

    def stages_of(self, arguments: dict[str, Any]) -> list[list[str]]:
        """The stages of a call: its tokens split at each unquoted `|` of `command`, each `|` token of `argv`."""
        command = arguments.get("command")
        if not isinstance(command, str) or arguments.get("argv") is not None:
            return pipeline.split_argv(self.tokens_of(arguments))
        pieces = pipeline.split_command(command)
        if pieces is None:  # a `|` in it is quoted: data
            return [self.tokens_of(arguments)]
        return [self.tokens_of({"command": piece}, i == 0) if piece.strip() else [] for i, piece in enumerate(pieces)]

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
        # Agents often repeat the tool's own name ("pdf text extract"); drop it unless it names a child.
        if first and tokens and tokens[0] == name and self.tree.root.child(name) is None:
            tokens = tokens[1:]
        if unsplit is not None:
            node = self.invocation(tokens).node
            if not (isinstance(node, Command) and node.handler.get("kind") == "search"):
                raise unsplittable(unsplit)
        return tokens

    def invocation(
        self, tokens: list[str], cwd: str | None = None, context: Context | None = None, local_files: bool = False
    ) -> Invocation:
        """Walk groups by name as far as the tokens go."""
        walked: list[Node] = [self.tree.root]
        i = 0
        while isinstance(walked[-1], Group) and i < len(tokens):
            child = walked[-1].child(tokens[i])
            if child is None:
                break
            walked.append(child)
            i += 1
        return Invocation(self.tree, walked, tokens[i:], cwd, context, local_files)

    async def call(
        self, tokens: list[str], cwd: str | None = None, context: Context | None = None, local_files: bool = False
    ) -> Result:
        """The answer to one call (see `call_tool`), a pipeline when a token is `|`; never raises for what a caller
        sent."""
        return await self.run_stages(pipeline.split_argv(tokens), cwd, context, local_files)

    async def run_stages(
        self, stages: list[list[str]], cwd: str | None = None, context: Context | None = None, local_files: bool = False
    ) -> Result:
        """The answer to a call split into stages, one command or a pipeline (`pipeline.py`), within its token
        budget (`answers.py`: the options it reserves count at the front of the first stage)."""
        try:
            asked = answers.asked(stages[0], self.flags_of if len(stages) == 1 else lambda tokens: None)
            if asked.more is not None:
                return await answers.more(self.tree, self.kept, asked, context)
        except CallError as exc:
            return self.failure(exc, None)
        stages = [asked.tokens, *stages[1:]]
        result = await self.result(stages, cwd, context, local_files)
        asked.tokens = [t for i, stage in enumerate(stages) for t in ([pipeline.SEP] if i else []) + stage]
        return await answers.fit(self.tree, self.kept, result, asked, context)

    def flags_of(self, tokens: list[str]) -> list[str] | None:
        """The option flags of the command `tokens` reach (none for a group or topic; None when not known)."""
        node = self.invocation(tokens).node
        if not isinstance(node, Command):
            return []
        return None if node.passthrough else [f for p in node.params for f in p.flags]

    async def result(
        self, stages: list[list[str]], cwd: str | None = None, context: Context | None = None, local_files: bool = False
    ) -> Result:
        """The whole result of a call's stages, before it is fitted to a budget."""
        reading = LOCAL_FILES.set(local_files)
        try:
            if len(stages) > 1 or stages[0][:1] == [pipeline.DRY_RUN]:
                return await pipeline.run(self, stages, cwd, context, local_files)
            return await self.run_invocation(self.invocation(stages[0], cwd, context, local_files))
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
            return self.failure(CallError(f"internal error in `{inv.prog}`: {type(exc).__name__}: {exc}"), inv)
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
        compiled = _Compiled(parser, checker, self.kinds[cmd.handler["kind"]].make(cmd.handler, self.tree))
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
        call = Call(inv.prog, values, rest, inv.cwd, inv.context, stdin=stdin, usage=helptext.usage)
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
