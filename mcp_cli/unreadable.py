"""Answers for messages the SDK cannot read: invalid JSON, lone surrogates, nesting beyond its parser's limit,
JSON that is not JSON-RPC. The SDK drops them, leaving the caller waiting for ever; here a request still gets
an answer saying what was wrong (a tool call a `bad_request` result, anything else JSON-RPC error -32700)."""

from __future__ import annotations

import json
import re
from typing import Any

import anyio
from mcp import types
from mcp.shared.message import SessionMessage

from .result import Result, wire_text

PARSE_ERROR = -32700
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_COLON = re.compile(r"\s*:\s*")


class Answering:
    """The transport's read stream, with unreadable messages answered on `write` instead of passed on."""

    def __init__(self, read: Any, write: Any, tree_name: str) -> None:
        self.read, self.write, self.tree_name = read, write, tree_name

    @property
    def last_context(self) -> Any:  # the SDK restores each message's contextvars from its read stream
        return getattr(self.read, "last_context", None)

    async def receive(self) -> Any:
        while True:
            item = await self.read.receive()
            if not isinstance(item, Exception):
                return item
            answer = reply(item, self.tree_name)
            if answer is not None:
                await self.write.send(SessionMessage(answer))

    def __aiter__(self) -> Answering:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    def close(self) -> None:
        self.read.close()

    async def aclose(self) -> None:
        await self.read.aclose()

    async def __aenter__(self) -> Answering:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()


def reply(exc: Exception, tree_name: str) -> types.JSONRPCResponse | types.JSONRPCError | None:
    """The answer to an unreadable message, or None for what needs none (a notification, a reply, not ours)."""
    errors = getattr(exc, "errors", None)
    if not callable(errors) or not errors():
        return None
    first = errors()[0]
    message = _message(first.get("input"))
    if message is None:
        why, message = f"is not a JSON-RPC message: {first['msg']}", {}
    elif wire_text(json.dumps(message, ensure_ascii=False)) != json.dumps(message, ensure_ascii=False):
        why = "holds a lone surrogate (half of a UTF-16 pair), which is not text; send the text as UTF-8"
    elif "recursion limit" in first["msg"]:
        why = "nests JSON too deeply for the server to read; flatten it"
    else:
        why = f"is not a valid MCP message: {first['msg']}"
    method, request_id = message.get("method"), message.get("id")
    if message and ("id" not in message or method is None):
        return None  # a notification, or a reply to one of our requests: nobody waits for an answer
    if not isinstance(request_id, (str, int)) or isinstance(request_id, bool):
        request_id = None  # JSON-RPC: an error whose request cannot be named carries a null id
    text = f"Error: the request {why}."
    if method == "tools/call":
        result = Result(ok=False, path=tree_name, error="bad_request", message=text)
        body = types.CallToolResult(
            content=[types.TextContent(type="text", text=result.text())],
            structured_content=result.structured(),
            is_error=True,
        )
        return types.JSONRPCResponse(
            jsonrpc="2.0", id=request_id, result=body.model_dump(by_alias=True, exclude_none=True, mode="json")
        )
    return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=types.ErrorData(code=PARSE_ERROR, message=text))


def _message(value: Any) -> dict[str, Any] | None:
    """The message's members as far as they can be read: all of them, or the scalar top-level ones of JSON
    cut short or nested too deeply to parse whole."""
    if isinstance(value, dict):
        return value
    if not isinstance(value, str):
        return None
    try:
        parsed = json.loads(value)
    except (ValueError, RecursionError):
        return _top_level(value)
    return parsed if isinstance(parsed, dict) else None


def _top_level(text: str) -> dict[str, Any]:
    found: dict[str, Any] = {}
    depth, i, decoder = 0, 0, json.JSONDecoder()
    while i < len(text):
        if text[i] == '"':
            string = _STRING.match(text, i)
            if string is None:
                break
            i = string.end()
            colon = _COLON.match(text, i)
            if depth == 1 and colon:
                try:
                    value, end = decoder.raw_decode(text, colon.end())
                except (ValueError, RecursionError):
                    continue
                if not isinstance(value, (dict, list)):
                    found[json.loads(string.group())] = value
                i = end
            continue
        depth += text[i] in "{["
        depth -= text[i] in "}]"
        i += 1
    return found
