"""The handler of a tree's `search` command: `{"kind": "search"}` (see `search/ranking.py`)."""

from __future__ import annotations

from typing import Any

from ..result import Result
from ..search.ranking import Index
from ..text import rows
from ..tree import Tree
from .base import Call


class SearchHandler:
    """The handler of a tree's `search` command; the index is built on first use."""

    def __init__(self, ref: dict[str, Any], tree: Tree) -> None:
        self.tree = tree
        self._index: Index | None = None

    @staticmethod
    def check(ref: dict[str, Any]) -> None:
        """Nothing to check: the command searches its own tree."""

    async def run(self, call: Call) -> Result:
        if self._index is None:
            self._index = Index(self.tree)
        query = " ".join(call.values.get("words", []))
        prefer = call.context.domains() if call.context is not None else []
        limit = call.values.get("limit")
        hits = self._index.search(query, None if limit is None else max(1, int(limit)), prefer)
        if not hits:
            return Result(ok=True, output=f"No command matches {query!r}. Run `{self.tree.name} --help` to browse.\n")
        lines = rows([(path, node.summary) for _, path, node in hits], widest=40)
        footer = f"Run `{self.tree.name} <path> --help` for usage."
        return Result(ok=True, output="\n".join(lines + ["", footer]) + "\n")
