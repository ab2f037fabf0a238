"""The stdio transport to an upstream server, in place of the SDK's `stdio_client`, for three things it does not do:

- Lines are read in linear time. The SDK joins each 64 KiB chunk onto the line so far and splits the whole again,
  which is quadratic: a 30 MB answer took longer than any call's timeout.
- A message over MAX_MESSAGE bytes is not held: its request is answered with an error that says how large it was.
- The server's whole process group is killed when the session ends, and as soon as the server exits or crashes on
  its own (the SDK kills the group only when the server outlives its stdin), so nothing it started outlives it;
  nor does a crash go unnoticed while what it started holds its stdout open.

The server runs in a session (and process group) of its own, its stderr goes to `errlog`, and it gets the SDK's
default environment with the config's `env` on top, as under the SDK's transport.

Beside the SDK's session, the transport carries requests of mcp-cli's own (`DirectLine`): a plain tool call is
written to the server's stdin as one line and its answer taken off the reader as it arrives, not through the session's
tasks and models. Their ids are strings of their own, so they never meet the session's numbered requests; everything
else the server sends (its requests, notifications, the session's answers) goes to the session as before. An answer
that follows something the session was given meanwhile (a log message, a question of the call's) is handed over
behind it, through the session's read stream, so that the session has taken what came first before the call ends.
"""

from __future__ import annotations

import itertools
import json
import math
import re
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from typing import Any, TextIO

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream, ObjectSendStream, Process
from mcp import types
from mcp.client.stdio import StdioServerParameters, get_default_environment
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage

from .processes import ended, kill_group, started
from .streams import ReadStream

MAX_MESSAGE = 128 * 2**20  # bytes of one message from an upstream; a longer one is answered as an error
GRACE = 2.0  # seconds a server has to exit once its stdin is closed, and again after SIGTERM
_KEPT = 4096  # bytes kept of each end of a message over MAX_MESSAGE, to find its id
_READ = 2**20  # bytes asked for per read
# The id of a JSON-RPC message, among its first members (`{"jsonrpc": "2.0", "id": 3, ...`, the Python SDK's order)
# or as its last (`..., "jsonrpc": "2.0", "id": 3}`, the TypeScript SDK's).
_ID = r'"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")'
_FIRST_ID = re.compile(rb'\A\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?' + _ID.encode())
_LAST_ID = re.compile(_ID.encode() + rb"\s*\}\s*\Z")


class TooLarge:
    """A message over MAX_MESSAGE: its size and its two ends."""

    def __init__(self, head: bytes, tail: bytes, size: int) -> None:
        self.head, self.tail, self.size = head, tail, size

    def answer(self) -> SessionMessage | None:
        """An error for the request it answers, if its id can be found."""
        found = _FIRST_ID.search(self.head) or _LAST_ID.search(self.tail)
        if found is None:
            return None
        raw = found.group(1).decode("utf-8", "replace")
        request_id: int | str = int(raw) if raw[0] != '"' else raw[1:-1]
        text = (
            f"the upstream's answer was {self.size:,} bytes, over mcp-cli's limit of {MAX_MESSAGE:,} bytes for one "
            "message, and was dropped; ask it for less (a narrower range, a filter, a page)"
        )
        error = types.JSONRPCError(jsonrpc="2.0", id=request_id, error=types.ErrorData(code=-32603, message=text))
        return SessionMessage(error)


async def lines(stream: ByteReceiveStream, limit: int = MAX_MESSAGE) -> AsyncIterator[bytes | TooLarge]:
    """The newline-separated messages of a byte stream, each found by scanning its bytes once; one over `limit`
    bytes as a TooLarge (its middle is not kept)."""
    line, size, tail = bytearray(), 0, b""
    while True:
        try:
            chunk = await stream.receive(_READ)
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            break
        start = 0
        while start < len(chunk):
            end = chunk.find(b"\n", start)
            piece = chunk[start : len(chunk) if end < 0 else end]
            size += len(piece)
            if size <= limit:
                line += piece
            else:  # over the limit: keep its two ends only
                if len(line) > _KEPT:
                    del line[_KEPT:]
                line += piece[: max(_KEPT - len(line), 0)]
                tail = (tail + piece)[-_KEPT:]
            if end < 0:
                break
            start = end + 1
            if size > limit:
                yield TooLarge(bytes(line), tail, size)
            elif line.strip():
                yield bytes(line)
            line, size, tail = bytearray(), 0, b""
    if line.strip() and size <= limit:
        yield bytes(line)


_OURS = "mcp-cli-"  # the start of the ids of `DirectLine` requests
_OURS_BYTES = b'"' + _OURS.encode()
_CLOSED: dict[str, Any] = {}  # the outcome of a request whose connection ended first


class DirectLine:
    """Requests of mcp-cli's own on a server's stdin, beside the SDK's session (see the module's docstring): each sent
    as one line, its answer handed back by the reader (`answered`) to the request waiting for it."""

    def __init__(self, stdin: ByteSendStream) -> None:
        self.stdin = stdin
        self.waiting: dict[str, tuple[anyio.Event, list[dict[str, Any]], int]] = {}
        self.heard = -math.inf  # when one of its answers last came (anyio's clock)
        self.given = 0  # messages given to the session so far
        self.closed = False
        self._ids = itertools.count(1)

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """The server's result for a request; MCPError for its error answer, or with code CONNECTION_CLOSED when the
        connection ends first (as the SDK's session says it). Cancelled (a timeout, the caller's cancellation), the
        request is cancelled at the server too."""
        if self.closed:
            raise _closed()
        request_id = f"{_OURS}{next(self._ids)}"
        done, outcome = anyio.Event(), list[dict[str, Any]]()
        self.waiting[request_id] = (done, outcome, self.given)
        line = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}) + "\n"
        try:
            try:
                await self.stdin.send(line.encode("utf-8"))
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                self.waiting.pop(request_id, None)
                raise _closed() from None
            await done.wait()
        except BaseException:
            if self.waiting.pop(request_id, None) is not None and not self.closed:  # sent, never answered
                cancel = {"requestId": request_id, "reason": "the call was cancelled"}
                with anyio.move_on_after(1, shield=True), suppress(Exception):
                    notice = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": cancel}
                    await self.stdin.send((json.dumps(notice) + "\n").encode("utf-8"))
            raise
        answer = outcome[0]
        if answer is _CLOSED:
            raise _closed()
        error = answer.get("error")
        if error is not None:
            raise MCPError.from_error_data(types.ErrorData.model_validate(error))
        result = answer.get("result")
        if not isinstance(result, dict):
            raise MCPError(code=types.INVALID_REQUEST, message=f"the answer's result is not an object: {result!r:.80}")
        return result

    def answered(self, line: bytes | TooLarge) -> bool | Behind:
        """Whether `line` answers one of these requests (handed to it now, not to the session), or the answer to hand
        over once the session has taken what it was given since the request was sent (`Behind`); a message too large
        to keep answers with the error that says so."""
        if not self.waiting:
            return False
        if isinstance(line, TooLarge):
            refused = line.answer()
            message = refused.message.model_dump(by_alias=True, exclude_none=True) if refused is not None else None
        elif _OURS_BYTES not in line:
            return False
        else:
            try:
                message = json.loads(line)
            except ValueError:
                return False
        if not isinstance(message, dict) or "method" in message:
            return False
        key = message.get("id")
        waiting = self.waiting.pop(key, None) if isinstance(key, str) else None
        if waiting is None:
            return False
        self.heard = anyio.current_time()
        done, outcome, given = waiting
        outcome.append(message)
        if given != self.given:
            return Behind(done)
        done.set()
        return True

    def close(self) -> None:
        """The connection ended: every request still waiting is told so."""
        self.closed = True
        for done, outcome, _ in self.waiting.values():
            outcome.append(_CLOSED)
            done.set()
        self.waiting.clear()


class Behind:
    """An answer of a `DirectLine` request, handed over when the session's read stream reaches it (`Reading`)."""

    def __init__(self, done: anyio.Event) -> None:
        self.done = done


def _closed() -> MCPError:
    return MCPError(code=types.CONNECTION_CLOSED, message="Connection closed")


class Reading(ReadStream):
    """The session's read stream, with the transport's `DirectLine` requests beside it; their answers that came `Behind`
    what the session was given are handed over here, in order."""

    def __init__(self, read: Any, direct: DirectLine) -> None:
        super().__init__(read)
        self.direct = direct

    async def receive(self) -> Any:
        while True:
            item = await self.read.receive()
            if not isinstance(item, Behind):
                return item
            item.done.set()


def _parse(line: bytes) -> SessionMessage | Exception:
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as exc:  # handed to the session, which logs it (as the SDK's transport does)
        return exc


@asynccontextmanager
async def stdio_client(
    server: StdioServerParameters, errlog: TextIO
) -> AsyncIterator[tuple[Reading, ObjectSendStream[SessionMessage]]]:
    """Start the server and yield the session's (read, write) streams; on exit stop it and its process group."""
    process = await anyio.open_process(
        [server.command, *server.args],
        env=get_default_environment() | (server.env or {}),
        stderr=errlog,
        cwd=server.cwd,
        start_new_session=True,
    )
    started(process.pid)
    to_session, read = anyio.create_memory_object_stream[SessionMessage | Exception | Behind](0)
    write, from_session = anyio.create_memory_object_stream[SessionMessage](0)

    assert process.stdin is not None
    direct = DirectLine(process.stdin)

    async def reading() -> None:
        assert process.stdout is not None
        async with to_session:
            async for line in lines(process.stdout):
                taken = direct.answered(line)
                if taken is True:
                    continue
                if taken:
                    message: SessionMessage | Exception | Behind | None = taken
                else:
                    message = line.answer() if isinstance(line, TooLarge) else _parse(line)
                if message is None:
                    continue
                try:
                    await to_session.send(message)
                except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                    if isinstance(message, Behind):  # no session to pass: its request need not wait for it
                        message.done.set()
                    continue
                if not isinstance(message, Behind):
                    direct.given += 1
        direct.close()

    async def watching() -> None:
        """Once the server has exited (a crash, too), stop what it started: that also closes the pipes they
        inherited, so that its stdout ends and the session learns it is gone."""
        while process.returncode is None:
            await anyio.sleep(0.2)
        kill_group(process.pid)

    async def writing() -> None:
        assert process.stdin is not None
        try:
            async with from_session:
                async for message in from_session:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                    await process.stdin.send(data.encode("utf-8"))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await to_session.aclose()  # the session sees the connection end rather than wait for an answer

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(reading)
            tg.start_soon(writing)
            tg.start_soon(watching)
            try:
                yield Reading(read, direct), write
            finally:
                tg.cancel_scope.cancel()
    finally:
        direct.close()
        with anyio.CancelScope(shield=True):
            await _stop(process)
            for stream in (read, write, to_session, from_session):
                await stream.aclose()


async def _exited(process: Process, timeout: float) -> bool:
    """Whether `process` exits within `timeout` seconds (polled: `wait()` also waits for its pipes, which what it
    started may hold open)."""
    with anyio.move_on_after(timeout):
        while process.returncode is None:
            await anyio.sleep(0.02)
    return process.returncode is not None


async def _stop(process: Process) -> None:
    """Close its stdin and give it GRACE seconds; then SIGTERM to its group, and GRACE more; then SIGKILL to what is
    left of the group (what it started, whether or not it exited itself)."""
    assert process.stdin is not None and process.stdout is not None
    with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        await process.stdin.aclose()
    if not await _exited(process, GRACE):
        kill_group(process.pid, signal.SIGTERM)
        await _exited(process, GRACE)
    kill_group(process.pid)
    ended(process.pid)
    await _exited(process, GRACE)
    with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        await process.stdout.aclose()
    transport = getattr(getattr(process, "_process", None), "_transport", None)
    close = getattr(transport, "close", None)
    if callable(close):  # the asyncio transport stays open (and warns) while a descendant holds a pipe
        with suppress(PermissionError):
            close()
