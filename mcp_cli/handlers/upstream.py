"""Upstream MCP servers: started on first use, kept connected, restarted after a crash, closed on shutdown.

A config is one server entry, already normalised (`sources/mcp_config.py`): `{"command", "args", "env", "cwd"}`
for stdio or `{"url", "headers", "transport"}` for streamable HTTP (or SSE), or `{"server"}` holding an in-process
server in tests. `${VAR}` and `${VAR:-default}`
in it are expanded from the environment when the server starts, so frozen trees hold no expanded secrets.
Each server's session lives in a task of its own, so a slow or hung server never blocks the others.
"""

from __future__ import annotations

import logging
import os
import re
import tempfile
import warnings
from collections.abc import Callable, Coroutine
from types import TracebackType
from typing import TYPE_CHECKING, Any, TextIO

import anyio
from anyio.abc import TaskGroup

from ..errors import HandlerError, HandlerTimeout
from .processes import guarded
from .relay import CURRENT, Calls

if TYPE_CHECKING:
    from mcp import Client
    from mcp.types import CallToolResult

log = logging.getLogger("mcp_cli")
START_TIMEOUT = 60.0
PING_TIMEOUT = 3.0
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def expand(value: Any) -> Any:
    """`${VAR}` / `${VAR:-default}` replaced from the environment, in strings, lists and dicts."""
    if isinstance(value, str):
        return _VAR.sub(lambda m: os.environ.get(m.group(1), m.group(2) or ""), value)
    if isinstance(value, list):
        return [expand(v) for v in value]
    if isinstance(value, dict):
        return {k: expand(v) for k, v in value.items()}
    return value


def transport(config: dict[str, Any], errlog: TextIO) -> Any:
    """The client transport for a server config (stdio with stderr to `errlog`, streamable HTTP, or SSE); an
    in-process server object under `server` (`mcp_cli.testing`) is connected over the SDK's in-memory transport."""
    if "server" in config:
        return config["server"]
    config = expand(config)
    if "url" in config:
        headers = config.get("headers") or None
        if config.get("transport") == "sse":
            from mcp.client.sse import sse_client

            return sse_client(config["url"], headers=headers)
        from mcp.client.streamable_http import (  # type: ignore[attr-defined]  # the SDK's own import, not re-exported
            create_mcp_http_client,
            streamable_http_client,
        )

        return streamable_http_client(config["url"], http_client=create_mcp_http_client(headers=headers))
    from mcp import StdioServerParameters
    from mcp.client.stdio import stdio_client

    command, *args = guarded([config["command"], *config.get("args", [])])
    params = StdioServerParameters(command=command, args=args, env=config.get("env") or None, cwd=config.get("cwd"))
    return stdio_client(params, errlog=errlog)


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
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class Upstream:
    """One upstream server and its session, owned by a task in the pool's task group."""

    def __init__(self, name: str, config: dict[str, Any], tg: TaskGroup) -> None:
        self.name, self.config, self.tg = name, config, tg
        self.client: Client | None = None
        self._lock = anyio.Lock()
        self._stop: anyio.Event | None = None
        self._done: anyio.Event | None = None
        self._errlog = tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace")
        self.calls = Calls()  # the calls in flight and the session's callbacks to their clients (`relay.py`)

    def stderr_tail(self, limit: int = 1500) -> str:
        try:
            self._errlog.flush()
            self._errlog.seek(0)
            return self._errlog.read()[-limit:].strip()
        except (OSError, ValueError):
            return ""

    async def session(self) -> Client:
        """The live client session, started if there is none."""
        if self.client is None:
            async with self._lock:
                if self.client is None:  # not started by another call meanwhile
                    return await self._start()
        return self.client

    async def _start(self) -> Client:
        from mcp import Client

        ready, stop, done = anyio.Event(), anyio.Event(), anyio.Event()
        self._stop, self._done, failure = stop, done, {}
        self._errlog.seek(0)
        self._errlog.truncate()

        async def own_session() -> None:
            try:
                mode = self.config.get("mode", "legacy")  # the handshake era unless the config says (`protocol`)
                async with Client(
                    transport(self.config, self._errlog), mode=mode, cache=None, **self.calls.options()
                ) as client:
                    self.client = client
                    ready.set()
                    await stop.wait()
            except Exception as exc:  # a crash ends only this session, never the pool
                failure["error"] = exc
            finally:
                self.client = None
                ready.set()
                done.set()

        self.tg.start_soon(own_session)
        limit = float(self.config.get("startup_timeout") or START_TIMEOUT)
        with anyio.move_on_after(limit):
            await ready.wait()
        if self.client is None:
            stop.set()
            why = describe(failure["error"]) if "error" in failure else f"no answer within {limit:g} s"
            tail = self.stderr_tail()
            raise HandlerError(
                f"upstream server `{self.name}` could not start ({why})."
                + (f"\nIts stderr ends with:\n{tail}" if tail else "")
                + "\nCheck its command and arguments in the configuration; the next call tries again."
            )
        return self.client

    async def close(self) -> None:
        if self._stop is not None:
            self._stop.set()
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
        self, tool: str, arguments: dict[str, Any], timeout: float, path: str, task: bool = False
    ) -> CallToolResult:
        """Call a tool (as a task with `task`) for the current client (`relay.CURRENT`); a crash or a hang is reported,
        and a dead session is replaced on the next call."""
        client = await self.session()
        try:
            with anyio.fail_after(timeout):
                return await self.calls.call(client, tool, arguments, CURRENT.get(), task)
        except TimeoutError:
            dead = not await self.alive()
            if dead:
                await self.close()
            raise HandlerTimeout(
                f"`{path}`: upstream server `{self.name}` did not answer within {timeout:g} s"
                + (" and no longer answers pings; it was stopped and restarts on the next call." if dead else ".")
            ) from None
        except Exception as exc:
            if await self.alive():
                why = describe(exc)
                raise HandlerError(f"`{path}`: upstream server `{self.name}` failed the call: {why}") from None
            tail = self.stderr_tail()
            await self.close()
            raise HandlerError(
                f"`{path}`: upstream server `{self.name}` stopped during the call ({describe(exc)})"
                + (f"; its stderr ends with:\n{tail}\n" if tail else "; ")
                + "it restarts on the next call."
            ) from None


class Upstreams:
    """The pool of upstream servers of a tree; an async context manager that closes them all on exit."""

    def __init__(self, configs: dict[str, dict[str, Any]]) -> None:
        self.configs = configs
        self._servers: dict[str, Upstream] = {}
        self._tg: TaskGroup | None = None
        self.changed: Callable[[Upstream, str], Coroutine[Any, Any, None]] | None = None  # (server, list changed)

    async def __aenter__(self) -> Upstreams:
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        await self.close()
        assert self._tg is not None
        self._tg.cancel_scope.cancel()
        await self._tg.__aexit__(kind, exc, traceback)

    async def close(self) -> None:
        """Stop every started server, all at once (callable from any task)."""
        with anyio.CancelScope(shield=True):
            async with anyio.create_task_group() as tg:
                for server in self._servers.values():
                    tg.start_soon(server.close)

    async def _changed(self, server: Upstream, kind: str) -> None:
        if self.changed is not None and self._tg is not None:  # not in the session's receive loop: it may call
            self._tg.start_soon(self.changed, server, kind)

    def get(self, name: str) -> Upstream:
        if self._tg is None:
            raise HandlerError("upstream servers are not available outside a running server")
        if name not in self._servers:
            if name not in self.configs:
                raise HandlerError(f"no upstream server named `{name}` in this tree")
            server = self._servers[name] = Upstream(name, self.configs[name], self._tg)
            server.calls.changed = lambda kind: self._changed(server, kind)
        return self._servers[name]
