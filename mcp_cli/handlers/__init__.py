"""Handlers run a command once its argv is parsed. One small interface, implementations side by side.

A handler reference in the tree is typed data, one class per kind (`refs.py`: `PythonRef`, `SubprocessRef`, ...),
checked when it is made or read from a tree file. Each kind makes handlers from its references, objects with
`async run(call) -> Result`; a kind that holds resources for its handlers (the sessions of upstream MCP servers)
opens and closes them with the runtime.
"""

from __future__ import annotations

from ..errors import SourceError
from ..refs import McpToolRef, PythonRef, SearchRef, SubprocessRef
from ..tree import Command, Tree
from .base import Call, CallScope, Handler, HandlerClass, Kind
from .mcp import McpHandler, McpKind
from .python import PythonHandler
from .search import SearchHandler
from .subprocess import SubprocessHandler

KINDS: dict[str, tuple[HandlerClass, type[Kind]]] = {  # a reference's kind: its handler class and its Kind
    PythonRef.kind: (PythonHandler, Kind),
    SubprocessRef.kind: (SubprocessHandler, Kind),
    McpToolRef.kind: (McpHandler, McpKind),  # and McpOpRef's: `McpKind.make` tells them apart
    SearchRef.kind: (SearchHandler, Kind),
}


def kinds(tree: Tree) -> dict[str, Kind]:
    """A Kind per handler kind, for `tree`."""
    return {name: kind(handler, tree) for name, (handler, kind) in KINDS.items()}


def upstream_kind(kinds: dict[str, Kind]) -> McpKind | None:
    """Of a runtime's kinds, the one that owns the upstream servers' sessions (and their catalogue), if it has it."""
    kind = kinds.get(McpToolRef.kind)
    return kind if isinstance(kind, McpKind) else None


def check(tree: Tree) -> None:
    """Raise SourceError naming the first command without a handler (its reference was checked when made)."""
    for path, node in tree.walk():
        if isinstance(node, Command) and node.handler.kind not in KINDS:
            raise SourceError(f"`{' '.join([tree.name, *path])}` cannot run: it has no handler")


__all__ = ["Call", "CallScope", "Handler", "KINDS", "Kind", "check", "kinds", "upstream_kind"]
