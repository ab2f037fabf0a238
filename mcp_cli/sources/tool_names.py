"""Command names for upstream tools: readable, and distinct among a group's children, so every tool has an argv.

A tool's command is its name in kebab-case (`text.command_name`: `getUser` -> `get-user`, `créer_problème` ->
`creer-probleme`, `获取用户` as it is), its own name kept as an alias. When tools of one group share a kebab-case
name (`getUser`, `get-user`, `get_user`), the one whose own name it is keeps it and the others go by their own
names (`getUser`, `get_user`), as does a tool named like a subgroup (with `-2` when that is its own name too); a
name that is no argv token (a space or quote in it, a leading `-`) gets a suffix made from its own name instead
(`get-user-3fa2`). Whatever the tools' order, each gets the same name, and its help says which tools are named
alike.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict

from ..tree import Command, Node

_NOT_A_TOKEN = re.compile(r"[\s'\"\\|]|^-|^$")  # what `command` would split or quote, a flag, a pipe


def is_token(name: str) -> bool:
    """Whether `name` can be typed as one argv token as it is, in `argv` and in a shell-like `command` alike."""
    return not _NOT_A_TOKEN.search(name) and name.isprintable()


def _upstream(node: Node) -> bool:
    return isinstance(node, Command) and node.handler.get("kind") == "mcp"


def collisions(children: list[Node]) -> dict[str, list[Command]]:
    """Upstream tools of a group that share a command name once kebab-cased, or whose name a subgroup has:
    {that name: their commands}."""
    by_name: dict[str, list[Command]] = defaultdict(list)
    for node in children:
        if isinstance(node, Command) and _upstream(node):
            by_name[node.name].append(node)
    held = {n.name for n in children if not _upstream(n)}
    return {name: cmds for name, cmds in by_name.items() if len(cmds) > 1 or name in held}


def distinct(children: list[Node]) -> None:
    """Rename, in place, upstream commands of one group that share a name (see the module's docstring)."""
    clashes = collisions(children)
    taken = {n.name for n in children if not _upstream(n) or n.name not in clashes}
    for shared, commands in sorted(clashes.items()):
        owner = next((c for c in commands if c.handler["tool"] == shared and shared not in taken), None)
        taken |= {shared} if owner else set()
        for cmd in sorted(commands, key=lambda c: str(c.handler["tool"])):
            if cmd is owner:
                continue
            tool = str(cmd.handler["tool"])
            wanted = tool if is_token(tool) else f"{shared}-{hashlib.sha256(tool.encode()).hexdigest()[:4]}"
            name, n = wanted, 1
            while name in taken:
                n += 1
                name = f"{wanted}-{n}"
            cmd.name = name
            taken.add(name)
        for cmd in commands:
            cmd.aliases = [a for a in cmd.aliases if a != cmd.name and a not in taken]
            others = [_called(c) for c in commands if c is not cmd]
            note = (
                f"Tools with the same kebab-case name: {', '.join(others)}; this is the tool `{cmd.handler['tool']}`."
                if others
                else f"`{shared}` is a group here; this is the tool `{cmd.handler['tool']}`."
            )
            cmd.description = f"{cmd.description}\n\n{note}" if cmd.description else note


def _called(cmd: Command) -> str:
    """`getUser`, or `get user` (command `get-user-3fa2`) when the command is not named as the tool is."""
    tool = cmd.handler["tool"]
    return f"`{tool}`" + ("" if cmd.name == tool else f" (command `{cmd.name}`)")
