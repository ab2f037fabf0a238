"""Answers for messages the SDK cannot read: invalid JSON, lone surrogates, nesting beyond its parser's limit,
JSON that is not JSON-RPC. The SDK drops them, leaving the caller waiting for ever; here a request still gets
an answer saying what was wrong (a tool call a `bad_request` result, anything else JSON-RPC error -32700)."""

from __future__ import annotations

import json
import logging
import re
from typing import TYPE_CHECKING, Any

from mcp import types
from mcp.shared.message import SessionMessage

from ..handlers.streams import ReadStream
from ..result import Result, has_surrogate
from ..text import clip

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

log = logging.getLogger("mcp_cli")

PARSE_ERROR, INVALID_REQUEST = -32700, -32600
SCAN_LIMIT = 65536  # characters of a broken message searched for its id and method (they come first)
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_COLON = re.compile(r"\s*:\s*")
_STRUCTURE = re.compile(r'["{}\[\]]')


class Answering(ReadStream):
    """The transport's read stream, with unreadable messages answered on `write` instead of passed on."""

    def __init__(self, read: Any, write: Any, tree_name: str) -> None:
        super().__init__(read)
        self.write, self.tree_name = write, tree_name

    async def receive(self) -> SessionMessage:
        while True:
            item: SessionMessage | Exception = await self.read.receive()
            if not isinstance(item, Exception):
                return item
            try:
                answer = reply(item, self.tree_name)
            except Exception:  # never let an odd message end the session
                log.exception("could not answer an unreadable message")
                continue
            if answer is not None:
                await self.write.send(SessionMessage(answer))


def reply(exc: Exception, tree_name: str) -> types.JSONRPCResponse | types.JSONRPCError | None:
    """The answer to an unreadable message, or None where none is due: a notification or a reply (nobody
    waits for an answer), or a message whose whole cannot be recovered from the error."""
    errors_of = getattr(exc, "errors", None)  # pydantic's ValidationError has them
    errors = errors_of() if callable(errors_of) else []
    raw = next((e for e in errors if e["type"] == "json_invalid" and isinstance(e.get("input"), str)), None)
    # a member's missing field, or a wrong type of the whole, carries the whole message as its input
    whole = [e for e in errors if e["type"] == "missing" or len(e["loc"]) < 2]
    if raw is not None:
        message, code = _message(raw["input"]), PARSE_ERROR
        size, limit = _cut_size(raw["input"])
        if size:
            why = (
                f"is too large ({size:,} bytes; a message may have {limit:,}); send less, or put the data in a "
                "file and pass its path"
            )
        elif message and has_surrogate(json.dumps(message, ensure_ascii=False)):
            why = "holds a lone surrogate (half of a UTF-16 pair), which is not text; send the text as UTF-8"
        elif "recursion limit" in raw["msg"]:
            why = "nests JSON too deeply for the server to read; flatten it"
        else:
            why = f"is not valid JSON: {raw['msg'].removeprefix('Invalid JSON: ')}"
    elif whole:
        found = whole[0].get("input")
        message, code = (found if isinstance(found, dict) else {}), INVALID_REQUEST
        as_request = [e for e in errors if e["loc"][:1] == ("JSONRPCRequest",) and len(e["loc"]) > 1]
        detail = f"{'.'.join(map(str, as_request[0]['loc'][1:]))}: {as_request[0]['msg']}" if as_request else ""
        why = f"is not a valid MCP request ({detail})" if message else "is not a JSON-RPC message (a JSON object)"
    else:
        return None
    method, request_id = message.get("method"), message.get("id")
    if message and ("id" not in message or method is None):
        return None
    if not isinstance(request_id, (str, int)) or isinstance(request_id, bool) or has_surrogate(str(request_id)):
        request_id = None  # JSON-RPC: an error whose request cannot be named carries a null id
    text = f"Error: the request {why}."
    if method == "tools/call" and request_id is not None:  # a result goes to a request it can name
        result = Result(ok=False, path=tree_name, error="bad_request", message=text)
        body = {**result.to_mcp(), "resultType": "complete"}  # era unknown: the 2026 era needs it, the other reads it
        return types.JSONRPCResponse(jsonrpc="2.0", id=request_id, result=body)
    return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=text))


# An `"id":` member that is not a string or a whole number (it may be nested: only then is the message parsed)
_ODD_ID = re.compile(r'"id"\s*:\s*(?!"|-?[0-9]+\s*[,}\]])', re.ASCII)
_ODD_ID_BYTES = re.compile(_ODD_ID.pattern.encode(), re.ASCII)


def invalid_id(text: str | bytes) -> types.JSONRPCError | None:
    """The answer to a request whose `id` is neither a string nor a whole number (a fraction, an object, an array, a
    boolean, null): Invalid Request with a null id, as JSON-RPC 2.0 says. The SDK would read it as a notification and
    never answer. None for every other message (read as usual)."""
    if not (_ODD_ID.search(text) if isinstance(text, str) else _ODD_ID_BYTES.search(text)):
        return None
    try:
        message = json.loads(text)
    except (ValueError, RecursionError):  # unreadable: `reply` answers it
        return None
    if not isinstance(message, dict) or "id" not in message or not isinstance(message.get("method"), str):
        return None
    request_id = message["id"]
    if isinstance(request_id, str) or (isinstance(request_id, int) and not isinstance(request_id, bool)):
        return None
    shown = clip(json.dumps(request_id), 40)
    text = (
        f"Error: the request's id {shown} is not a string or a whole number, which JSON-RPC requires of a "
        "request's id; send it again with one (a number that counts up, say)."
    )
    return types.JSONRPCError(jsonrpc="2.0", id=None, error=types.ErrorData(code=INVALID_REQUEST, message=text))


class IdCheck:
    """ASGI middleware before the SDK's streamable HTTP transport: a POST to `path` holding a request whose id is
    not a string or a whole number is answered 400 with `invalid_id`'s error (the SDK would accept it with 202 as a
    notification and answer nothing); any other request passes on as it came. A body over `limit` bytes is passed on
    unread (the SDK refuses it)."""

    def __init__(self, app: ASGIApp, path: str = "/mcp", limit: int = 4 * 2**20) -> None:
        self.app, self.path, self.limit = app, path, limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"].rstrip("/") != self.path:
            await self.app(scope, receive, send)
            return
        received: list[Message] = []
        size, more = 0, True
        while more and size <= self.limit:
            message = await receive()
            received.append(message)
            if message["type"] != "http.request":  # the client went away
                break
            size += len(message.get("body", b""))
            more = message.get("more_body", False)
        refusal = invalid_id(b"".join(m.get("body", b"") for m in received)) if not more else None
        if refusal is not None:
            body = refusal.model_dump_json(by_alias=True, exclude_unset=True).encode()
            headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
            await send({"type": "http.response.start", "status": 400, "headers": headers})
            await send({"type": "http.response.body", "body": body})
            return
        replay = iter(received)

        async def receive_again() -> Message:
            return next(replay, None) or await receive()

        await self.app(scope, receive_again, send)


_CUT = re.compile(r"\0mcp-cli: cut at (\d+) of (\d+) bytes\Z")


def cut(start: bytes, size: int, limit: int) -> bytes:
    """The start of a message too large to read, marked with its size and the limit: what the transport hands on
    in its place, which no JSON parser reads (a NUL), and which `reply` answers as too large."""
    return start + f"\0mcp-cli: cut at {limit} of {size} bytes".encode()


def _cut_size(text: str) -> tuple[int, int]:
    """(size, limit) of a message marked by `cut`, else (0, 0)."""
    found = _CUT.search(text[-80:])
    return (int(found.group(2)), int(found.group(1))) if found else (0, 0)


def _message(text: str) -> dict[str, Any]:
    """The message's members as far as they can be read: all of them, or the scalar top-level ones of JSON
    cut short or nested too deeply to parse whole ({} when none)."""
    try:
        parsed = json.loads(text)
    except (ValueError, RecursionError):
        return _top_level(text[:SCAN_LIMIT])
    return parsed if isinstance(parsed, dict) else {}


def _top_level(text: str) -> dict[str, Any]:
    found: dict[str, Any] = {}
    depth, i, decoder = 0, 0, json.JSONDecoder()
    while (mark := _STRUCTURE.search(text, i)) is not None:
        i = mark.start()
        if text[i] != '"':
            depth += 1 if text[i] in "{[" else -1
            i += 1
            continue
        string = _STRING.match(text, i)
        if string is None:
            break
        i = string.end()
        colon = _COLON.match(text, i)
        if depth != 1 or colon is None:
            continue
        try:
            key = json.loads(string.group())
            value, end = decoder.raw_decode(text, colon.end())
        except (ValueError, RecursionError):
            continue
        if not isinstance(value, (dict, list)):
            found[key] = value
        i = end
    return found
