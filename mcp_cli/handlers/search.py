"""The handler of a tree's `search` command: `SearchRef`, `{"kind": "search"}` (see `search/ranking.py`).

A confident answer lists the matches, the usage line of each of the first three under its row, so that an agent can
call one without opening its help (only two rows when the first is all but sure); when even the best match fits the
query weakly (`ranking.WEAK`), the first line says no command fits, naming the words of things no command knows, and
the closest three commands follow all the same, with their usage lines."""

from __future__ import annotations

from functools import partial
from typing import Any

from ..refs import SearchRef
from ..result import Result
from ..search.ranking import Index, bounded
from ..text import rows
from ..tree import Tree
from .base import Call, in_thread

NEAREST = 3  # commands offered when no command fits
USAGES = 3  # hits shown with their usage lines ...
USAGE_LINES = 2  # ... each in up to two lines: room for its optional options' names
SURE = 0.85  # the second best scoring under this share of the best: the best is all but sure (bench/turns.py)
SURE_ROWS = 2  # rows of such an answer: the best, and one more in case


class SearchHandler:
    """The handler of a tree's `search` command; the index is built on first use."""

    def __init__(self, ref: SearchRef, tree: Tree) -> None:
        self.tree = tree
        self._index: Index | None = None

    async def run(self, call: Call) -> Result:
        query = bounded(" ".join(call.values.get("words", [])))
        prefer = call.context.domains() if call.context is not None else []
        limit = call.values.get("limit")
        return await in_thread(partial(self._answer, query, limit, prefer, call), self.tree.settings.timeout, "search")

    def _answer(self, query: str, limit: int | None, prefer: list[str], call: Call) -> Result:
        if self._index is None:
            self._index = Index(self.tree)
        index, name = self._index, self.tree.name
        hits = index.search(query, None if limit is None else max(1, int(limit)), prefer)
        if not hits:
            return Result(ok=True, output=f"{index.no_fit(query)} Run `{name} --help` to browse.\n")
        if limit is None and len(hits) > SURE_ROWS and hits[1][0] < SURE * hits[0][0]:
            hits = hits[:SURE_ROWS]
        if index.misses(query, hits):
            head = index.no_fit(query)
            closest = hits if limit is not None else index.search(query, NEAREST, prefer)
            return Result(
                ok=True,
                output="\n".join(
                    [
                        head + " The closest:",
                        *self._rows(closest, call),
                        "",
                        f"Run `{name} --help` to browse, or search with other words.",
                    ]
                )
                + "\n",
            )
        return Result(ok=True, output="\n".join(self._rows(hits, call)) + "\n")

    def _rows(self, hits: list[tuple[float, str, Any]], call: Call) -> list[str]:
        """A row per hit, the usage line of each of the first USAGES under it (as a group's listing shows its
        commands'), so that an agent can call one straight from the answer."""
        lines: list[str] = []
        for i, (row, (_, _, node)) in enumerate(
            zip(rows([(p, n.summary) for _, p, n in hits], widest=40), hits, strict=True)
        ):
            lines.append(row)
            if i < USAGES and call.usage is not None:
                lines += call.usage(node, USAGE_LINES).splitlines()
        return lines
