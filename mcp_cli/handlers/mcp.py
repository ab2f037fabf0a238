"""Upstream MCP tools: `{"kind": "mcp", "server": "github", "tool": "list_issues"}`.

The arguments object was built from argv and validated against the tool's schema by the runtime; here it is
sent to the upstream server, and the result's content items come back unchanged (text capped with a note).
"""

from __future__ import annotations

from typing import Any

from ..errors import HandlerError
from ..result import Result, cap
from ..tree import Tree
from .base import Call, timeout_of


def _as_text(item: dict[str, Any]) -> str:
    """A content item as text for terminals: text itself, a placeholder line for anything else."""
    if item.get("type") == "text":
        return item["text"]
    resource = item.get("resource") or {}
    where = resource.get("uri") or item.get("uri") or ""
    mime = item.get("mimeType") or resource.get("mimeType") or ""
    label = " ".join(x for x in (item.get("type", "item"), mime, where) if x)
    return f"[{label}]" + (f"\n{resource['text']}" if resource.get("text") else "")


class McpHandler:
    def __init__(self, ref: dict, tree: Tree) -> None:
        if not ref.get("server") or not ref.get("tool"):
            raise ValueError("mcp handler reference needs 'server' and 'tool'")
        self.server, self.tool = ref["server"], ref["tool"]
        self.timeout = float(ref.get("timeout") or tree.upstreams.get(self.server, {}).get("timeout") or 0) or (
            timeout_of(ref, tree)
        )
        self.limit = tree.settings.max_output

    async def run(self, call: Call) -> Result:
        if call.upstreams is None:
            raise HandlerError(f"`{call.path}` calls an upstream server, which needs a running server (mcp-cli serve)")
        upstream = call.upstreams.get(self.server)
        result = await upstream.call(self.tool, call.values, self.timeout, call.path)
        content: list[dict[str, Any]] = []
        budget = self.limit
        for item in result.content:
            data = item.model_dump(by_alias=True, exclude_none=True, mode="json")
            if data.get("type") == "text":
                text = data["text"]
                data["text"] = cap(text, max(budget, 0))
                budget -= len(text)
            content.append(data)
        output = "\n".join(_as_text(c) for c in content)
        return Result(
            ok=not result.is_error,
            output=output,
            error="upstream" if result.is_error else None,
            content=content,
            data=result.structured_content,
        )
