"""The MCP source: upstream servers' tool lists become one tree, one group per server.

Tool lists are cached on disk, keyed by each server's configuration, so starting the wrapped server and
walking its help start no upstream process. A server with more tools than `threshold` is split into
subgroups (`grouping.py`). Each tool becomes a command whose options come from its input schema.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

import anyio

from .. import grouping, schema
from ..errors import SourceError
from ..help import first_sentence, one_line
from ..tree import Command, Group, Node, Param, Tree
from .mcp_config import Server, read
from .skill.pyast import kebab

THRESHOLD = 15
ROOT_LIMIT = 30  # servers at the root before they are clustered
TTL = 24 * 3600.0
SEARCH_HANDLER = {"kind": "search"}


def cache_dir() -> Path:
    base = os.environ.get("MCP_CLI_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "mcp-cli"
    )
    return Path(base)


def _cache_file(config: dict[str, Any]) -> Path:
    key = hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()[:32]
    return cache_dir() / f"tools-{key}.json"


async def _listing(server: Server, refresh: bool, ttl: float) -> dict[str, Any]:
    """A server's tool list from the cache if fresh, else from the server (then cached)."""
    from ..upstream import list_tools

    path = _cache_file(server.config)
    if not refresh and path.is_file() and time.time() - path.stat().st_mtime < ttl:
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            pass
    listing = await list_tools(server.config)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(listing), encoding="utf-8")
        tmp.replace(path)
    except OSError:
        pass  # a read-only cache only costs speed
    return listing


async def listings(servers: list[Server], refresh: bool = False, ttl: float = TTL) -> tuple[dict[str, Any], list[str]]:
    """Every server's listing, fetched concurrently; a server that fails is left out with a warning."""
    out: dict[str, Any] = {}
    warnings: list[str] = []

    async def one(server: Server) -> None:
        try:
            out[server.name] = await _listing(server, refresh, ttl)
        except Exception as exc:  # any failure of one server must not stop the others
            warnings.append(f"server {server.name!r}: cannot list its tools: {exc}; left out")

    async with anyio.create_task_group() as tg:
        for server in servers:
            tg.start_soon(one, server)
    return out, warnings


def command(server: str, tool: dict[str, Any], name: str = "") -> Command:
    """A command for one upstream tool: options from its input schema, its annotations kept for help."""
    input_schema = tool.get("inputSchema") if isinstance(tool.get("inputSchema"), dict) else {"type": "object"}
    annotations = tool.get("annotations") if isinstance(tool.get("annotations"), dict) else {}
    title = tool.get("title") or annotations.get("title") or ""
    description = str(tool.get("description") or title or "").strip()
    cmd_name = name or kebab(tool["name"])
    return Command(
        name=cmd_name,
        summary=one_line(description) if description else "",
        description=description,
        params=schema.params(input_schema),
        handler={"kind": "mcp", "server": server, "tool": tool["name"]},
        aliases=[tool["name"]] if tool["name"] != cmd_name else [],
        schema=input_schema,
        annotations={k: v for k, v in annotations.items() if k != "title"},
    )


def _toolset(tool: dict[str, Any]) -> str:
    meta = tool.get("_meta") if isinstance(tool.get("_meta"), dict) else {}
    return str(tool.get("_toolset") or meta.get("toolset") or "")


def server_group(server: Server, listing: dict[str, Any], tools: list[dict[str, Any]], threshold: int) -> Group:
    """One server's group: its tools as commands, split into subgroups when there are more than `threshold`."""
    info = listing.get("server", {})
    group = Group(name=kebab(server.name), description=first_sentence(info.get("instructions") or "", 300))
    limit = int(server.options.get("threshold") or threshold)
    by_name = {t["name"]: t for t in tools}
    if len(tools) <= limit:
        prefix = grouping.shared_prefix([t["name"] for t in tools])
        group.children = [command(server.name, t, kebab(t["name"])[len(prefix) :]) for t in tools]
        group.summary = _about(group)
        return group
    preset: dict[str, list[str]] = {}
    for sub, patterns in (server.options.get("groups") or {}).items():
        import fnmatch

        preset[kebab(sub)] = [n for n in by_name if any(fnmatch.fnmatchcase(n, p) for p in patterns)]
    if not preset and all(_toolset(t) for t in tools):
        for t in tools:
            preset.setdefault(kebab(_toolset(t)), []).append(t["name"])
    subgroups, left = grouping.split(list(by_name), preset)
    for sub, members in subgroups.items():
        children: list[Node] = [command(server.name, by_name[t], kebab(short) if short else "") for t, short in members]
        group.children.append(Group(name=sub, summary=_names(children), children=children))
    group.children += [command(server.name, by_name[n]) for n in left]
    group.summary = _about(group)
    return group


def _names(nodes: list[Node], shown: int = 4) -> str:
    """`list, create, get, update, ...`: the first few names."""
    return ", ".join(n.name for n in nodes[:shown]) + (", ..." if len(nodes) > shown else ".")


def _about(group: Group, shown: int = 4) -> str:
    """`Issues, pull-requests, repositories, branches (11 tools).`: what the tools act on, and how many."""
    commands = [n for _, n in Tree(group).walk() if isinstance(n, Command)]
    nouns = grouping.topics([c.handler.get("tool", c.name) for c in commands], shown)
    what = ", ".join(nouns) if nouns else ", ".join(c.name for c in commands[:shown])
    return f"{what[:1].upper()}{what[1:]}."


def _cluster(groups: list[Group]) -> list[Node]:
    """Too many servers for a readable root: servers whose names start with the same word share a group
    (`github`, `github-2`, `github-work` -> `github`); the rest stay at the root."""
    by_word: dict[str, list[Group]] = {}
    for g in groups:
        by_word.setdefault(grouping.words(g.name)[0] if grouping.words(g.name) else g.name, []).append(g)
    out: list[Node] = []
    for word, members in by_word.items():
        if len(members) == 1:
            out.append(members[0])
        else:
            cluster = Group(name=word, children=list(members))
            cluster.summary = f"{_about(cluster)[:-1]} ({len(members)} servers)."
            out.append(cluster)
    return out


def search_command(name: str) -> Command:
    return Command(
        name="search",
        summary="Find commands by what they do; prints paths to run with --help.",
        params=[
            Param("words", nargs="+", required=True, help="What you want to do, in your own words."),
            Param("limit", type="integer", flags=["-n", "--limit"], default=5, help="How many results."),
        ],
        handler=dict(SEARCH_HANDLER),
        examples=[f"{name} search create an issue"],
    )


def build(
    name: str,
    servers: list[Server],
    found: dict[str, Any],
    threshold: int = THRESHOLD,
    tools: list[str] | None = None,
    exclude_tools: list[str] | None = None,
) -> Tree:
    """The tree for servers whose listings were found, with a `search` command at the root."""
    root = Group(name=kebab(name), summary="")
    upstreams: dict[str, dict[str, Any]] = {}
    for server in servers:
        if server.name not in found:
            continue
        listing = found[server.name]
        kept = [t for t in listing.get("tools", []) if server.wants(t["name"], tools or [], exclude_tools or [])]
        root.children.append(server_group(server, listing, kept, threshold))
        upstreams[server.name] = server.config
    count = sum(1 for _, n in Tree(root).walk() if isinstance(n, Command))
    servers_shown = [g.name for g in root.children]
    if len(root.children) > ROOT_LIMIT:
        root.children = _cluster(root.children)
    root.summary = f"{count} tools from {len(servers_shown)} MCP servers."
    root.children.insert(0, search_command(root.name))
    return Tree(root=root, upstreams=upstreams)


def load(
    path: str | Path,
    name: str | None = None,
    refresh: bool = False,
    only: list[str] | None = None,
    skip: list[str] | None = None,
    tools: list[str] | None = None,
    exclude_tools: list[str] | None = None,
    threshold: int = THRESHOLD,
) -> tuple[Tree, list[str]]:
    """Read a config, list (or recall) every server's tools, and build the tree."""
    servers, warnings = read(path, only, skip)
    if not servers:
        raise SourceError(f"{path}: no usable MCP servers" + (f" ({'; '.join(warnings)})" if warnings else ""))
    found, more = anyio.run(listings, servers, refresh)
    warnings += more
    if not found:
        raise SourceError(f"{path}: none of its servers could be listed:\n  " + "\n  ".join(more))
    tree = build(name or default_name(Path(path)), servers, found, threshold, tools, exclude_tools)
    return tree, warnings


def default_name(path: Path) -> str:
    """`team-tools.json` -> team-tools; the usual client file names (.mcp.json, config.toml, ...) -> mcp."""
    stem = path.stem.lstrip(".")
    generic = {"", "mcp", "config", "claude", "claude_desktop_config", "settings", "servers"}
    return "mcp" if stem.lower() in generic else stem
