"""The MCP source: upstream servers' tool lists become one tree, one group per server.

Tool lists are cached on disk, keyed by each server's configuration, so starting the wrapped server and
walking its help start no upstream process. A server with more tools than `threshold` is split into
subgroups (`grouping.py`). Each tool becomes a command whose options come from its input schema.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
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
STARTUP_BUDGET = 5.0  # seconds a server may take to list its tools at start-up (then it is shown as unavailable)
RETRY_BUDGET = 60.0  # the same, when retried in the background while serving
FAILED_TTL = 60.0  # how long a failure is remembered
ROOT_LIMIT = 30  # servers at the root before they are clustered
TTL = 24 * 3600.0
SEARCH_HANDLER = {"kind": "search"}


def cache_dir() -> Path:
    base = os.environ.get("MCP_CLI_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "mcp-cli"
    )
    return Path(base)


def cache_entries() -> list[tuple[str, str, float]]:
    """What the cache holds: (file name, what it says, age in seconds), newest first."""
    entries = []
    for path in cache_dir().glob("tools-*"):
        try:
            age, text = time.time() - path.stat().st_mtime, path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if path.suffix == ".failed":
            why = (_remembered(path) or ("an old failure, no longer used",))[0]
            entries.append((path.name, f"failed: {one_line(why, 100)}", age))
        elif path.suffix == ".json":
            try:
                listing = json.loads(text)
                about = f"{listing['server'].get('name') or '?'}: {len(listing['tools'])} tools"
            except (ValueError, KeyError, TypeError, AttributeError):
                about = "unreadable (asked again on the next start)"
            entries.append((path.name, about, age))
    return sorted(entries, key=lambda e: e[2])


def clear_cache() -> int:
    """Delete every cached tool list and remembered failure; how many files were deleted."""
    deleted = 0
    for path in cache_dir().glob("tools-*"):
        with contextlib.suppress(OSError):
            path.unlink()
            deleted += 1
    return deleted


def _cache_file(config: dict[str, Any]) -> Path:
    key = hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()[:32]
    return cache_dir() / f"tools-{key}.json"


class Unavailable(Exception):
    """A server whose tools could not be listed; the message says why."""


def _failure_file(config: dict[str, Any]) -> Path:
    return _cache_file(config).with_suffix(".failed")


async def _listing(server: Server, refresh: bool, ttl: float, budget: float) -> dict[str, Any]:
    """A server's tool list from the cache if fresh, else from the server (then cached). A failure is cached
    for FAILED_TTL seconds, so that starts in a row do not each wait for the same broken server."""
    from ..upstream import list_tools

    path, failed = _cache_file(server.config), _failure_file(server.config)
    if not refresh and path.is_file() and time.time() - path.stat().st_mtime < ttl:
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            pass
    timeout = float(server.config.get("startup_timeout") or budget)
    remembered = _remembered(failed)
    if not refresh and remembered and remembered[1] >= timeout:  # failed as recently, given as long as now
        why, _, age = remembered
        raise Unavailable(f"{why} ({age:.0f} s ago; asked again after {FAILED_TTL:g} s)")
    try:
        listing = await list_tools(server.config, timeout)
    except Exception as exc:
        why = str(exc)
        if why.startswith("no answer"):  # keep its stderr tail, if any
            why = f"no answer within {timeout:g} s{why[len('no answer') :]}"
        _remember(failed, why, timeout)
        raise Unavailable(why) from None
    _write(path, json.dumps(listing))
    failed.unlink(missing_ok=True)
    return listing


def _remember(path: Path, why: str, timeout: float) -> None:
    _write(path, json.dumps({"why": why, "timeout": timeout}))


def _remembered(path: Path) -> tuple[str, float, float] | None:
    """(why, the time it was given, age in seconds) of a failure remembered less than FAILED_TTL ago."""
    try:
        age = time.time() - path.stat().st_mtime
        data = json.loads(path.read_text(encoding="utf-8"))
        return (str(data["why"]), float(data["timeout"]), age) if age < FAILED_TTL else None
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _write(path: Path, text: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    except OSError:
        pass  # a read-only cache only costs speed


async def listings(
    servers: list[Server],
    refresh: bool = False,
    ttl: float = TTL,
    budget: float = STARTUP_BUDGET,
    progress: bool = False,
    decided: Callable[[dict[str, Any], dict[str, str]], None] | None = None,
) -> tuple[dict[str, Any], dict[str, str]]:
    """Every server's listing, fetched concurrently, each within its start-up budget: (found, {name: why not}).
    `decided(found, failed)` is called as soon as every server has answered or run out of time, while those
    that ran out are still being stopped (a listing that arrives after that is only cached)."""
    found: dict[str, Any] = {}
    failed: dict[str, str] = {}
    waiting = {s.name for s in servers}
    all_decided = anyio.Event()

    def settle(name: str, listing: dict[str, Any] | None = None, why: str = "") -> None:
        if name in waiting:
            waiting.discard(name)
            found.update({name: listing} if listing is not None else {})
            failed.update({} if listing is not None else {name: why})
            if not waiting:
                all_decided.set()

    async def one(server: Server) -> None:
        try:
            settle(server.name, await _listing(server, refresh, ttl, budget))
        except Exception as exc:  # any failure of one server must not stop the others
            settle(server.name, why=str(exc))

    async def deadline(server: Server) -> None:
        timeout = float(server.config.get("startup_timeout") or budget)
        await anyio.sleep(timeout)
        if server.name in waiting:
            why = f"no answer within {timeout:g} s"
            _remember(_failure_file(server.config), why, timeout)
            settle(server.name, why=why)

    async with anyio.create_task_group() as tg:
        for server in servers:
            tg.start_soon(one, server)
        async with anyio.create_task_group() as timers:
            for server in servers:
                timers.start_soon(deadline, server)
            if progress and sys.stderr.isatty():
                timers.start_soon(_report, waiting, budget)
            await all_decided.wait()
            timers.cancel_scope.cancel()
        found, failed = dict(found), dict(failed)
        if decided is not None:
            decided(found, failed)
    return found, failed


async def _report(waiting: set[str], budget: float) -> None:
    """After a moment, a line on the terminal naming the servers still being asked (cleared when done)."""
    start = time.monotonic()
    await anyio.sleep(1)
    try:
        while waiting:
            names = ", ".join(sorted(waiting)[:5]) + (" ..." if len(waiting) > 5 else "")
            line = f"waiting for {len(waiting)} MCP server(s): {names} ({time.monotonic() - start:.0f} s of {budget:g})"
            sys.stderr.write("\r" + line[:150] + "\033[K")
            sys.stderr.flush()
            await anyio.sleep(0.5)
    finally:
        sys.stderr.write("\r\033[K")
        sys.stderr.flush()


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


def unavailable_group(server: Server, why: str) -> Group:
    """A server whose tools are unknown: an empty group at its place that says why."""
    return Group(
        name=kebab(server.name),
        summary=f"Unavailable: {one_line(why, 120)}",
        description=f"MCP server `{server.name}` could not list its tools: {why}. While serving, it is asked again "
        "in the background and its commands appear here once it answers.",
    )


def build(
    name: str,
    servers: list[Server],
    found: dict[str, Any],
    threshold: int = THRESHOLD,
    tools: list[str] | None = None,
    exclude_tools: list[str] | None = None,
    failed: dict[str, str] | None = None,
) -> Tree:
    """The tree for servers whose listings were found, with a `search` command at the root; a server that
    `failed` is an empty group that says why."""
    root = Group(name=kebab(name), summary="")
    upstreams: dict[str, dict[str, Any]] = {}
    for server in servers:
        if server.name in found:
            listing = found[server.name]
            kept = [t for t in listing.get("tools", []) if server.wants(t["name"], tools or [], exclude_tools or [])]
            root.children.append(server_group(server, listing, kept, threshold))
            upstreams[server.name] = server.config
        elif failed and server.name in failed:
            root.children.append(unavailable_group(server, failed[server.name]))
    count = sum(1 for _, n in Tree(root).walk() if isinstance(n, Command))
    servers_shown = [g.name for g in root.children]
    if len(root.children) > ROOT_LIMIT:
        root.children = _cluster(root.children)
    unavailable = f" ({len(failed)} unavailable)" if failed else ""
    root.summary = f"{count} tools from {len(servers_shown) - len(failed or {})} MCP servers{unavailable}."
    root.children.insert(0, search_command(root.name))
    return Tree(root=root, upstreams=upstreams)


async def discover(path: str | Path, **options: Any) -> tuple[Tree, list[str]]:
    """Read a config, list (or recall) every server's tools within the start-up budget, and build the tree.
    Servers that did not answer are shown as unavailable, and the tree can `rediscover` them later."""
    servers, warnings = _servers(path, options)
    found, failed = await listings(servers, options.get("refresh", False), budget=_budget(options))
    return _tree(path, servers, found, failed, warnings, options)


def load(path: str | Path, **options: Any) -> tuple[Tree, list[str]]:
    """`discover` from synchronous code, with progress on a terminal (`progress=True`). Discovery runs on a
    thread of its own, so that servers which ran out of time are stopped there while the caller goes on."""
    servers, warnings = _servers(path, options)
    decision: Future = Future()

    def work() -> None:
        try:
            refresh, progress = options.get("refresh", False), options.get("progress", False)
            decided = lambda *r: decision.set_result(r)  # noqa: E731
            anyio.run(functools.partial(listings, servers, refresh, budget=_budget(options), progress=progress,
                                        decided=decided))  # fmt: skip
        except BaseException as exc:  # handed to the caller
            if not decision.done():
                decision.set_exception(exc)

    threading.Thread(target=work, name="mcp-cli discovery", daemon=True).start()
    found, failed = decision.result()
    return _tree(path, servers, found, failed, warnings, options)


def _budget(options: dict[str, Any]) -> float:
    return float(options.get("startup") or STARTUP_BUDGET)


def _servers(path: str | Path, options: dict[str, Any]) -> tuple[list[Server], list[str]]:
    servers, warnings = read(path, options.get("only"), options.get("skip"))
    if not servers:
        raise SourceError(f"{path}: no usable MCP servers" + (f" ({'; '.join(warnings)})" if warnings else ""))
    return servers, warnings


def _tree(
    path: str | Path,
    servers: list[Server],
    found: dict[str, Any],
    failed: dict[str, str],
    warnings: list[str],
    options: dict[str, Any],
) -> tuple[Tree, list[str]]:
    """The tree of what was found; one that failed is shown as unavailable and asked for again later."""
    warnings = warnings + [
        f"server {n!r}: cannot list its tools: {why}; shown as unavailable" for n, why in failed.items()
    ]
    name = options.get("name") or default_name(Path(path))
    keep = {k: options.get(k) for k in ("tools", "exclude_tools")}
    tree = build(name, servers, found, options.get("threshold") or THRESHOLD, failed=failed, **keep)
    if failed:
        again = {k: v for k, v in options.items() if k not in ("refresh", "progress", "startup")}

        async def rediscover() -> Tree:
            return (await discover(path, startup=RETRY_BUDGET, **again))[0]

        tree.rediscover = rediscover
    return tree, warnings


def default_name(path: Path) -> str:
    """`team-tools.json` -> team-tools; the usual client file names (.mcp.json, config.toml, ...) -> mcp."""
    stem = path.stem.lstrip(".")
    generic = {"", "mcp", "config", "claude", "claude_desktop_config", "settings", "servers"}
    return "mcp" if stem.lower() in generic else stem
