"""Options of a parent command (an argparse parser with subparsers, a click group) on each command below it.

A program reads a parent's options only in front of the subcommand word (`tool --config x list`). Each command
below takes them anywhere (`tool list --config x`), and its handler's `before` moves them back in front of their
word (see `handlers.subprocess`). Only options with a fixed number of values can be moved.
"""

from __future__ import annotations

from ...refs import SubprocessRef
from ...tree import Command, Exclusive, Param


def movable(p: Param) -> bool:
    return bool(p.flags) and arity(p) is not None


def arity(p: Param) -> int | None:
    """How many values follow an option's flag: 0 for a switch, a count for a fixed nargs, None when it varies."""
    if not p.takes_value:
        return 0
    if p.nargs is None:
        return 1
    return p.nargs if isinstance(p.nargs, int) else None


def _spellings(p: Param) -> list[str]:
    """The flags an option may be written with: its own, and `--no-X` for a negatable `--X`."""
    return p.flags + [f"--no-{f[2:]}" for f in p.flags if p.action == "negatable" and f.startswith("--")]


def inherit(cmd: Command, above: list[list[Param]], exclusive: list[Exclusive]) -> None:
    """Give `cmd` the movable options of the parents in front of each of its subcommand words (`above`, one list
    per word, outermost first), before its own; a deeper option shadows an upper one with the same flag.
    `exclusive`: the parents' mutually exclusive groups, kept when all their members are inherited."""
    taken = {f for q in cmd.params for f in q.flags}
    levels: list[list[Param]] = []
    for options in reversed(above):
        level = [q for q in options if movable(q) and not taken & set(q.flags)]
        taken.update(f for q in level for f in q.flags)
        levels.insert(0, level)
    if not any(levels) or not isinstance(cmd.handler, SubprocessRef):
        return
    cmd.handler.before = [{f: arity(q) for q in level for f in _spellings(q)} for level in levels]
    inherited = [q for level in levels for q in level]
    names = {q.name for q in inherited}
    cmd.params = inherited + cmd.params
    cmd.exclusive = [e for e in exclusive if e.params and names.issuperset(e.params)] + cmd.exclusive
