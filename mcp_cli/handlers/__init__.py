"""Handlers run a command once its argv is parsed. One small interface, implementations side by side.

A handler reference in the tree is typed data, one class per kind (`refs.py`: `PythonRef`, `SubprocessRef`, ...),
checked when it is made or read from a tree file. Each kind makes handlers from its references, objects with
`async run(call) -> Result`; a kind that holds resources for its handlers (the sessions of upstream MCP servers)
opens and closes them with the runtime.
"""

from __future__ import annotations

from ..errors import SourceError
from ..tree import Command, Tree
from .base import Call, Handler, HandlerClass, Kind
from .mcp import McpHandler, McpKind
from .python import PythonHandler
from .search import SearchHandler
from .subprocess import SubprocessHandler

KINDS: dict[str, tuple[HandlerClass, type[Kind]]] = {
    "python": (PythonHandler, Kind),
    "subprocess": (SubprocessHandler, Kind),
    "mcp": (McpHandler, McpKind),
    "search": (SearchHandler, Kind),
}


def kinds(tree: Tree) -> dict[str, Kind]:
    """A Kind per handler kind, for `tree`."""
    return {name: kind(handler, tree) for name, (handler, kind) in KINDS.items()}


def check(tree: Tree) -> None:
    """Raise SourceError naming the first command without a handler (its reference was checked when made)."""
    for path, node in tree.walk():
        if isinstance(node, Command) and node.handler.kind not in KINDS:
            raise SourceError(f"`{' '.join([tree.name, *path])}` cannot run: it has no handler")


__all__ = ["Call", "Handler", "KINDS", "Kind", "check", "kinds"]
