"""Upstream MCP servers: the one owner of their sessions. A server is started on first use (a call, or discovery
listing its tools: `sources/discovery.py`, which leaves the session open in the pool it was given), kept connected,
restarted after a crash, closed on shutdown. `mcp-cli login` opens its session here too.

Each server's config is typed once (`server_config.py`: stdio, streamable HTTP or SSE, in-process), its `${VAR}`s
expanded when it starts. Each server's session lives in a task of its own, so a slow or hung server never blocks
the others.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import tempfile
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
from anyio.abc import TaskGroup

from ..errors import HandlerError, HandlerTimeout
from .relay import Answer, Calls, Relay
from .server_config import Http, InProcess, ServerConfig, UnsetVariable, parse
from .streams import ReadStream

if TYPE_CHECKING:
    from mcp import Client

    from .oauth import Provider
    from .stdio_client import DirectLine

log = logging.getLogger("mcp_cli")
START_TIMEOUT = 60.0
PING_TIMEOUT = 3.0
T = TypeVar("T")


class StartFailed(HandlerError):
    """A server that did not start: `why` in one line, the end of its stderr (`tail`), and whether it wants an
    OAuth login (`login`); the message says all of it."""

    def __init__(self, message: str, why: str, tail: str = "", login: bool = False) -> None:
        super().__init__(message)
        self.why, self.tail, self.login = why, tail, login


class _OneLine(logging.Filter):
    """The SDK logs an upstream's stray stdout line ("Failed to parse JSONRPC message") with a traceback; one
    line says it all. Other records keep theirs."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and record.exc_info[1] is not None and "Failed to parse" in str(record.msg):
            lines = [line.strip() for line in str(record.exc_info[1]).splitlines() if line.startswith(" ")]
            why = lines[0] if lines else describe(record.exc_info[1])  # pydantic's detail: what the line was
            record.msg, record.args, record.exc_info = f"{record.getMessage()}: {why}", (), None
        return True


logging.getLogger("mcp.client.stdio").addFilter(_OneLine())


def describe(exc: BaseException) -> str:
    """One line for an exception, looking inside exception groups."""
    while members := getattr(exc, "exceptions", None):  # an exception group: tell its first member
        exc = members[0]
    if isinstance(exc, FileNotFoundError) and exc.filename and not os.path.dirname(str(exc.filename)):
        return f"command `{exc.filename}` not found on PATH: install it, or give its full path in the configuration"
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class _Heard(ReadStream):
    """A transport's read stream that notes when the upstream last sent anything (`Upstream.heard`)."""

    def __init__(self, read: Any, upstream: Upstream) -> None:
        super().__init__(read)
        self.upstream = upstream

    async def receive(self) -> Any:
        item = await self.read.receive()
        self.upstream.heard = anyio.current_time()
        return item


def needs_login(exc: BaseException, depth: int = 0) -> bool:
    """Whether an exception (a group, or one raised from another) comes from a server that wants an OAuth login."""
    from .oauth import LoginRequired

    if isinstance(exc, LoginRequired):
        return True
    inner = [*getattr(exc, "exceptions", ()), exc.__cause__, exc.__context__]
    return depth < 8 and any(needs_login(e, depth + 1) for e in inner if e is not None)


class Upstream:
    """One upstream server and its session, owned by a task in the pool's task group.

    A call that outlives its timeout fails alone. The server is stopped (and restarted on the next call) only when
    it has stopped answering everything: nothing heard from it since that call was sent, and no answer to a ping.
    A busy server, which answered something else meanwhile, is left running."""

    def __init__(self, config: ServerConfig, tg: TaskGroup, auth: Provider | None = None) -> None:
        self.name, self.config, self.tg, self.auth = config.name, config, tg, auth
        self.client: Client | None = None
        self.direct: DirectLine | None = None  # the session's transport's line for requests of our own (stdio)
        self._heard = -math.inf  # when the server last sent the session anything (anyio's clock)
        self._lock = anyio.Lock()
        self._starts = 0  # starts tried; calls that waited for one that failed are told its failure
        self._failed: HandlerError | None = None
        self.ended: BaseException | None = None  # what ended the last session, if it failed
        self._stop: anyio.Event | None = None
        self._done: anyio.Event | None = None
        self._starting: anyio.CancelScope | None = None  # the start under way, cancelled by `close`
        self.started = 0  # sessions started
        self._errlog = tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace")
        self.calls = Calls()  # the calls in flight and the session's callbacks to their clients (`relay.py`)

    @property
    def stopping(self) -> bool:
        """Its session is being stopped (`close`): what fails on it now fails because of that."""
        return self._stop is not None and self._stop.is_set()

    @property
    def heard(self) -> float:
        """When the server last sent anything: to the session, or an answer on the direct line (anyio's clock)."""
        return max(self._heard, self.direct.heard) if self.direct is not None else self._heard

    @heard.setter
    def heard(self, when: float) -> None:
        self._heard = when

    def stderr_tail(self, limit: int = 1500) -> str:
        try:
            self._errlog.flush()
            self._errlog.seek(0)
            return self._errlog.read()[-limit:].strip()
        except (OSError, ValueError):
            return ""

    async def session(self, limit: float | None = None) -> Client:
        """The live client session, started if there is none (within `limit` seconds, else the config's
        `startup_timeout`, else START_TIMEOUT; `StartFailed` if not). Calls that arrive while it starts are all
        answered when that start ends: with the session, or with the start's failure."""
        if self.client is None:
            starts = self._starts
            async with self._lock:
                if self.client is None:  # not started by another call meanwhile
                    if self._starts != starts and self._failed is not None:  # a start this call waited for failed
                        raise self._failed
                    self._starts += 1
                    try:
                        self._failed = None
                        return await self._start(limit)
                    except HandlerError as exc:
                        self._failed = exc
                        raise
        return self.client

    async def _start(self, limit: float | None) -> Client:
        from mcp import Client

        try:
            self.config.expanded()
        except UnsetVariable as exc:
            raise StartFailed(f"upstream server `{self.name}` cannot start: {exc}", str(exc)) from None
        ready, stop, done = anyio.Event(), anyio.Event(), anyio.Event()
        self._stop, self._done, failure, self.ended = stop, done, {}, None
        self._errlog.seek(0)
        self._errlog.truncate()
        scope = self._starting = anyio.CancelScope()

        @contextlib.asynccontextmanager
        async def heard() -> AsyncIterator[tuple[_Heard, Any]]:
            async with self.config.target(self._errlog, self.auth or self._login()) as (read, write):
                self.direct = getattr(read, "direct", None)
                yield _Heard(read, self), write

        # an in-process server is connected to as it is (`mcp.Client` takes it); a transport is watched (`heard`)
        target = self.config.server if isinstance(self.config, InProcess) else heard()

        async def own_session() -> None:
            try:
                with scope:  # the handshake era unless the config says (`protocol`)
                    async with Client(target, mode=self.config.mode, cache=None, **self.calls.options()) as client:
                        self.client = client
                        ready.set()
                        await stop.wait()
            except Exception as exc:  # a crash ends only this session, never the pool
                failure["error"] = self.ended = exc
            finally:
                self.client = self.direct = None
                ready.set()
                done.set()

        self.started += 1
        self.tg.start_soon(own_session)
        limit = limit or self.config.startup_timeout or START_TIMEOUT
        with anyio.move_on_after(limit):
            await ready.wait()
        if self.client is None:
            scope.cancel()  # a start given up on: stop the server, which may still be starting
            if "error" in failure and needs_login(failure["error"]):
                hint = f"upstream server `{self.name}` {self._login_hint()}"
                raise StartFailed(hint, "needs an OAuth login", login=True)
            why = describe(failure["error"]) if "error" in failure else f"no answer within {limit:g} s"
            tail = self.stderr_tail()
            raise StartFailed(
                f"upstream server `{self.name}` could not start ({why})."
                + (f"\nIts stderr ends with:\n{tail}" if tail else "")
                + "\nCheck its command and arguments in the configuration; the next call tries again.",
                why,
                tail,
            )
        return self.client

    def _login(self) -> Provider | None:
        """The OAuth provider of the user's stored login, for an HTTP server OAuth applies to (else None)."""
        from .oauth import provider

        return provider(self.config) if isinstance(self.config, Http) else None

    def _login_hint(self) -> str:
        return (
            f"needs an OAuth login: run `mcp-cli login CONFIG {self.name}` with the configuration it comes from, "
            "then call again."
        )

    async def close(self) -> None:
        if self._stop is not None:
            self._stop.set()
        if self.client is None and self._starting is not None:  # still starting: stop that too
            self._starting.cancel()
        if self._done is not None:
            with anyio.move_on_after(10):
                await self._done.wait()

    async def alive(self) -> bool:
        client = self.client
        if client is None:
            return False
        with anyio.move_on_after(PING_TIMEOUT), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # ping is deprecated in the 2026 protocol; fine on legacy sessions
            try:
                await client.send_ping()
                return True
            except Exception:
                return False
        return False

    async def call(
        self,
        tool: str,
        arguments: dict[str, Any],
        timeout: float,
        path: str,
        task: bool = False,
        relay: Relay | None = None,
    ) -> Answer:
        """Call a tool (as a task with `task`) for the client behind `relay` (the call's: `CallScope.relay`)."""
        plain = self.config.mode == "legacy"  # a handshake-era session: its answers are relayed as they come
        return await self.ask(
            lambda client: self.calls.call(client, tool, arguments, relay, task, plain, self.direct), timeout, path
        )

    async def ask(self, send: Callable[[Client], Awaitable[T]], timeout: float, path: str) -> T:
        """What `send` asks of the session (a tool call, a resource read, ...) for `path` (what the caller named);
        a crash or a hang is reported, and a dead session is replaced on the next call."""
        client = await self.session()
        sent = anyio.current_time()
        try:
            with anyio.fail_after(timeout):
                return await send(client)
        except TimeoutError:
            raise HandlerTimeout(
                f"`{path}`: upstream server `{self.name}` did not answer within {timeout:g} s"
                + await self._timed_out(sent)
            ) from None
        except Exception as exc:
            if _answered(exc) or await self.alive():
                why = describe(exc)
                raise HandlerError(f"`{path}`: upstream server `{self.name}` failed the call: {why}") from None
            tail = self.stderr_tail()
            await self.close()
            if needs_login(exc) or (self.ended is not None and needs_login(self.ended)):  # a grant revoked, say
                raise HandlerError(f"`{path}`: upstream server `{self.name}` {self._login_hint()}") from None
            raise HandlerError(
                f"`{path}`: upstream server `{self.name}` stopped during the call ({describe(exc)})"
                + (f"; its stderr ends with:\n{tail}\n" if tail else "; ")
                + "it restarts on the next call."
            ) from None

    async def _timed_out(self, sent: float) -> str:
        """What a call sent at `sent` that ran out of time says of the server, which is stopped if it has stopped
        answering everything."""
        if self.heard > sent:
            ago = anyio.current_time() - self.heard
            return f"; it is busy (it answered something else {ago:.1f} s ago), so it was left running."
        if await self.alive():
            return "; it still answers pings, so it was left running."
        silent = anyio.current_time() - max(self.heard, sent)
        await self.close()
        return (
            f"; it has sent nothing for {silent:.0f} s and no longer answers pings: it was stopped and restarts "
            "on the next call."
        )


def _answered(exc: Exception) -> bool:
    """Whether `exc` is the server's own error answer (so it is there), not the connection ending."""
    from mcp.shared.exceptions import MCPError
    from mcp.types import CONNECTION_CLOSED

    return isinstance(exc, MCPError) and exc.code != CONNECTION_CLOSED


class Upstreams:
    """The pool of upstream servers: the one place their sessions are opened. Its servers are a tree's (`configs`,
    the entries of its `upstreams`, each typed once when first used) and those discovery opened (`open`).

    An async context manager that closes them all on exit; or, given a task group (`tg`) that outlives it, a pool
    whose sessions live in that group (a host that lists a source's tools and then serves them: the sessions
    discovery opened are the ones its calls use), closed with `close`. `auth`: the OAuth provider its HTTP servers
    log in with (`mcp-cli login`), instead of the user's stored logins."""

    def __init__(
        self, configs: Mapping[str, Any] | None = None, tg: TaskGroup | None = None, auth: Provider | None = None
    ) -> None:
        self.configs: Mapping[str, Any] = configs or {}
        self._servers: dict[str, Upstream] = {}
        self._tg, self._own, self.auth = tg, tg is None, auth
        self.changed: Callable[[Upstream, str], Coroutine[Any, Any, None]] | None = None  # (server, list changed)

    async def __aenter__(self) -> Upstreams:
        if self._own:
            self._tg = anyio.create_task_group()
            await self._tg.__aenter__()
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        await self.close()
        if self._own:
            assert self._tg is not None
            self._tg.cancel_scope.cancel()
            # what ends the `async with` body goes on as it is, not wrapped in the group's ExceptionGroup
            await self._tg.__aexit__(None, None, None)
            self._tg = None

    async def close(self, names: set[str] | None = None) -> None:
        """Stop every started server (those `names` only, if given), all at once (callable from any task); a server
        stopped starts again on its next call."""
        with anyio.CancelScope(shield=True):
            async with anyio.create_task_group() as tg:
                for name, server in list(self._servers.items()):
                    if names is None or name in names:
                        tg.start_soon(server.close)

    def close_soon(self, name: str) -> None:
        """Stop a server in the background (discovery gave up on it; its caller goes on)."""
        server = self._servers.get(name)
        if server is not None and self._tg is not None:
            self._tg.start_soon(server.close)

    async def _changed(self, server: Upstream, kind: str) -> None:
        if self.changed is not None and self._tg is not None:  # not in the session's receive loop: it may call
            self._tg.start_soon(self.changed, server, kind)

    def _tg_or_fail(self) -> TaskGroup:
        if self._tg is None:
            raise HandlerError("upstream servers are not available outside a running server")
        return self._tg

    def _add(self, config: ServerConfig) -> Upstream:
        server = self._servers[config.name] = Upstream(config, self._tg_or_fail(), self.auth)
        server.calls.changed = lambda kind: self._changed(server, kind)
        return server

    def get(self, name: str) -> Upstream:
        """The server `name` of the tree (or one discovery opened); `BadConfig` for a broken entry."""
        self._tg_or_fail()
        if name not in self._servers:
            if name not in self.configs:
                raise HandlerError(f"no upstream server named `{name}` in this tree")
            return self._add(parse(name, self.configs[name]))
        return self._servers[name]

    def open(self, config: ServerConfig) -> Upstream:
        """The server of `config`, kept under its name: the one there if its config is the same (its session, if
        it has one, is used as it is), else a new one (the old one is stopped)."""
        self._tg_or_fail()
        known = self._servers.get(config.name)
        if known is not None and known.config.entry == config.entry:
            return known
        if known is not None:
            self.close_soon(config.name)
        return self._add(config)

    @property
    def servers(self) -> Mapping[str, Upstream]:
        """The servers used so far, by name."""
        return self._servers
