"""Handlers run a command once its argv is parsed. One small interface, implementations side by side.

A handler reference in the tree is plain data, `{"kind": "python", ...}` or `{"kind": "subprocess", ...}`. Each
kind checks its references when a runtime is made (`check`: a broken tree fails then, naming the command) and
makes handlers, objects with `async run(call) -> Result`; a kind that holds resources for its handlers (the
sessions of upstream MCP servers) opens and closes them with the runtime.
"""

from __future__ import annotations

from ..errors import SourceError
from ..tree import Command, Tree
from .base import Call, CallScope, Handler, HandlerClass, Kind
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
    """Raise SourceError naming the first command whose handler reference is malformed."""
    for path, node in tree.walk():
        if isinstance(node, Command):
            try:
                kind = node.handler.get("kind")
                if kind not in KINDS:
                    raise ValueError(f"no handler of kind {kind!r} (known kinds: {', '.join(sorted(KINDS))})")
                KINDS[kind][0].check(node.handler)
            except ValueError as exc:
                raise SourceError(f"`{' '.join([tree.name, *path])}` cannot run: {exc}") from None


__all__ = ["Call", "CallScope", "Handler", "KINDS", "Kind", "check", "kinds"]
