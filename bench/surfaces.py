"""Surfaces: what a client reads from each surface of one tree, next to the static list of every tool.

What a client reads, up front and along a task, from each surface `mcp-cli serve` offers over the same tree:

- MCP tool: the one tool's definition and the server's instructions (clients put both in the model's context);
  a task adds the help walk from the root (or from `search`), as in the token economy;
- meta-tools (`--surface meta`): the three tools' definitions and the server's instructions; a task adds the
  `search_tools` answer for the prompt and one `describe_tools` answer naming the commands it needs;
- OpenAPI (`--openapi`): the whole `/openapi.json` document (an upper bound: a client such as Open WebUI turns its
  one operation into one tool); a task adds the same walk, each step answered by `/run` as the result envelope in
  JSON (the help text inside it, escaped);
Counts are o200k_base tokens of what the client receives: tool JSON, instructions, the text of a tool result.
"""

from __future__ import annotations

import json
import statistics
from typing import Any

import anyio

from mcp_cli.cli import tokens
from mcp_cli.surfaces import meta_tools, openapi, tool

from .corpora import Corpus
from .economy import Paths

SURFACES = ("MCP tool", "MCP tool via search", "meta-tools", "OpenAPI")


class Surfaces:
    """Builds what each surface makes a client read for a corpus and its tasks."""

    def __init__(self, corpus: Corpus) -> None:
        self.paths = Paths(corpus)
        self.meta = meta_tools.Meta(self.paths.runtime)
        listed = [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in meta_tools.tools()]
        runtime = self.paths.runtime
        self.up = {
            "static": self.paths.up["static"],
            "MCP tool": self.paths.one_tool + tokens.count(tool.instructions(runtime)),
            "meta-tools": tokens.count(tokens.tool_json(listed)) + tokens.count(meta_tools.instructions(runtime.tree)),
            "OpenAPI": tokens.count(_json(openapi.document(runtime, "http://127.0.0.1:8000"))),
        }
        self.up["MCP tool via search"] = self.up["MCP tool"]

    def _envelope(self, argv: list[str]) -> int:
        """Tokens of `/run`'s answer to argv: the result envelope as JSON."""
        return tokens.count(_json(anyio.run(self.paths.runtime.call, argv).structured()))

    def _meta(self, tool: str, arguments: dict[str, Any]) -> int:
        result = anyio.run(self.meta.call, tool, arguments)
        assert result.ok, result.text()
        return tokens.count(result.text())

    def task(self, query: str, needed: list[tuple[str, str]]) -> dict[str, int]:
        """Tokens read along one task, up-front definitions included, per surface."""
        economy = self.paths.task(query, needed)
        paths = [self.paths.where[pair] for pair in needed]
        names = [" ".join(path) for path in paths]
        walked = self.paths.walk(paths)
        meta = (
            self.up["meta-tools"]
            + self._meta("search_tools", {"query": query})
            + self._meta("describe_tools", {"names": names})
        )
        instructions = self.up["MCP tool"] - self.paths.one_tool  # the economy counts the tool definition only
        return {
            "MCP tool": economy["mcp-cli"] + instructions,
            "MCP tool via search": economy["mcp-cli via search"] + instructions,
            "meta-tools": meta,
            "OpenAPI": self.up["OpenAPI"] + sum(self._envelope([*path, "--help"]) for path in walked),
        }


def _json(value: Any) -> str:
    """JSON as an HTTP answer carries it (compact, UTF-8)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def run(corpus: Corpus, task_limit: int | None = None) -> dict[str, Any]:
    """Up-front tokens, and the median task path, per surface, for one corpus."""
    surfaces = Surfaces(corpus)
    per_task: dict[str, list[int]] = {}
    for query, needed in corpus.tasks[:task_limit]:
        for surface, value in surfaces.task(query, needed).items():
            per_task.setdefault(surface, []).append(value)
    return {
        "corpus": corpus.name,
        "tools": len(corpus.tools),
        "up_front": surfaces.up,
        "median": {k: statistics.median(v) for k, v in per_task.items()},
    }


def table(results: list[dict[str, Any]]) -> list[str]:
    """One row per corpus: the static list, then each surface up front and along a task (x of static)."""
    head = "| corpus | tools | static list | " + " | ".join(f"{s} up front / task median" for s in SURFACES) + " |"
    lines = [head, "|---|---|---|" + "---|" * len(SURFACES)]
    for r in results:
        static = r["up_front"]["static"]
        cells = [f"{r['up_front'][s]:,} / {r['median'][s]:,.0f} ({r['median'][s] / static:.3f}x)" for s in SURFACES]
        lines.append(f"| {r['corpus']} | {r['tools']:,} | {static:,} | " + " | ".join(cells) + " |")
    return lines


if __name__ == "__main__":
    from .corpora import boundary, github, progressive

    for c in (boundary(), github(), progressive()):
        print(json.dumps(run(c)))
