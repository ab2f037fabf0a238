"""Server groups at the root, by what their tools do rather than by their config keys.

A server is known by the things its tools act on (`grouping.topics` of its tool names). A config key that says
nothing (`server1`, `mcp`, `tools-prod`: only words like server, mcp, tools, prod, local and digits) gives way to
the server's first thing (`server1` -> `events`, the key kept as an alias). With many servers, the thing shared by
the most of them takes them into one group named after it (`issues`: github, gitlab, jira), greedily, until no
thing is shared (`grouping.cover`); a group's summary names its servers, so an agent can go straight to one.
"""

from __future__ import annotations

import re

from . import grouping
from .text import kebab, words
from .tree import Command, Group, Node, Tree

TOPICS = 4  # things a server is known by
NAMES_WIDTH = 70  # characters of server names in a cluster's summary, at most
_SAY_NOTHING = set("server servers srv mcp tool tools prod production dev staging stage test local remote my our "
                   "the api app main default service new old tmp temp".split())  # fmt: skip


def says_nothing(key: str) -> bool:
    """Whether a config key names nothing a server does: only generic words and digits (`server1`, `my-mcp`)."""
    ws = [re.sub(r"\d+$", "", w) for w in words(key)]
    return all(not w or w in _SAY_NOTHING for w in ws)


def topics(group: Group, k: int = TOPICS) -> list[str]:
    """The things a group's tools act on, most common first, as the tool names spell them."""
    tools = [n.handler.get("tool", n.name) for _, n in Tree(group).walk() if isinstance(n, Command)]
    return grouping.topics(tools, k) or [kebab(t) for t in tools[:k]]  # tools named by a verb alone: their names


def _key(topic: str) -> str:
    return "-".join(grouping.singular(w) for w in topic.split("-"))


def rename(groups: list[Group]) -> None:
    """Name each group whose name says nothing after its first thing not already a name here; its old name
    stays an alias."""
    taken = {g.name for g in groups}
    for g in groups:
        if says_nothing(g.name):
            fresh = next((kebab(t) for t in topics(g, 1) if kebab(t) not in taken), None)
            if fresh:
                g.aliases.append(g.name)
                g.name = fresh
                taken.add(fresh)


def cluster(nodes: list[Node]) -> list[Node]:
    """Groups of servers that act on the same things, each in the place of its first server: first by the thing
    each acts on most, then by any of its things; the rest as they were, summarised by two things."""
    groups = [g for g in nodes if isinstance(g, Group)]
    shown = {g.name: topics(g) for g in groups}
    known = {n: [_key(t) for t in ts] for n, ts in shown.items()}
    found, left = grouping.cover({n: set(ts[:1]) for n, ts in known.items()}, list(known))  # by first things
    for name in list(left):  # then by another thing, into a group of the first pass, or with one another
        noun = next((t for t in known[name] if t in found), None)
        if noun:
            found[noun].append(name)
            left.remove(name)
    found |= grouping.cover({n: set(known[n]) for n in left}, left)[0]
    by_name = {g.name: g for g in groups}
    first = {members[0]: (noun, members) for noun, members in found.items()}
    clustered = {m for members in found.values() for m in members}
    taken = {n.name for n in nodes if n.name not in clustered}
    out: list[Node] = []
    for g in nodes:
        if g.name in first:
            noun, members = first[g.name]
            spelled = [t for m in members for t in shown[m] if _key(t) == noun]
            name = max(spelled, key=lambda t: (spelled.count(t), t.endswith("s"), t))
            name = name if name not in taken else f"{name}-servers"
            taken.add(name)
            group = Group(name=name, description=f"MCP servers whose tools act on {name}.",
                          children=[by_name[m] for m in members])  # fmt: skip
            group.summary = _summary(members, topics(group, 2))
            out.append(group)
        elif g.name not in clustered:
            if shown.get(g.name):  # among many rows, two things say enough
                g.summary = _summary([], shown[g.name][:2])
            out.append(g)
    return out


def _summary(servers: list[str], things: list[str]) -> str:
    """The servers by name when they fit a listing's row (so an agent can go straight to one), else the things
    they act on and how many they are: `github, gitlab.`, `Issues, pull-requests (27 servers).`"""
    names = ", ".join(servers) + "."
    if servers and len(names) <= NAMES_WIDTH:
        return names
    what = ", ".join(things)
    return f"{what[:1].upper()}{what[1:]}" + (f" ({len(servers)} servers)." if servers else ".")
