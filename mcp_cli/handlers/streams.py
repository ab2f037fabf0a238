"""A transport's read stream, wrapped: what the SDK's session reads from, with `receive` changed by a subclass
(noting when an upstream last spoke; answering unreadable messages)."""

from __future__ import annotations

from typing import Any, TypeVar

import anyio

W = TypeVar("W", bound="ReadStream")


class ReadStream:
    """Passes `read`'s messages on; a subclass overrides `receive`."""

    def __init__(self, read: Any) -> None:
        self.read = read

    @property
    def last_context(self) -> Any:  # the SDK restores each message's contextvars from its read stream
        return getattr(self.read, "last_context", None)

    async def receive(self) -> Any:
        return await self.read.receive()

    def __aiter__(self: W) -> W:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self.read.aclose()

    async def __aenter__(self: W) -> W:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
