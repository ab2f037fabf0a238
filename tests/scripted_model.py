"""A scripted model behind a local HTTP server that speaks the Anthropic Messages API (Claude Code) and the OpenAI
Responses API (Codex), both streamed as server-sent events. It records every request a host sends, and answers the
host's agent loop from a script: step N of the script answers the request that already holds N tool calls of the
model's. A step is a function of the request's tool names to a call `(tool name, input)`, or None to finish with a
short text. Requests that are not the agent loop (titles, summaries, quota checks: no tools, or no matching step)
get a short text. Nothing here reaches past 127.0.0.1.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Call = tuple[str, dict[str, Any]]
Step = Callable[[list[str]], Call | None]
DONE = "Done."


def call(suffix: str, **arguments: Any) -> Step:
    """A step that calls the first offered tool named `suffix` or ending in `__suffix` (hosts prefix MCP tools:
    `mcp__pdf__pdf`), with `arguments`."""

    def step(names: list[str]) -> Call | None:
        name = next((n for n in names if n == suffix or n.endswith("__" + suffix)), suffix)
        return name, arguments

    return step


@dataclass
class Model:
    """The script, and what hosts sent: `requests` (path, body) in order."""

    script: list[Step]
    requests: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    url: str = ""
    _ids: Iterator[int] = field(default_factory=itertools.count)

    def loop(self, path: str) -> list[dict[str, Any]]:
        """The bodies of the agent loop's requests to `path`: those that offer tools."""
        return [body for p, body in self.requests if p == path and body.get("tools")]

    def step(self, names: list[str], done: int) -> Call | None:
        return self.script[done](names) if done < len(self.script) else None

    def next_id(self, prefix: str) -> str:
        return f"{prefix}_{next(self._ids):04d}"


def _anthropic(model: Model, body: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """The events of one streamed Messages answer."""
    names = [t.get("name", "") for t in body.get("tools") or []]
    done = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant" and _uses_tools(m))
    action = model.step(names, done) if names else None
    usage = {"input_tokens": 1, "output_tokens": 1}
    message = {
        "id": model.next_id("msg"),
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "x"),
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage,
    }
    yield "message_start", {"type": "message_start", "message": message}
    if action is None:
        yield (
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        )
        yield (
            "content_block_delta",
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": DONE}},
        )
        stop = "end_turn"
    else:
        name, arguments = action
        block = {"type": "tool_use", "id": model.next_id("toolu"), "name": name, "input": {}}
        yield "content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}
        yield (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": json.dumps(arguments)},
            },
        )
        stop = "tool_use"
    yield "content_block_stop", {"type": "content_block_stop", "index": 0}
    yield (
        "message_delta",
        {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": 1}},
    )
    yield "message_stop", {"type": "message_stop"}


def _uses_tools(message: dict[str, Any]) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(b.get("type") == "tool_use" for b in content)


def _responses(model: Model, body: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """The events of one streamed Responses answer."""
    spaces = {}  # a namespaced tool (Codex puts an MCP server's tools in a namespace) as `namespace__name`
    for t in body.get("tools") or []:
        for inner in t.get("tools", []) if t.get("type") == "namespace" else []:
            spaces[f"{t['name']}__{inner['name']}"] = (t["name"], inner["name"])
    names = [t.get("name", "") for t in body.get("tools") or [] if t.get("type") == "function"] + list(spaces)
    items = body.get("input") or []
    done = sum(1 for i in items if isinstance(i, dict) and i.get("type") == "function_call")
    action = model.step(names, done) if names else None
    rid = model.next_id("resp")
    if action is None:
        item: dict[str, Any] = {
            "type": "message",
            "id": model.next_id("msg"),
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": DONE, "annotations": []}],
        }
    else:
        name, arguments = action
        namespace, name = spaces.get(name, (None, name))
        item = {
            "type": "function_call",
            "id": model.next_id("fc"),
            "call_id": model.next_id("call"),
            "name": name,
            "arguments": json.dumps(arguments),
            "status": "completed",
        }
        if namespace:
            item["namespace"] = namespace
    response = {"id": rid, "object": "response", "status": "in_progress", "model": body.get("model", "x"), "output": []}
    yield "response.created", {"type": "response.created", "response": response}
    yield "response.output_item.added", {"type": "response.output_item.added", "output_index": 0, "item": item}
    yield "response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}
    usage = {
        "input_tokens": 1,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 1,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 2,
    }
    completed = {**response, "status": "completed", "output": [item], "usage": usage}
    yield "response.completed", {"type": "response.completed", "response": completed}


class _Handler(BaseHTTPRequestHandler):
    model: Model

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def do_GET(self) -> None:  # model lists and the like: an empty list
        self._json({"data": [], "models": [], "object": "list"})

    def do_HEAD(self) -> None:
        self.send_response(200)
        self.end_headers()

    def do_POST(self) -> None:
        size = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(size) if size else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {"unreadable": raw.decode("utf-8", "replace")}
        path = self.path.split("?", 1)[0]
        self.model.requests.append((path, body))
        if path.endswith("/messages/count_tokens"):
            return self._json({"input_tokens": 1})
        if path.endswith("/messages"):
            return self._stream(_anthropic(self.model, body)) if body.get("stream") else self._whole_message(body)
        if path.endswith("/responses"):
            return self._stream(_responses(self.model, body))
        self._json({})

    def _whole_message(self, body: dict[str, Any]) -> None:
        """A Messages answer not streamed: the events' message, assembled."""
        events = list(_anthropic(self.model, body))
        message = events[0][1]["message"]
        block = events[1][1]["content_block"]
        delta = events[2][1]["delta"]
        if block["type"] == "text":
            block = {"type": "text", "text": delta["text"]}
        else:
            block = {**block, "input": json.loads(delta["partial_json"])}
        self._json({**message, "content": [block], "stop_reason": events[-2][1]["delta"]["stop_reason"]})

    def _json(self, value: Any) -> None:
        data = json.dumps(value).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _stream(self, events: Iterator[tuple[str, dict[str, Any]]]) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        for name, data in events:
            self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
            self.wfile.flush()
        self.close_connection = True


@contextmanager
def serving(script: list[Step]) -> Iterator[Model]:
    """A Model with `script`, served at `model.url` (http://127.0.0.1:PORT) until the block ends."""
    model = Model(script)
    handler = type("Handler", (_Handler,), {"model": model})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    model.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield model
    finally:
        server.shutdown()
        server.server_close()
