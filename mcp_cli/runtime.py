"""The one place where argv becomes a call: resolve the path, show help or parse, run the handler, shape the result."""

from __future__ import annotations

import logging
import shlex
from typing import Any

import anyio

from . import help as helptext
from . import parser as argparser
from . import schema
from .children import kill_all
from .errors import BadRequest, CallError, HandlerError, NotFound, UsageError, did_you_mean
from .handlers import Call, Handler, resolve
from .result import Result, cap, has_surrogate, wire_text
from .tree import Command, Group, Node, Topic, Tree
from .upstream import Upstreams

log = logging.getLogger("mcp_cli")
HELP = ("-h", "--help")
HELP_ALL = "--help-all"
RETRY_DELAY, RETRY_MAX = 15.0, 600.0  # seconds before asking a source for its unavailable parts again


class Runtime:
    """Runs argv against a tree. Parsers and handlers are built on first use and kept."""

    def __init__(self, tree: Tree) -> None:
        self.tree = tree
        self.upstreams: Upstreams | None = None
        self._parsers: dict[int, Any] = {}
        self._handlers: dict[int, Handler] = {}

    async def __aenter__(self) -> Runtime:
        """Open what calls need while serving: the pool of upstream servers (none start until called), and
        for a tree with unavailable parts, a background task that asks its source again until it has all."""
        if self.tree.upstreams or self.tree.rediscover:
            self.upstreams = await Upstreams(self.tree.upstreams).__aenter__()
        self._background = await anyio.create_task_group().__aenter__()
        if self.tree.rediscover:
            self._background.start_soon(self._rediscover)
        return self

    async def __aexit__(self, *exc: Any) -> None:
        self._background.cancel_scope.cancel()
        await self._background.__aexit__(None, None, None)
        if self.upstreams is not None:
            upstreams, self.upstreams = self.upstreams, None
            await upstreams.__aexit__(*exc)

    async def _rediscover(self) -> None:
        delay = RETRY_DELAY
        while self.tree.rediscover is not None:
            await anyio.sleep(delay)
            try:
                tree = await self.tree.rediscover()
            except Exception as exc:  # the source is still broken: keep serving what is known
                log.info("asking the source again failed: %s", exc)
            else:
                self.adopt(tree)
            delay = min(delay * 2, RETRY_MAX)

    def adopt(self, tree: Tree) -> None:
        """Serve `tree` from now on (a fuller version of the same source); calls under way finish on the old."""
        self.tree = tree
        self._parsers.clear()
        self._handlers.clear()
        if self.upstreams is not None:
            self.upstreams.configs = tree.upstreams

    async def stop(self) -> None:
        """Stop what calls started, from any task: upstream servers and running processes."""
        if self.upstreams is not None:
            await self.upstreams.close()
        kill_all()

    async def call_tool(self, arguments: dict[str, Any] | None, cwd: str | None = None) -> Result:
        """A call from the MCP tool: exactly one of `argv` (list of strings) or `command` (one string).
        `cwd` is where the caller works (commands that run processes run there)."""
        try:
            tokens = self.tokens_of(arguments or {})
        except CallError as exc:
            return self._failure(exc, self.tree.name)
        return await self.call(tokens, cwd)

    def tokens_of(self, arguments: dict[str, Any]) -> list[str]:
        argv, command = arguments.get("argv"), arguments.get("command")
        name = self.tree.name
        example = f'Example: {{"argv": ["--help"]}} or {{"command": "--help"}}; start with `{name} --help`.'
        if argv is not None and command is not None:
            raise BadRequest(f"give either `argv` or `command`, not both. {example}")
        if argv is None and command is None:
            raise BadRequest(f"give `argv` (a list of strings) or `command` (one string). {example}")
        if command is not None:
            try:
                tokens = shlex.split(command, posix=True)
            except ValueError as exc:
                raise BadRequest(
                    f"cannot split `command` like a shell would: {exc}. Quote it, or use `argv`."
                ) from None
        else:
            tokens = list(argv)
        for i, token in enumerate(tokens):
            if "\0" in token:
                raise BadRequest(f"argv[{i}] holds a NUL character, which no command line can carry; remove it.")
            if has_surrogate(token):
                raise BadRequest(f"argv[{i}] holds a lone surrogate, which is not text; send the text as UTF-8.")
        # Agents often repeat the tool's own name ("pdf text extract"); drop it unless it names a child.
        if tokens and tokens[0] == name and self.tree.root.child(name) is None:
            tokens = tokens[1:]
        return tokens

    def resolve(self, tokens: list[str]) -> tuple[Node, list[str], list[str]]:
        """Walk groups by name: (deepest node reached, names walked, remaining tokens)."""
        node: Node = self.tree.root
        names: list[str] = []
        i = 0
        while isinstance(node, Group) and i < len(tokens):
            child = node.child(tokens[i])
            if child is None:
                break
            node, i = child, i + 1
            names.append(child.name)
        return node, names, tokens[i:]

    async def call(self, tokens: list[str], cwd: str | None = None) -> Result:
        node, names, rest = self.resolve(tokens)
        prog = " ".join([self.tree.name, *names])
        try:
            result = await self._dispatch(node, prog, rest, not names, cwd)
        except CallError as exc:
            return self._failure(exc, prog)
        except Exception as exc:  # a bug or a broken tree: report it, keep serving
            log.exception("internal error in %s", prog)
            return self._failure(CallError(f"internal error in `{prog}`: {type(exc).__name__}: {exc}"), prog)
        result.path = prog
        if result.content is None:  # passed-through content items are capped by their handler
            limit = self.tree.settings.max_output
            result.output = cap(result.output, limit, len(result.output) + result.omitted)
        return result

    async def _dispatch(self, node: Node, prog: str, rest: list[str], is_root: bool, cwd: str | None) -> Result:
        budget = self.tree.settings.help_budget
        if isinstance(node, Group):
            listing = helptext.group_help(prog, node, is_root, budget)
            if not rest or rest[0] in HELP:
                return Result(ok=True, output=listing)
            word = rest[0]
            if word.startswith("-"):
                raise UsageError(f"`{prog}` takes no options; unknown option {word}. Pick a name below.", listing)
            if not node.children:  # e.g. a server that could not list its tools: its description says why
                raise HandlerError(f"`{prog}` has no commands at the moment. {node.description}".rstrip(), listing)
            what = "domain" if is_root else "command"
            names = [n for c in node.children for n in (c.name, *c.aliases)]
            raise NotFound(f"`{prog}` has no {what} `{word}`.{did_you_mean(word, names)}", listing)
        if isinstance(node, Topic):
            return Result(ok=True, output=helptext.topic_help(prog, node, rest, budget, self.tree.settings.max_output))
        return await self._run(node, prog, rest, cwd)

    async def _run(self, cmd: Command, prog: str, rest: list[str], cwd: str | None) -> Result:
        before_dashes = rest[: rest.index("--")] if "--" in rest else rest
        own_flags = {f for p in cmd.params for f in p.flags}
        if any(t in (*HELP, HELP_ALL) and t not in own_flags for t in before_dashes):
            full = HELP_ALL in before_dashes
            return Result(ok=True, output=helptext.command_help(prog, cmd, self.tree.settings.help_budget // 2, full))
        values: dict[str, Any] = {}
        if not cmd.passthrough:
            key = id(cmd)
            if key not in self._parsers:
                try:
                    self._parsers[key] = argparser.build(prog, cmd)
                except ValueError as exc:
                    raise CallError(f"`{prog}` cannot run: its parameters are malformed ({exc}).") from None
            try:
                values = argparser.parse(self._parsers[key], cmd, rest)
                if cmd.schema is not None:
                    values = schema.arguments(cmd, values)
            except UsageError as exc:
                exc.usage = helptext.command_help(prog, cmd, self.tree.settings.help_budget // 2)
                raise
        handler = self._handlers.get(id(cmd))
        if handler is None:
            try:
                handler = self._handlers[id(cmd)] = resolve(cmd.handler, self.tree)
            except ValueError as exc:
                raise CallError(f"`{prog}` cannot run: its handler is misconfigured ({exc}).") from None
        call = Call(self.tree, cmd, prog, values, rest, self.upstreams, cwd)
        return await handler.run(call)

    def _failure(self, exc: CallError, prog: str) -> Result:
        return Result(ok=False, path=prog, error=exc.kind, message=wire_text(exc.render()))
