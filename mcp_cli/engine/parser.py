"""argv -> values for one command, with argparse doing the parsing and never exiting or printing."""

from __future__ import annotations

import argparse
from typing import Any, NoReturn

from ..errors import UsageError, close_to
from ..text import spellings
from ..tree import Command, Param
from ..types import VALUE_TYPES


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser that raises UsageError instead of printing and exiting."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        raise UsageError((message or "invalid arguments").strip())

    def _print_message(self, message: str, file: object = None) -> None:
        return None

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        """argparse's check of a choice, with the choices closest to a wrong one ("Did you mean `slow`?")."""
        try:
            super()._check_value(action, value)
        except argparse.ArgumentError as exc:
            names = [str(c) for c in action.choices or ()]
            raise UsageError(str(exc), close_to(str(value), names)) from None


def _add(target: argparse._ActionsContainer, p: Param, strict: bool) -> None:
    kw: dict[str, Any] = {"default": argparse.SUPPRESS if p.default is None or not strict else p.default}
    if p.action in ("store", "append"):
        kw["type"] = VALUE_TYPES[p.type].convert
        kw["metavar"] = p.metavar or p.name.upper()
        if p.choices is not None:
            kw["choices"] = p.choices
        if p.nargs is not None:
            kw["nargs"] = argparse.REMAINDER if p.nargs == "..." else p.nargs
        if p.action == "append":
            kw["action"] = "append"
    elif p.action == "negatable":
        kw["action"] = argparse.BooleanOptionalAction
    else:
        kw["action"] = p.action
    if p.positional:
        if p.nargs is None and not p.required:
            kw["nargs"] = "?"
        target.add_argument(p.name, **kw)
    else:
        target.add_argument(*p.flags, dest=p.name, required=p.required and strict, **kw)


def build(prog: str, cmd: Command) -> argparse.ArgumentParser:
    """The argparse parser of a command. Raises ValueError naming a parameter argparse refuses (two with one flag).

    For a schema-backed command, required options and defaults are left to the schema: `--json` may carry them,
    and the upstream applies its own defaults."""
    parser = _Parser(prog=prog, add_help=False, allow_abbrev=False)
    groups: dict[str, argparse._ActionsContainer] = {}
    for ex in cmd.exclusive:
        group = parser.add_mutually_exclusive_group(required=ex.required)
        groups.update({name: group for name in ex.params})
    for p in cmd.params:
        try:
            _add(groups.get(p.name, parser), p, strict=cmd.schema is None)
        except (argparse.ArgumentError, TypeError, ValueError) as exc:  # two `--x`, an exclusive positional, ...
            raise ValueError(f"parameter {p.name!r}: {exc}") from None
    return parser


def parse(parser: argparse.ArgumentParser, cmd: Command, tokens: list[str]) -> dict[str, Any]:
    """Parse tokens into {param name: value}; options not given and without a default are absent."""
    ns, extra = parser.parse_known_args(tokens)
    if extra:
        bad = extra[0]
        if bad.startswith("-") and bad != "-":
            flags = [f for p in cmd.params for f in spellings(p.flags)]
            raise UsageError(f"unknown option {bad}.", close_to(bad.split("=", 1)[0], flags))
        raise UsageError(f"unexpected argument {bad!r}.")
    return vars(ns)
