"""Server groups at the root, by what their tools do rather than by their config keys.

A server is known by the things its tools act on (`grouping.profile` of its tool names), each weighted by how many
tools act on it. With many servers, the two parts most alike merge, again and again, while they are at least SIMILAR
alike (the cosine of their weighted things, summed over a part's servers): servers whose tools mostly act on the
same things (github, gitlab, jira) share a group named after the thing most of them act on most (`issues`), or after
the words their config keys start with when none is called so (`aws-prod`, `aws-dev` -> aws); a group's summary
names its servers, so an agent can go straight to one. A config key that says nothing (`server1`, `mcp`,
`tools-prod`: only words like server, mcp, tools, prod, local and digits) gives way to the word its tools' names
start with (`postgres_list_tables` -> postgres), else to its first thing that names neither its group nor a
neighbour (`server1` -> `events`), the key kept as an alias. Among so many rows, a lone server's says at most a
word: the thing it is mostly about, or a small server's commands.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from heapq import heapify, heappop, heappush
from itertools import count

from ..search.lexicon import NAME_VERBS
from ..text import kebab, words
from ..tree import Command, Group, Node, Tree
from . import grouping, summaries

TOPICS = 4  # things a server is known by
SMALL = 2  # tools of a server whose summary names its commands (about what naming its things costs)
SIMILAR = 0.6  # how alike (cosine of weighted things) two parts must be to merge
ROWS = 30  # parts at most, while parts at least LOOSE alike remain: a root row costs tokens, summarised or not
LOOSE = 0.1
NAMES_WIDTH = 50  # characters of server names in a cluster's summary, at most
_SAY_NOTHING = set("server servers srv mcp tool tools prod production dev staging stage test local remote my our "
                   "the api app main default service new old tmp temp".split())  # fmt: skip


def says_nothing(key: str) -> bool:
    """Whether a config key names nothing a server does: only generic words and digits (`server1`, `my-mcp`)."""
    ws = [re.sub(r"\d+$", "", w) for w in words(key)]
    return all(not w or w in _SAY_NOTHING for w in ws)


def _tools(group: Group) -> list[str]:
    walked = Tree(group).walk()  # the tools: not the commands that list or read its resources and prompts (`op`)
    return [n.handler.get("tool", n.name) for _, n in walked if isinstance(n, Command) and "op" not in n.handler]


def _known(group: Group) -> tuple[Counter[str], dict[str, str]]:
    """The things a group's tools act on, weighted, and their spellings (`grouping.profile`); tools named by a verb
    alone (`search`) are known by their names."""
    tools = _tools(group)
    counts, spelled = grouping.profile(tools)
    if counts:
        return counts, spelled
    return Counter(_key(kebab(t)) for t in tools), {_key(kebab(t)): kebab(t) for t in tools}


def topics(group: Group, k: int = TOPICS) -> list[str]:
    """The things a group's tools act on, most common first, as the tool names spell them."""
    counts, spelled = _known(group)
    return [spelled[noun] for noun, _ in counts.most_common(k)]


def _key(name: str) -> str:
    return "-".join(grouping.singular(w) for w in name.split("-"))


def _names(group: Group) -> list[str]:
    """What a group could be called, best first: the word all its tools' names start with, when it is no verb and
    says something (`postgres_list_tables` -> postgres), then its things."""
    tools = _tools(group)
    prefix = grouping.shared_prefix(tools).rstrip("-")
    own = [prefix] if prefix and prefix not in NAME_VERBS and not says_nothing(prefix) else []
    return own + [kebab(t) for t in topics(group)]


def rename(groups: list[Group], avoid: Iterable[str] = ()) -> None:
    """Name each group whose name says nothing after the first of its `_names` that is not already a name here nor
    one to `avoid` (its cluster's, or the clusters beside it); its old name stays an alias."""
    taken = {_key(n) for n in [*avoid, *(g.name for g in groups)]}
    for g in groups:
        if says_nothing(g.name):
            fresh = next((n for n in _names(g) if _key(n) not in taken), None)
            if fresh:
                g.aliases.append(g.name)
                g.name = fresh
                taken.add(_key(fresh))


def _parts(profiles: list[Counter[str]]) -> list[list[int]]:
    """The servers (by index) in parts: the two parts most alike merge while they are at least SIMILAR alike, or
    LOOSE alike while there are more than ROWS parts. Only parts that share a thing are compared (through an index
    of who acts on what), so 10,000 tools cluster fast."""
    parts = {i: ([i], p, sum(v * v for v in p.values())) for i, p in enumerate(profiles)}
    acting: dict[str, set[int]] = {}  # a thing -> the parts whose tools act on it
    for i, p in enumerate(profiles):
        for thing in p:
            acting.setdefault(thing, set()).add(i)

    def alike(key: int) -> Iterator[tuple[float, int]]:
        """(cosine, part) for each other part as alike as LOOSE at least."""
        _, counts, square = parts[key]
        dots: Counter[int] = Counter()
        for thing, v in counts.items():
            for other in acting[thing]:
                if other != key:
                    dots[other] += v * parts[other][1][thing]
        for other, dot in dots.items():
            if (s := dot / math.sqrt(square * parts[other][2])) >= LOOSE:
                yield s, other

    heap = [(-s, i, j) for i in parts for s, j in alike(i) if i < j]
    heapify(heap)
    fresh = count(len(profiles))  # a merged part's key, never one used before
    while heap and (-heap[0][0] >= SIMILAR or len(parts) > ROWS):
        _, i, j = heappop(heap)
        if i in parts and j in parts:
            new, merged = next(fresh), parts[i][1] + parts[j][1]
            for key in (i, j):
                for thing in parts[key][1]:
                    acting[thing].discard(key)
            (a, _, _), (b, _, _) = parts.pop(i), parts.pop(j)
            parts[new] = (sorted(a + b), merged, sum(v * v for v in merged.values()))
            for s, k in alike(new):
                heappush(heap, (-s, k, new))
            for thing in merged:
                acting[thing].add(new)
    return sorted((members for members, _, _ in parts.values()), key=lambda m: m[0])


def cluster(nodes: list[Node]) -> list[Node]:
    """Groups of servers whose tools act on the same things, each in the place of its first server; the rest as
    they were, each summarised by a word at most (`_row`)."""
    groups = [g for g in nodes if isinstance(g, Group)]
    profiles = [_known(g) for g in groups]
    parts = {m[0]: m for m in _parts([counts for counts, _ in profiles]) if len(m) > 1}
    clustered = {id(groups[i]) for m in parts.values() for i in m}
    lone = [g for g in groups if id(g) not in clustered]
    taken = {_key(n.name) for n in nodes if id(n) not in clustered}
    made: dict[int, Group] = {}
    for first, part in parts.items():
        members = [groups[i] for i in part]
        name, things = _named([profiles[i] for i in part])
        stem = _stem([m.name for m in members])
        name = stem if stem and _key(stem) not in taken | {_key(m.name) for m in members} else name
        name = name if _key(name) not in taken else f"{name}-servers"
        taken.add(_key(name))
        rename(members, [name])
        made[id(groups[first])] = Group(
            name=name,
            description=f"MCP servers whose tools act on {name}.",
            summary=_summary([m.name for m in members], things),
            children=[*members],  # a list of nodes
        )
    rename(lone, [g.name for g in made.values()])
    for g in lone:
        g.summary = _row(g)
    return [made.get(id(n), n) for n in nodes if id(n) not in clustered or id(n) in made]


def _stem(keys: list[str]) -> str:
    """The words all config keys start with, when they say something (`github-work`, `github-personal` -> github;
    `aws`, `aws-2` -> aws), or ''."""
    firsts = [[w for w in words(k) if not w.isdigit()] for k in keys]
    stem = []
    for column in zip(*firsts, strict=False):
        if len(set(column)) > 1:
            break
        stem.append(column[0])
    name = "-".join(stem)
    return name if stem and stem[0] not in NAME_VERBS and not says_nothing(name) else ""


def _named(profiles: list[tuple[Counter[str], dict[str, str]]]) -> tuple[str, list[str]]:
    """A cluster's name, the thing most of its servers act on most, and its two main other things, spelled as its
    servers' tools spell them (plural if any does)."""
    total = sum((counts for counts, _ in profiles), Counter())

    def spelled(noun: str) -> str:
        forms = [spelling[noun] for _, spelling in profiles if noun in spelling]
        return max(forms, key=lambda t: (t.endswith("s"), forms.count(t), t))

    noun = max(total, key=lambda t: (sum(t in counts for counts, _ in profiles), total[t]))
    return spelled(noun), [spelled(t) for t, _ in total.most_common(3) if t != noun][:2] or [spelled(noun)]


def _row(group: Group) -> str:
    """A lone server's summary among many rows, in a few words: its own words (`summaries.of_server`), cut short;
    a small one's commands as they are, when they say something; else the things its tools act on beyond what its
    name says, or their verbs on its one thing (`summaries.of_tools`); else its summary cut short; else its first
    commands by name."""
    if group.description and group.description == group.summary:
        return summaries.gist(group.summary)
    if len(_tools(group)) <= SMALL and summaries.says_something(group.summary, group.name):
        return group.summary
    for line in (summaries.of_tools(_tools(group), group.name), summaries.gist(group.summary)):
        if summaries.says_something(line, group.name):
            return line
    commands = [n.name for _, n in Tree(group).walk() if isinstance(n, Command)]
    return ", ".join(commands[:3]) + (", ..." if len(commands) > 3 else ".")


def _summary(servers: list[str], things: list[str]) -> str:
    """The servers by name when they fit a listing's row (so an agent can go straight to one), else the things
    they act on and how many they are: `github, gitlab.`, `Issues, pull-requests (27 servers).`"""
    names = ", ".join(servers) + "."
    if servers and len(names) <= NAMES_WIDTH:
        return names
    what = ", ".join(things)
    return f"{what[:1].upper()}{what[1:]}" + (f" ({len(servers)} servers)." if servers else ".")
