"""Token economy: what an agent reads, up front and along a task, under four strategies on the same tools.

- static: the `tools/list` JSON of every tool;
- meta-tools (Speakeasy-style): `search_tools`, `describe_tools`, `execute_tool` definitions; a task adds one
  search result (top 5, name + description) and one describe of each tool it needs;
- search-tool (Anthropic-style): one search tool definition; a task adds the 5 full definitions it loads;
- mcp-cli: the one tool's definition; a task adds the root help, each group help on the way and the command
  help of each tool it needs (and, separately, starting with `search` instead of the root);
- exported skill (`mcp-cli export`): the SKILL.md frontmatter a client loads up front; a task adds the SKILL.md
  body (read when the skill is picked) and the same help walk, printed by its script.
Counts are o200k_base tokens of the text a client receives (tool JSON, or the tool result's text).
"""

from __future__ import annotations

import json
import re
import statistics
import tempfile
from pathlib import Path
from typing import Any

import anyio

from mcp_cli import generators
from mcp_cli.cli import tokens
from mcp_cli.engine.runtime import Runtime
from mcp_cli.search.ranking import Index
from mcp_cli.sources.mcp_config import Server
from mcp_cli.sources.mcp_tools import build
from mcp_cli.tree import Command, Tree

from .corpora import Corpus

META_TOOLS = [
    {
        "name": "search_tools",
        "description": "Search the available tools by keywords and return the names and "
        "descriptions of the best matches. Use this first to find a tool for the task.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Keywords describing what you want to do."},
                "limit": {"type": "integer", "description": "Maximum number of results (default 5)."},
            },
            "required": ["query"],
        },
    },
    {
        "name": "describe_tools",
        "description": "Get the full definitions (descriptions and input schemas) of "
        "tools by name, so you can call them correctly with execute_tool.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "tool_names": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "Names of the tools to describe.",
                }
            },
            "required": ["tool_names"],
        },
    },
    {
        "name": "execute_tool",
        "description": "Execute a tool by name with arguments matching its input schema.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "tool_name": {"type": "string", "description": "Name of the tool to run."},
                "input": {"type": "object", "description": "Arguments for the tool, as described by describe_tools."},
            },
            "required": ["tool_name", "input"],
        },
    },
]
SEARCH_TOOL = {
    "name": "tool_search",
    "description": "Search for tools by keywords. The definitions of the best matching tools (up to 5) are loaded "
    "and become callable.",
    "inputSchema": {
        "type": "object",
        "properties": {"query": {"type": "string", "description": "Keywords for the tool you need."}},
        "required": ["query"],
    },
}


def tree_of(corpus: Corpus) -> Tree:
    """The tree mcp-cli builds from the corpus's servers, as `mcp-cli serve` would."""
    servers = [Server(name, {"command": "unused"}) for name, _ in corpus.servers]
    found = {name: {"server": {"name": name}, "tools": tools} for name, tools in corpus.servers}
    return build("tools", servers, found)


class FlatIndex:
    """BM25 over the flat tool list (name + description), standing in for the baselines' own search."""

    def __init__(self, corpus: Corpus) -> None:
        from mcp_cli.tree import Group

        self.tools = {(s, t["name"]): t for s, tools in corpus.servers for t in tools}
        root = Group(
            "flat", children=[Command(f"{s}/{n}", summary=t.get("description", "")) for (s, n), t in self.tools.items()]
        )
        self.index = Index(Tree(root))

    def top(self, query: str, k: int = 5) -> list[dict[str, Any]]:
        hits = self.index.search(query, k)
        return [self.tools[tuple(path.split("/", 1))] for _, path, _ in hits]  # type: ignore[index]


def _definition(tool: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in tool.items() if k in ("name", "title", "description", "inputSchema", "annotations")}


class Paths:
    """Builds what each strategy makes an agent read for a corpus and its tasks."""

    def __init__(self, corpus: Corpus) -> None:
        self.corpus = corpus
        self.tree = tree_of(corpus)
        self.runtime = Runtime(self.tree)
        self.flat = FlatIndex(corpus)
        self.where = {
            (cmd.handler.server, cmd.handler.tool): path
            for path, cmd in self.tree.walk()
            if isinstance(cmd, Command) and cmd.handler.tool is not None
        }
        definition = tokens.one_tool(self.tree)
        self.description, self.one_tool = definition["description"], tokens.count(tokens.tool_json([definition]))
        self.skill_front, self.skill_body = self._exported_skill()
        self.up = self._up_front()

    def help(self, argv: list[str]) -> str:
        result = anyio.run(self.runtime.call, argv)
        assert result.ok, result.output
        return result.text()

    def _exported_skill(self) -> tuple[int, int]:
        """Tokens of the exported skill's SKILL.md: its frontmatter, and its body."""
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp) / self.tree.name
            generators.skill_folder(self.tree, folder, ["mcp-cli", "run", "/path/to/config.json"])
            _, front, body = (folder / "SKILL.md").read_text(encoding="utf-8").split("---\n", 2)
        return tokens.count(front), tokens.count(body)

    def _up_front(self) -> dict[str, int]:
        static = tokens.count(tokens.tool_json([_definition(t) for t in self.corpus.tools]))
        return {
            "static": static,
            "meta-tools": tokens.count(tokens.tool_json(META_TOOLS)),
            "search-tool": tokens.count(tokens.tool_json([SEARCH_TOOL])),
            "mcp-cli": self.one_tool,
            "exported skill": self.skill_front,
        }

    def walk(self, paths: list[list[str]]) -> dict[tuple[str, ...], str]:
        """The helps an agent reads to each command of `paths` (by the path asked for `--help`), in order: at each
        level it goes to the deepest group or command on the way whose path the tool's description or a help already
        read named (see `named`), reading each help once; the root's help when nothing on the way is named."""
        read: dict[tuple[str, ...], str] = {}
        for path in paths:
            depth = 0
            while depth < len(path):
                seen = [self.description, *read.values()]
                depth = max(
                    (d for d in range(depth + 1, len(path) + 1) if any(named(t, path[:d]) for t in seen)),
                    default=depth + 1 if depth or () in read else 0,
                )
                if tuple(path[:depth]) not in read:
                    read[tuple(path[:depth])] = self.help([*path[:depth], "--help"])
        return read

    def task(self, query: str, needed: list[tuple[str, str]]) -> dict[str, int]:
        """Tokens read along one task, up-front definitions included, per strategy."""
        up = self.up
        wanted = [self.flat.tools[n] for n in needed]
        hits = self.flat.top(query, 5)
        listing = json.dumps([{"name": t["name"], "description": t.get("description", "")} for t in hits])
        meta = up["meta-tools"] + tokens.count(listing) + tokens.count(json.dumps([_definition(t) for t in wanted]))
        loaded = hits + [t for t in wanted if t not in hits]
        search_tool = up["search-tool"] + tokens.count(tokens.tool_json([_definition(t) for t in loaded[:5]]))
        walk = self.walk([self.where[pair] for pair in needed]).values()
        cli = self.one_tool + sum(tokens.count(t) for t in walk)
        found = self.help(["search", *query.split()[:40]])
        via_search = (
            self.one_tool
            + tokens.count(found)
            + sum(tokens.count(self.help([*self.where[p], "--help"])) for p in needed)
        )
        skill = self.skill_front + self.skill_body + sum(tokens.count(t) for t in walk)
        return {
            "meta-tools": meta,
            "search-tool": search_tool,
            "mcp-cli": cli,
            "mcp-cli via search": via_search,
            "exported skill": skill,
        }


def named(text: str, path: list[str]) -> bool:
    """Whether a help text names `path` unambiguously: the whole path (as search results and examples write it),
    or a listing row of `path[-2]` whose summary is a list of names (not capitalised: a summary of topics or prose
    starts with a capital) with `path[-1]` among them (`teams  get, list.`, `secrets  1password, vault.`)."""
    if re.search(rf"(?<![\w-]){re.escape(' '.join(path))}(?![\w-])", text):
        return True
    if len(path) < 2:
        return False
    row = re.search(rf"^  {re.escape(path[-2])}  +(.*)$", text, re.M)
    items = re.split(r"[,:;()]\s*|\s+", row.group(1).rstrip(". ")) if row and not row.group(1)[:1].isupper() else []
    return path[-1] in items


def p95(values: list[int]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]


def run(corpus: Corpus, task_limit: int | None = None) -> dict[str, Any]:
    """Up-front tokens, and the median and p95 of task paths, per strategy, for one corpus."""
    paths = Paths(corpus)
    up = paths.up
    per_task: dict[str, list[int]] = {}
    for query, needed in corpus.tasks[:task_limit]:
        for strategy, value in paths.task(query, needed).items():
            per_task.setdefault(strategy, []).append(value)
    return {
        "corpus": corpus.name,
        "tools": len(corpus.tools),
        "servers": len(corpus.servers),
        "tasks": len(corpus.tasks[:task_limit]),
        "up_front": up,
        "median": {k: statistics.median(v) for k, v in per_task.items()},
        "p95": {k: p95(v) for k, v in per_task.items()},
        "root_help": tokens.count(paths.help(["--help"])),
    }
