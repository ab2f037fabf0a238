"""The handler of a tree's `search` command: `{"kind": "search"}` (see `search/ranking.py`).

A confident answer lists the matches, the usage line of the first under its row, so that an agent can call it
without opening its help (only two rows when the first is all but sure); when even the best match fits the query
weakly (`ranking.WEAK`), the first line says no command fits, naming the words of things no command knows, and the
nearest domains are offered instead of weak rows."""

from __future__ import annotations

from functools import partial
from typing import Any

from ..result import Result
from ..search.ranking import Index, bounded
from ..text import rows
from ..tree import Tree
from .base import Call, in_thread

NEAREST = 3  # domains offered when no command fits
SURE = 0.85  # the second best scoring under this share of the best: the best is all but sure (bench/turns.py)
SURE_ROWS = 2  # rows of such an answer: the best, and one more in case


class SearchHandler:
    """The handler of a tree's `search` command; the index is built on first use."""

    def __init__(self, ref: dict[str, Any], tree: Tree) -> None:
        self.tree = tree
        self._index: Index | None = None

    @staticmethod
    def check(ref: dict[str, Any]) -> None:
        """Nothing to check: the command searches its own tree."""

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
        lines = rows([(path, node.summary) for _, path, node in hits], widest=40)
        if index.misses(query, hits):
            head = index.no_fit(query)
            if limit is not None:  # asked for a number of rows: they are shown, after the warning
                return Result(ok=True, output="\n".join([head + " The closest:", *lines]) + "\n")
            near = self._nearest(index.search(query, 10, prefer))
            return Result(ok=True, output="\n".join([head + " Nearest domains:", *near, "",
                          f"Run `{name} <domain> --help` to browse, or search with other words."]) + "\n")  # fmt: skip
        if call.usage is not None:  # under its row, as a group's listing shows its commands': how any path is called
            lines[1:1] = ["  " + line for line in call.usage(f"{name} {hits[0][1]}", hits[0][2]).splitlines()]
        return Result(ok=True, output="\n".join(lines) + "\n")

    def _nearest(self, hits: list[tuple[float, str, Any]]) -> list[str]:
        """Rows of the root's domains the best matches are in, best first (at most NEAREST)."""
        domains = list(dict.fromkeys(path.split()[0] for _, path, _ in hits))[:NEAREST]
        found = [self.tree.root.child(d) for d in domains]
        return rows([(node.name, node.summary) for node in found if node is not None], widest=40)
