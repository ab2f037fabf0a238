"""Handlers run a command once its argv is parsed. One small interface, implementations side by side.

A handler reference in the tree is plain data, `{"kind": "python", ...}` or `{"kind": "subprocess", ...}`;
`resolve` turns it into an object with `async run(call) -> Result`.
"""

from __future__ import annotations

from ..tree import Tree
from .base import Call, Handler
from .mcp import McpHandler
from .python import PythonHandler
from .search import SearchHandler
from .subprocess import SubprocessHandler

KINDS: dict[str, type] = {
    "python": PythonHandler,
    "subprocess": SubprocessHandler,
    "mcp": McpHandler,
    "search": SearchHandler,
}


def resolve(ref: dict, tree: Tree) -> Handler:
    """The handler a reference names. Raises ValueError for an unknown or incomplete reference."""
    kind = ref.get("kind")
    if kind not in KINDS:
        known = ", ".join(sorted(KINDS))
        raise ValueError(f"no handler of kind {kind!r} (known kinds: {known})")
    return KINDS[kind](ref, tree)


__all__ = ["Call", "Handler", "KINDS", "resolve"]
