"""The MCP source: upstream servers' tool lists become one tree, one group per server.

The lists come from `discovery.py` (asked for within a start-up budget, or recalled from the cache). Each server is
a group at the root named by its config key, however many there are, so that an agent that knows a server by name
goes straight to it; the root's listing says what each does. Each tool becomes a command whose options come from its
input schema, named by the tool's own name kebab-cased (less the server's name where the tool's name starts with
it: `git_status` of `git` is `git status`), the tool's name an alias. A server is split into subgroups
(`grouping.py`, or by toolset) only when its commands' usage lines would not fit its listing (or it has more tools
than a `threshold` given); a tool's name then still reaches it from the server's level (`engine/runtime.py`). A
server that could not list its tools is an empty group that says why.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .. import entities
from ..engine import help, schema
from ..errors import SourceError
from ..refs import McpToolRef, SearchRef
from ..search.ranking import SHOWN
from ..text import command_name, first_sentence, kebab, one_line
from ..tree import Command, Group, Node, Param, Tree
from . import discovery, grouping, mcp_extras, summaries, tool_names
from .mcp_config import Server, read

THRESHOLD: int | None = None  # tools in a server's group before it is split (None: when its listing overflows)
SMALL = 2  # tools of a server whose summary names its commands (about what naming its things costs)
LISTING = 3_600  # characters of a server's listing of usage lines, at most, before it is split (help's budget)


def command(server: str, tool: dict[str, Any], name: str = "", declared: dict[str, str] | None = None) -> Command:
    """A command for one upstream tool: options from its input schema, its annotations kept for help, the entity
    types it acts on from its property names (and the server's `declared` ones, see `entities.infer`)."""
    input_schema = tool.get("inputSchema")
    if not isinstance(input_schema, dict):
        input_schema = {"type": "object"}
    properties = input_schema.get("properties")
    if not isinstance(properties, dict):
        properties = {}
    annotations = tool.get("annotations")
    if not isinstance(annotations, dict):
        annotations = {}
    title = tool.get("title") or annotations.get("title") or ""
    description = str(tool.get("description") or title or "").strip() or summaries.of_tool(
        tool["name"], list(properties)
    )
    if isinstance(title, str) and title.strip() and not re.search("[A-Za-z]", description):
        description = f"{title.strip()}. {description}"  # an English title first, for a description in another script
    cmd_name = name or command_name(tool["name"])
    return Command(
        name=cmd_name,
        summary=one_line(description) if description else "",
        description=description,
        params=schema.params(input_schema),
        handler=McpToolRef(server=server, tool=tool["name"], task=_task(tool)),
        aliases=list(dict.fromkeys(n for n in (tool["name"], command_name(tool["name"])) if n != cmd_name)),
        schema=input_schema,
        annotations={k: v for k, v in annotations.items() if k != "title"},
        entities=entities.infer(list(properties), declared),
        returns=summaries.of_output(tool.get("outputSchema")),
    )


def _task(tool: dict[str, Any]) -> bool:
    """Whether a tool runs only as a task (`execution.taskSupport: required`); an `optional` one runs as a plain
    call."""
    execution = tool.get("execution")
    return isinstance(execution, dict) and execution.get("taskSupport") == "required"


def _toolset(tool: dict[str, Any]) -> str:
    meta = tool.get("_meta")
    if not isinstance(meta, dict):
        meta = {}
    return str(tool.get("_toolset") or meta.get("toolset") or "")


def server_group(
    server: Server, listing: discovery.Listing, tools: list[dict[str, Any]], threshold: int | None
) -> Group:
    """One server's group: its tools as commands, split into subgroups when their usage lines would overflow its
    listing, or when there are more than `threshold`."""
    info = listing.get("server", {})
    own = summaries.of_server(info, server.name)
    brand = summaries.brand([t.get("description") or "" for t in tools], server.name, info)
    group = _domain(server, description=own or first_sentence(info.get("instructions") or "", 300))
    limit = server.options.get("threshold") or threshold
    by_name = {t["name"]: t for t in tools}
    declared = server.options.get("entities")
    prefix = grouping.shared_prefix([t["name"] for t in tools])
    prefix = prefix if command_name(prefix.rstrip("-")) == group.name else ""
    flat: list[Node] = [command(server.name, t, _short(t["name"], prefix), declared) for t in tools]
    tool_names.distinct(flat)
    commands = [c for c in flat if isinstance(c, Command)]
    if len(tools) <= int(limit) if limit else help.callable_within(commands, LISTING):
        group.children = flat
        return _summarised(group, own, brand)
    preset: dict[str, list[str]] = {}
    for sub, patterns in (server.options.get("groups") or {}).items():
        preset[kebab(sub)] = [n for n in by_name if any(fnmatch.fnmatchcase(n, p) for p in patterns)]
    if not preset and all(_toolset(t) for t in tools):
        for t in tools:
            preset.setdefault(kebab(_toolset(t)), []).append(t["name"])
    subgroups, left = grouping.split(list(by_name), preset)
    for sub, members in subgroups.items():
        children: list[Node] = [
            command(server.name, by_name[t], kebab(short) if short else "", declared) for t, short in members
        ]
        tool_names.distinct(children)
        group.children.append(Group(name=sub, summary=_names(children), children=children))
    group.children += [command(server.name, by_name[n], declared=declared) for n in left]
    tool_names.distinct(group.children)
    return _summarised(group, own, brand)


def _summarised(group: Group, own: str, brand: str = "") -> Group:
    """The group with its summary: the server's `own` words, else `_about` its commands, else (where that says too
    little: `search.`) the first sentence of its instructions or of its first command's description; led by the
    `brand` its tools name where its key does not say it (`mcp`: `Pipedrive: contacts, deals, company.`)."""
    group.summary = own or _about(group)
    if not summaries.says_something(group.summary, group.name):
        first = next((n for _, n in Tree(group).walk() if isinstance(n, Command) and n.summary), None)
        group.summary = group.description or (first.summary if first else "") or group.summary
    if brand and brand.lower() not in group.summary.lower():
        group.summary = f"{brand}: {group.summary[:1].lower()}{group.summary[1:]}"
    return group


def _short(tool: str, prefix: str) -> str:
    """A tool's command name without the `prefix` its group's names share (`git-status` -> status)."""
    name = command_name(tool)
    return name[len(prefix) :] if prefix and name.startswith(prefix) else name


def _names(nodes: Sequence[Node], shown: int = 4) -> str:
    """`list, create, get, update, ...`: the first few names (all of a small group, so an agent can go straight to
    one)."""
    return ", ".join(n.name for n in nodes[:shown]) + (", ..." if len(nodes) > shown else ".")


def _about(group: Group, shown: int = 4) -> str:
    """A server of SMALL tools or fewer: its commands by name (`get-forecast, list-alerts.`, so an agent can go
    straight to one); else what its tools act on (`Issues, pull-requests, repositories, branches.`)."""
    commands = [n for _, n in Tree(group).walk() if isinstance(n, Command)]
    if len(commands) <= SMALL:
        return _names(commands)
    nouns = grouping.topics([c.handler.tool or c.name for c in commands], shown)
    what = ", ".join(nouns) if nouns else ", ".join(c.name for c in commands[:shown])
    return f"{what[:1].upper()}{what[1:]}."


def search_command(name: str) -> Command:
    return Command(
        name="search",
        summary="Find commands by what they do.",
        params=[
            Param("words", nargs="+", required=True, help="What you want to do, in your own words."),
            Param(
                "limit",
                type="integer",
                flags=["-n", "--limit"],
                help=f"How many results; default: the strong matches (at least half the best score), up to {SHOWN}.",
            ),
        ],
        handler=SearchRef(),
        examples=[f"{name} search create an issue"],
    )


def unavailable_group(server: Server, why: str, retried: bool = True) -> Group:
    """A server whose tools are unknown: an empty group at its place that says why, and what happens next (while
    serving, `retried`: it is asked again in the background)."""
    then = (
        "It is asked again in the background, and its commands appear here once it answers."
        if retried
        else "Run the command again to ask it again (give it longer with --startup-timeout SECONDS)."
    )
    return _domain(
        server,
        summary=f"Unavailable: {one_line(why, 120)}",
        description=f"MCP server `{server.name}` could not list its tools: {why}. {then}",
    )


def _domain(server: Server, summary: str = "", description: str = "") -> Group:
    """A server's group, named by its config key as a tool is by its name (`tool_names`), the key an alias."""
    name = command_name(server.name)
    return Group(name, summary, description, aliases=[server.name] if server.name != name else [])


def build(
    name: str,
    servers: list[Server],
    found: dict[str, discovery.Listing],
    threshold: int | None = THRESHOLD,
    tools: list[str] | None = None,
    exclude_tools: list[str] | None = None,
    failed: dict[str, str] | None = None,
    retried: bool = True,
) -> Tree:
    """The tree for servers whose listings were found, with a `search` command at the root; a server that
    `failed` is an empty group that says why (and whether it is `retried` in the background)."""
    root = Group(name=kebab(name), summary="")
    upstreams: dict[str, dict[str, Any]] = {}
    keys: dict[int, str] = {}  # id(a server's group) -> the server's config key
    for server in servers:
        if server.name in found:
            listing = found[server.name]
            kept = [t for t in listing.get("tools", []) if server.wants(t["name"], tools or [], exclude_tools or [])]
            group = server_group(server, listing, kept, threshold)
            group.children += mcp_extras.extras(server.name, dict(listing), group.children)
            root.children.append(group)
            upstreams[server.name] = server.config
        elif failed and server.name in failed:
            root.children.append(group := unavailable_group(server, failed[server.name], retried))
        else:
            continue
        keys[id(group)] = server.name
    count = sum(1 for _, n in Tree(root).walk() if isinstance(n, Command) and n.handler.tool is not None)
    servers_shown = [g.name for g in root.children]
    root.children.insert(0, search_command(root.name))
    tool_names.distinct(root.children, lambda n: keys.get(id(n)), "server")
    unavailable = f" ({len(failed)} unavailable)" if failed else ""
    answered = len(servers_shown) - len(failed or {})
    root.summary = f"{count} tool{'s' * (count != 1)} from {answered} MCP server{'s' * (answered != 1)}{unavailable}."
    return Tree(root=root, upstreams=upstreams)


async def discover(path: str | Path, **options: Any) -> tuple[Tree, list[str]]:
    """Read a config, list (or recall) every server's tools within the start-up budget, and build the tree.
    Servers that did not answer are shown as unavailable, and the tree can `rediscover` them later."""
    servers, warnings = _servers(path, options)
    refresh, pool = options.get("refresh", False), options.get("pool")
    found, failed = await discovery.listings(servers, refresh, budget=_budget(options), pool=pool)
    return _tree(path, servers, found, failed, warnings, options)


def load(path: str | Path, **options: Any) -> tuple[Tree, list[str]]:
    """`discover` from synchronous code, with progress on a terminal (`progress=True`); it returns while servers
    that ran out of time are still being stopped. For a one-shot command (`one_shot=True`) the default budget is
    the long one and the tree does not ask again later. With a `pool` (`handlers.upstream.Upstreams` in a task group
    of the event loop this runs on a worker thread of), the servers asked are asked in that loop, and the tree's
    runtime calls them through the sessions opened then (`Tree.sessions`)."""
    servers, warnings = _servers(path, options)
    refresh, progress = options.get("refresh", False), options.get("progress", False)
    found, failed = discovery.listings_now(servers, refresh, _budget(options), progress, options.get("pool"))
    return _tree(path, servers, found, failed, warnings, options)


def _budget(options: dict[str, Any]) -> float:
    return float(options.get("startup") or discovery.startup_budget(bool(options.get("one_shot"))))


def _servers(path: str | Path, options: dict[str, Any]) -> tuple[list[Server], list[str]]:
    servers, warnings = read(path, options.get("only"), options.get("skip"))
    if not servers:
        raise SourceError(f"{path}: no usable MCP servers" + (f" ({'; '.join(warnings)})" if warnings else ""))
    return servers, warnings


def _tree(
    path: str | Path,
    servers: list[Server],
    found: dict[str, discovery.Listing],
    failed: dict[str, str],
    warnings: list[str],
    options: dict[str, Any],
) -> tuple[Tree, list[str]]:
    """The tree of what was found; one that failed is shown as unavailable and asked for again later."""
    warnings = warnings + [
        f"server {n!r}: cannot list its tools: {why}; shown as unavailable" for n, why in failed.items()
    ]
    name = options.get("name") or default_name(Path(path), [s.name for s in servers])
    keep = {k: options.get(k) for k in ("tools", "exclude_tools")}
    retried = not options.get("one_shot")
    tree = build(name, servers, found, options.get("threshold") or THRESHOLD, failed=failed, retried=retried, **keep)
    again = {k: v for k, v in options.items() if k not in ("refresh", "progress", "startup")}
    configs = {s.name: s.config for s in servers}

    async def reload(server: str, listing: discovery.Listing) -> Tree:
        """The tree again, with `server`'s tools as its live session lists them now."""
        discovery.remember(configs[server], listing)
        return (await discover(path, **again))[0]

    tree.reload = reload
    tree.sessions = options.get("pool")
    if failed and retried:
        retry = max(discovery.RETRY_BUDGET, _budget(options))

        async def rediscover() -> Tree:
            return (await discover(path, startup=retry, **again))[0]

        tree.rediscover = rediscover
    return tree, warnings


_GENERIC = {"", "mcp", "config", "claude", "claude_desktop_config", "settings", "servers", "mcp_servers"}
_CLIENT_FOLDERS = {".claude", ".codex", ".cursor", ".vscode", ".gemini", ".roo", ".kiro"}


def default_name(path: Path, servers: list[str] | None = None) -> str:
    """The tool's name for a config: a file named by its user names it (`team-tools.json` -> team-tools); a client's
    usual file (.mcp.json, config.toml, ~/.claude.json, ...) is named by what it holds: its one server's name
    (`servers`, else read from the file), or for several the project folder it sits in (`~/code/shop/.mcp.json`,
    `shop/.cursor/mcp.json` -> shop), or when that is the home folder (a user-wide file) its servers' names
    (`github-slack`, `github-slack-linear-and-2-more`): a host that shows the model only the tool's name shows what it
    holds."""
    stem = path.stem.lstrip(".")
    if stem.lower() not in _GENERIC:
        return stem
    if servers is None:
        try:
            servers = [s.name for s in read(path)[0]]
        except SourceError:
            servers = []
    if len(servers) == 1 and kebab(servers[0]):
        return servers[0]
    folder = path.absolute().parent
    if folder.name.lower() in _CLIENT_FOLDERS:
        folder = folder.parent
    return named_by(servers) if folder == Path.home() or not kebab(folder.name) else folder.name


NAMED_WIDTH = 30  # characters of a tool name made of server names


def named_by(servers: list[str]) -> str:
    """A tool name made of server names, as many whole ones as fit NAMED_WIDTH, then `-and-N-more`; `mcp` for none."""
    names = [kebab(s) for s in servers if kebab(s)]
    shown: list[str] = []
    for i, name in enumerate(names):
        more = len(names) - i - 1
        if len("-".join([*shown, name])) + (len(f"-and-{more}-more") if more else 0) > NAMED_WIDTH:
            break
        shown.append(name)
    more = len(names) - len(shown)
    return "-".join(shown) + f"-and-{more}-more" * bool(more and shown) if shown else "mcp"
