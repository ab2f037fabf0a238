"""The stdio wire without a thread per message: the event loop reads stdin and writes stdout itself.

The SDK's stdio transport reads and writes through worker threads, two thread hand-offs per call; here its
transport is given pipe-backed files the event loop serves directly. As the SDK does, fd 0 then reads the
null device and fd 1 writes to stderr while serving, so children and stray prints never touch the wire.
Stdin that is not a pipe, socket or terminal (a regular file, the null device) is left to the SDK's own files.

In front of the SDK's server, a `Front` answers plain tool calls off the wire itself: a 2026-era client's `tools/call`
that nothing can come back to inside the call (the client declared nothing it could answer, and asks for neither
progress nor log messages) is checked as the SDK checks it, run, and its result shaped as the SDK shapes it, without
the SDK's tasks and models between the line read and the line written. Everything else goes to the SDK's server.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import stat
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

import anyio
from anyio.abc import TaskGroup
from mcp import types
from mcp.server.stdio import stdio_server
from mcp.shared.dispatcher import coerce_request_id
from mcp.shared.inbound import InboundModernRoute, classify_inbound_request
from mcp.types import CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY, PROTOCOL_VERSION_META_KEY
from mcp.types import methods as spec

from ..entities import META_KEY
from ..handlers.relay import offers
from .unreadable import cut, invalid_id

log = logging.getLogger("mcp_cli")

LINE_LIMIT = 64 * 2**20  # bytes of one message; a longer one is answered "too large" (see unreadable)
_KEPT = 65536  # bytes of a cut message kept: enough for the answer to find its id
STOP_WRITE = 5.0  # seconds a call in flight when the server stops has to be told so (the SDK's bound)
_CLOSED = {"code": types.CONNECTION_CLOSED, "message": "Connection closed"}  # the SDK's, to a call it stops


class _Lines:
    """The lines of a pipe, decoded as UTF-8 (bytes that are not UTF-8 read as U+FFFD, as the SDK does). A request
    whose id the SDK would take for none (`unreadable.invalid_id`) is answered on `out` here, not handed on."""

    def __init__(self, reader: asyncio.StreamReader, out: _Out, front: Front | None = None) -> None:
        self.reader, self.out, self.front = reader, out, front

    def __aiter__(self) -> _Lines:
        return self

    async def __anext__(self) -> str:
        while True:
            try:
                line = await self.reader.readuntil(b"\n")
            except asyncio.IncompleteReadError as exc:  # the last line, without its newline
                line = exc.partial
            except asyncio.LimitOverrunError:  # too long to hold: keep its start, drop the rest of the line
                line = await self._cut()
            if not line:
                raise StopAsyncIteration
            text = line.decode("utf-8", errors="replace")
            refusal = invalid_id(text)
            if refusal is None:
                if self.front is not None and self.front.take(text, self.out):
                    continue
                return text
            await self.out.write(refusal.model_dump_json(by_alias=True, exclude_unset=True) + "\n")
            await self.out.flush()

    async def _cut(self) -> bytes:
        """A line over LINE_LIMIT: its start, marked as cut with its size (see `unreadable.cut`)."""
        start = await self.reader.readexactly(_KEPT)
        size = len(start)
        while True:
            try:
                size += len(await self.reader.readuntil(b"\n")) - 1
                break
            except asyncio.LimitOverrunError as exc:
                size += len(await self.reader.readexactly(exc.consumed))
            except asyncio.IncompleteReadError as exc:
                size += len(exc.partial)
                break
        return cut(start, size, LINE_LIMIT)


Call = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]  # a call's params -> its CallToolResult in wire form
_ENVELOPE = {PROTOCOL_VERSION_META_KEY, CLIENT_INFO_META_KEY, CLIENT_CAPABILITIES_META_KEY, META_KEY}  # `_meta` taken


class Front:
    """Plain tool calls answered off the wire (see the module's docstring), by `call`; `stamp` gives the server's
    `serverInfo` stamp of 2026-era results. The client's first request decides its era, as the SDK decides it; until
    the server is `ready` (its runtime started), and for a handshake-era client, every line goes to the SDK."""

    def __init__(self, call: Call, stamp: Callable[[], dict[str, Any]]) -> None:
        self.call, self.stamp = call, stamp
        self.modern: bool | None = None  # the client's era, once its first request said it
        self.ready = False
        self.stopping = False
        self.tg: TaskGroup | None = None
        self.running: dict[types.RequestId, anyio.CancelScope] = {}
        self._ended = anyio.Event()  # set when the last call in flight ends while stopping
        # the last envelope that passed the SDK's checks, and its protocol version
        self._accepted: tuple[dict[str, Any], str] | None = None

    def take(self, text: str, out: _Out) -> bool:
        """Whether the line `text` is answered here (on `out`): a plain call, or the cancellation of one."""
        try:
            return self._take(text, out)
        except Exception:  # a bug here: the SDK answers the line
            log.exception("could not read a line for a plain call")
            return False

    def _take(self, text: str, out: _Out) -> bool:
        if self.modern is None:
            self._era(text)
            return False
        if not (self.modern and self.ready and self.tg is not None):
            return False
        if '"tools/call"' in text:
            plain = self._plain(text)
            if plain is None:
                return False
            request_id, version, params = plain
            scope = self.running[coerce_request_id(request_id)] = anyio.CancelScope()
            self.tg.start_soon(self._answer, request_id, version, params, scope, out)
            return True
        if '"notifications/cancelled"' in text:
            return self._cancelled(text)
        return False

    def _era(self, text: str) -> None:
        try:
            message = types.jsonrpc_message_adapter.validate_json(text, by_name=False)
        except ValueError:
            return
        if isinstance(message, types.JSONRPCRequest):  # the SDK's rule (`serve_dual_era_loop`)
            meta = (message.params or {}).get("_meta")
            self.modern = (
                message.method != "initialize" and isinstance(meta, dict) and PROTOCOL_VERSION_META_KEY in meta
            )

    def _plain(self, text: str) -> tuple[types.RequestId, str, dict[str, Any]] | None:
        """The id, protocol version and params of a plain call that the SDK would take as it is, else None."""
        try:
            message = json.loads(text)
        except ValueError:
            return None
        if not isinstance(message, dict) or set(message) != {"jsonrpc", "id", "method", "params"}:
            return None
        request_id, params = message["id"], message["params"]
        if message["jsonrpc"] != "2.0" or message["method"] != "tools/call" or not isinstance(params, dict):
            return None
        if isinstance(request_id, bool) or not isinstance(request_id, (int, str)):
            return None
        meta = params.get("_meta")
        if not set(params) <= {"name", "arguments", "_meta"} or not isinstance(meta, dict) or set(meta) - _ENVELOPE:
            return None  # a task, an input_required retry, a progress token, a log level: the SDK's
        accepted = self._accepted
        if accepted is not None and meta == accepted[0]:  # a client sends the same envelope with each request
            if isinstance(params.get("name"), str) and isinstance(params.get("arguments"), dict):
                return request_id, accepted[1], params  # what the checks below would pass
        route = classify_inbound_request(message)
        if not isinstance(route, InboundModernRoute):
            return None
        try:
            spec.validate_client_request("tools/call", route.protocol_version, params)
            capabilities = types.ClientCapabilities.model_validate(route.client_capabilities)
        except (KeyError, ValueError):  # pydantic's ValidationError among them
            return None
        if offers(capabilities):  # a client that may be asked something: its call may park (`relay.Relays`)
            return None
        self._accepted = (meta, route.protocol_version)
        return request_id, route.protocol_version, params

    async def _answer(
        self, request_id: types.RequestId, version: str, params: dict[str, Any], scope: anyio.CancelScope, out: _Out
    ) -> None:
        closed = {"jsonrpc": "2.0", "id": request_id, "error": _CLOSED}  # a call the server's stopping ended
        answer: dict[str, Any] | None = None
        try:
            with scope:
                try:
                    result = sieved(version, await self.call(params))
                    meta = result.get("_meta")
                    if meta is None or (isinstance(meta, dict) and meta.get(types.SERVER_INFO_META_KEY) is None):
                        result["_meta"] = {**(meta or {}), types.SERVER_INFO_META_KEY: self.stamp()}  # as the SDK does
                    answer = {"jsonrpc": "2.0", "id": request_id, "result": result}
                except Exception as exc:  # a bug: the SDK would answer it as an error too
                    log.exception("internal error answering a call")
                    error = {"code": types.INTERNAL_ERROR, "message": str(exc) or type(exc).__name__}
                    answer = {"jsonrpc": "2.0", "id": request_id, "error": error}
        except anyio.get_cancelled_exc_class():
            with anyio.move_on_after(STOP_WRITE, shield=True):
                await _send(out, closed)
            raise
        finally:
            if self.running.get(coerce_request_id(request_id)) is scope:
                del self.running[coerce_request_id(request_id)]
            if self.stopping and not self.running:
                self._ended.set()
        if scope.cancel_called:  # its client cancelled it (no answer), or the server stops
            answer = closed if self.stopping else None
        if answer is not None:
            await _send(out, answer)

    async def stop(self) -> None:
        """The server stopping (its client has gone): calls in flight end, each answered as the SDK answers its own
        ("Connection closed"), before the runtime they use stops."""
        self.ready, self.stopping = False, True
        for scope in list(self.running.values()):
            scope.cancel()
        with anyio.move_on_after(STOP_WRITE):
            if self.running:
                await self._ended.wait()

    def _cancelled(self, text: str) -> bool:
        try:
            message = json.loads(text)
        except ValueError:
            return False
        if not isinstance(message, dict) or message.get("method") != "notifications/cancelled":
            return False
        params = message.get("params")
        request_id = params.get("requestId") if isinstance(params, dict) else None
        if isinstance(request_id, bool) or not isinstance(request_id, (int, str)):
            return False
        scope = self.running.get(coerce_request_id(request_id))
        if scope is None:
            return False
        scope.cancel()
        return True


_RESULT_KEYS = {"resultType", "content", "isError", "_meta", "structuredContent"}


def sieved(version: str, result: dict[str, Any]) -> dict[str, Any]:
    """A CallToolResult as the SDK sends it at `version`: checked and cut to the version's schema (`Server`'s own
    pass), unless it is of the plain shape that pass leaves as it is (text items only; objects where the schema has
    free-form objects)."""
    content = result.get("content")
    plain = (
        set(result) <= _RESULT_KEYS
        and result.get("resultType") == "complete"
        and isinstance(result.get("isError"), bool)
        and isinstance(result.get("_meta", {}), dict)
        and isinstance(result.get("structuredContent", {}), dict)
        and isinstance(content, list)
        and all(
            isinstance(item, dict)
            and item.keys() == {"type", "text"}
            and item["type"] == "text"
            and isinstance(item["text"], str)
            for item in content
        )
    )
    return dict(result) if plain else spec.serialize_server_result("tools/call", version, result)


async def _send(out: _Out, message: dict[str, Any]) -> None:
    with contextlib.suppress(OSError):  # the client gone meanwhile
        await out.write(_line(message))
        await out.flush()


def _line(message: dict[str, Any]) -> str:
    """A message as one line of JSON (UTF-8 where it can be; a lone surrogate escaped)."""
    text = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(message, separators=(",", ":"))
    return text + "\n"


class _Out:
    """Writes to a pipe; `flush` waits while the reader is behind."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self.writer = writer

    async def write(self, text: str) -> None:
        self.writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self.writer.drain()


def _served_by_loop(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or (stat.S_ISCHR(mode) and os.isatty(fd))


@contextlib.contextmanager
def _claimed() -> Iterator[tuple[int, int]]:
    """Duplicates of fds 0 and 1 for the wire, with fd 0 reading the null device and fd 1 writing to stderr
    until the block ends."""
    saved = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
        os.dup2(2, 1)
        yield os.dup(saved[0]), os.dup(saved[1])
    finally:
        os.close(null)
        for fd, wire in zip((0, 1), saved, strict=True):
            os.dup2(wire, fd)
            os.close(wire)


@contextlib.asynccontextmanager
async def stdio_streams(front: Front | None = None) -> AsyncIterator[tuple[Any, Any]]:
    """The SDK's (read, write) streams over this process's stdin and stdout, with `front` answering the plain calls
    it takes (its calls run in a task group of this block)."""
    if not (_served_by_loop(0) and _served_by_loop(1)):
        async with stdio_server() as streams:
            yield streams
        return
    loop = asyncio.get_running_loop()
    with _claimed() as (wire_in, wire_out):
        reader = asyncio.StreamReader(limit=LINE_LIMIT)
        reading, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(wire_in, "rb", buffering=0)
        )
        writing, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, os.fdopen(wire_out, "wb", buffering=0)
        )
        out = _Out(asyncio.StreamWriter(writing, protocol, None, loop))
        lines = _Lines(reader, out, front)
        try:
            # the SDK names anyio's AsyncFile; it only iterates the one and writes to and flushes the other
            async with stdio_server(lines, out) as streams, anyio.create_task_group() as tg:  # type: ignore[arg-type]
                if front is not None:
                    front.tg = tg
                yield streams
                tg.cancel_scope.cancel()
        finally:
            reading.close()
            writing.close()
