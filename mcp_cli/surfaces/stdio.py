"""The stdio wire without a thread per message: the event loop reads stdin and writes stdout itself.

The SDK's stdio transport reads and writes through worker threads, two thread hand-offs per call; here its
transport is given pipe-backed files the event loop serves directly. As the SDK does, fd 0 then reads the
null device and fd 1 writes to stderr while serving, so children and stray prints never touch the wire.
Stdin that is not a pipe, socket or terminal (a regular file, the null device) is left to the SDK's own files.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
from collections.abc import AsyncIterator, Iterator
from typing import Any

from mcp.server.stdio import stdio_server

from .unreadable import cut, invalid_id

LINE_LIMIT = 64 * 2**20  # bytes of one message; a longer one is answered "too large" (see unreadable)
_KEPT = 65536  # bytes of a cut message kept: enough for the answer to find its id


class _Lines:
    """The lines of a pipe, decoded as UTF-8 (bytes that are not UTF-8 read as U+FFFD, as the SDK does). A request
    whose id the SDK would take for none (`unreadable.invalid_id`) is answered on `out` here, not handed on."""

    def __init__(self, reader: asyncio.StreamReader, out: _Out) -> None:
        self.reader, self.out = reader, out

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
async def stdio_streams() -> AsyncIterator[tuple[Any, Any]]:
    """The SDK's (read, write) streams over this process's stdin and stdout."""
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
        lines = _Lines(reader, out)
        try:
            # the SDK names anyio's AsyncFile; it only iterates the one and writes to and flushes the other
            async with stdio_server(lines, out) as streams:  # type: ignore[arg-type]
                yield streams
        finally:
            reading.close()
            writing.close()
