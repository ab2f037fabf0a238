"""The call level: the one place where a call's arguments become an answer. Cut them into steps and stages, run
them within the call's token budget (`answers.py`) as a sequence (`sequence.py`) or one command or pipeline
(`pipeline.py`), each command by the command level below (`command.py`), which never calls back up. A runtime also
owns what its calls share while it serves: the kinds of handler and what they hold open, the answers kept."""

from __future__ import annotations

import contextlib
import logging
from typing import Any

import anyio

from .. import handlers
from ..errors import CallError
from ..handlers import CallScope, Kind
from ..handlers.processes import kill_all
from ..result import Result
from ..tree import Tree
from . import answers, builtins, jq_pool, sequence
from .command import Commands, internal
from .kept import Memory, Store
from .sequence import Step

log = logging.getLogger("mcp_cli")
RETRY_DELAY, RETRY_MAX = 15.0, 600.0  # seconds before asking a source for its unavailable parts again


class Runtime:
    """Runs argv against a tree. The tree's handler references are checked when the runtime is made (a broken tree
    raises SourceError naming the command); each command is compiled on first use and kept. Given the `kinds` of a
    serving runtime, it runs a part of that one's tree (a client's scope) with its upstream servers and processes,
    and is not entered itself."""

    def __init__(self, tree: Tree, kinds: dict[str, Kind] | None = None) -> None:
        handlers.check(tree)
        self.commands = Commands(tree, handlers.kinds(tree) if kinds is None else kinds)
        self.kept: Store = Memory()  # answers cut to their budget, for their next parts (a server may share one)
        self.prog: str | None = None  # how its callers run the tree, which the notes' calls start with (`mcp-cli run
        # SOURCE --` for a shell's); None: the tool's name; a call's `--prog` wins

    @property
    def tree(self) -> Tree:
        return self.commands.tree

    @property
    def kinds(self) -> dict[str, Kind]:
        return self.commands.kinds

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
        self.commands = Commands(tree, self.kinds)
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

    async def call_tool(self, arguments: dict[str, Any] | None, scope: CallScope | None = None) -> Result:
        """A call from the MCP tool: exactly one of `argv` (list of strings) or `command` (one string), from a caller
        in `scope` (where it works, which commands that run processes run in; its session context, which a call
        that reaches a command adds the entities it names to; whether `@FILE` arguments are read)."""
        try:
            steps = sequence.steps_of(self.commands, arguments or {})
        except CallError as exc:
            return self.commands.failure(exc, None)
        return await self.run_steps(steps, scope)

    async def call(self, tokens: list[str], scope: CallScope | None = None) -> Result:
        """The answer to one call (see `call_tool`), a pipeline when a token is `|`, a sequence when one is `;` or
        `&&`; never raises for what a caller sent."""
        return await self.run_steps(sequence.split_argv(tokens, self.tree), scope)

    async def run_steps(self, steps: list[Step], scope: CallScope | None = None) -> Result:
        """The answer to a call's steps: the steps (`sequence.py`) run within the call's token budget (`answers.py`:
        the options it reserves count at the front of the first stage), each step's stages (`pipeline.py`), each
        stage's command (`command.py`). Never raises: a bug is an `internal` failure, logged, and the server keeps
        serving."""
        commands, scope = self.commands, scope or CallScope()  # the tree the call started on, though another be adopted
        tree, words = commands.tree, steps[0].stages[0]
        one = len(steps) == 1 and len(steps[0].stages) == 1
        if one and words[:1] and words[0] in builtins.USAGE and words[1:] in (["--help"], ["-h"]):
            if tree.root.child(words[0]) is None:  # `each --help`: the built-in explains itself
                return Result(ok=True, path=words[0], output=builtins.help_of(words[0], tree.name))
        try:
            ask = answers.asked(words, commands.flags_of if one else lambda tokens: None)
            named, ask.prog = ask.prog, ask.prog or self.prog  # how the caller runs the tool (see `prog`)
            steps = [Step([ask.tokens, *steps[0].stages[1:]]), *steps[1:]]
            if ask.more is not None:  # the next part of an answer, as its note gives it: read, not run again
                ask.tokens = sequence.joined(steps) if len(steps) > 1 else ask.tokens
                return await answers.more(tree, self.kept, ask, scope.context)
            result = await sequence.run(commands, steps, scope, named)
            ask.tokens = sequence.joined(steps)
            return await answers.fit(tree, self.kept, result, ask, scope.context)
        except CallError as exc:
            return commands.failure(exc, None)
        except Exception as exc:
            log.exception("internal error answering a call of %s", tree.name)
            return commands.failure(internal(exc, tree.name), None)
