"""Command names for upstream tools and the domains of their servers: readable, and distinct among a group's
children, so every tool of every server has an argv.

A tool's command is its name as `text.command_name` spells it (`getUser` -> `get-user`, `créer_problème` ->
`creer-probleme`, `获取用户` as it is), its own name kept as an alias; a server's domain is its config key spelled
the same way (`team_memory` -> `team-memory`), and skill scripts are named by the same function. When siblings share
that name (tools `getUser`, `get-user`, `get_user`; servers `team_memory`, `team-memory`, `TeamMemory`), the one whose
own name it is keeps it and the others go by their own names (`getUser`, `get_user`; `team_memory`, `TeamMemory`), as
does one named like a sibling of another kind (a subgroup, the root's `search`), with `-2` when that is its own
name too; a name that is no argv token (a space or quote in it, a leading `-`) gets a suffix made from its own
name instead (`get-user-3fa2`). Its own name stays an alias (a name wins over an alias, so it never shadows a
sibling). Whatever the order, each gets the same name, and its help says which are named alike.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from collections.abc import Callable

from ..tree import Command, Node, Topic

_NOT_A_TOKEN = re.compile(r"[\s'\"\\|]|^-|^$")  # what `command` would split or quote, a flag, a pipe
Own = Callable[[Node], "str | None"]  # a node's own name (a tool's, a server's key); None: not renamed here


def is_token(name: str) -> bool:
    """Whether `name` can be typed as one argv token as it is, in `argv` and in a shell-like `command` alike."""
    return not _NOT_A_TOKEN.search(name) and name.isprintable()


def tool(node: Node) -> str | None:
    """An upstream tool's own name (None for any other node)."""
    return node.handler.tool if isinstance(node, Command) else None


def collisions(children: list[Node], own: Own = tool) -> dict[str, list[Node]]:
    """Children with an `own` name that share a command name, or whose name another kind of sibling has:
    {that name: those children}."""
    by_name: dict[str, list[Node]] = defaultdict(list)
    for node in children:
        if own(node) is not None:
            by_name[node.name].append(node)
    held = {n.name for n in children if own(n) is None}
    return {name: nodes for name, nodes in by_name.items() if len(nodes) > 1 or name in held}


def distinct(children: list[Node], own: Own = tool, what: str = "tool") -> None:
    """Rename, in place, children of one group that share a name (see the module's docstring); their help's note
    says `what` they are (`tool`, `server`)."""
    clashes = collisions(children, own)
    taken = {n.name for n in children if own(n) is None or n.name not in clashes}
    for shared, nodes in sorted(clashes.items()):
        owner = next((n for n in nodes if own(n) == shared and shared not in taken), None)
        taken |= {shared} if owner else set()
        for node in sorted(nodes, key=lambda n: str(own(n))):
            if node is owner:
                continue
            name = str(own(node))
            wanted = name if is_token(name) else f"{shared}-{hashlib.sha256(name.encode()).hexdigest()[:4]}"
            fresh, n = wanted, 1
            while fresh in taken:
                n += 1
                fresh = f"{wanted}-{n}"
            node.name = fresh
            taken.add(fresh)
        for node in nodes:
            assert not isinstance(node, Topic)  # only tools and groups have an own name
            kept = dict.fromkeys([*node.aliases, str(own(node))])
            node.aliases = [a for a in kept if a != node.name and (a == own(node) or a not in taken)]
            others = [_called(n, own) for n in sorted(nodes, key=lambda n: str(own(n))) if n is not node]
            holder = next((n for n in children if n.name == shared and own(n) is None), None)
            said = (
                f"{what.capitalize()}s with the same kebab-case name: {', '.join(others)}"
                if others
                else f"`{shared}` is a {holder.kind if holder else 'name'} here"
            )
            note = f"{said}; this is the {what} `{own(node)}`."
            node.description = f"{node.description}\n\n{note}" if node.description else note


def _called(node: Node, own: Own) -> str:
    """`getUser`, or `get user` (called `get-user-3fa2`) when the node is not named as its own name is."""
    name = own(node)
    return f"`{name}`" + ("" if node.name == name else f" (called `{node.name}`)")
