"""argv -> values for one command, with argparse doing the parsing and never exiting or printing."""

from __future__ import annotations

import argparse
import json
import os
import stat
from typing import Any

from .errors import UsageError, close_to
from .tree import Command, Param


def _integer(text: str) -> int:
    return int(text)


def _number(text: str) -> float:
    return float(text)


def _bool(text: str) -> bool:
    low = text.strip().lower()
    if low in ("true", "yes", "1", "on"):
        return True
    if low in ("false", "no", "0", "off"):
        return False
    raise ValueError(text)


JSON_FILE_LIMIT = 1_000_000  # bytes an `@FILE` argument may hold
JSON_DEPTH = 100  # levels of nesting a JSON argument may have


def json_value(text: str) -> Any:
    """A JSON value given inline, or `@FILE` (see `at_file`). Raises ValueError saying what is wrong."""
    if not text.startswith("@"):
        return loads(text)
    return loads(at_file(text[1:], "JSON").decode("utf-8", errors="replace"))


def at_file(path: str, what: str) -> bytes:
    """The bytes of the file an `@FILE` argument names: a regular file of at most JSON_FILE_LIMIT bytes (never a
    device, FIFO or folder, which could block or flood the server). Raises ValueError saying what is wrong."""
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            raise ValueError(f"@{path} is not a regular file; give a {what} file or the {what} itself")
        if info.st_size > JSON_FILE_LIMIT:
            raise ValueError(f"@{path} holds {info.st_size:,} bytes, more than the {JSON_FILE_LIMIT:,} allowed")
        with open(path, "rb") as f:
            data = f.read(JSON_FILE_LIMIT + 1)
    except OSError as exc:
        raise ValueError(f"cannot read @{path}: {exc.strerror}") from None
    if len(data) > JSON_FILE_LIMIT:
        raise ValueError(f"@{path} holds more than the {JSON_FILE_LIMIT:,} bytes allowed")
    return data


def loads(text: str) -> Any:
    """Parse JSON of at most JSON_DEPTH levels (deeper values cannot reach an MCP server). Raises ValueError."""
    try:
        value = json.loads(text)
    except RecursionError:
        value = None
    else:
        level, depth = [value], 0  # depth: containers within containers
        while depth <= JSON_DEPTH:
            level = [x for x in level if isinstance(x, (dict, list))]
            if not level:
                return value
            depth += 1
            level = [v for x in level for v in (x.values() if isinstance(x, dict) else x)]
    raise ValueError(f"the JSON nests deeper than {JSON_DEPTH} levels; flatten it")


def _json(text: str) -> Any:
    try:
        return json_value(text)
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(f"not valid JSON ({exc.msg} at character {exc.pos}): {text!r}") from None
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


# argparse names the converter in its messages ("invalid integer value: 'x'").
_integer.__name__, _number.__name__, _bool.__name__, _json.__name__ = "integer", "number", "boolean", "JSON"
_CONVERTERS = {"string": str, "path": str, "integer": _integer, "number": _number, "boolean": _bool, "json": _json}


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser that raises UsageError instead of printing and exiting."""

    def error(self, message: str):  # type: ignore[override]
        raise UsageError(message)

    def exit(self, status: int = 0, message: str | None = None):  # type: ignore[override]
        raise UsageError((message or "invalid arguments").strip())

    def _print_message(self, message: str, file: Any = None) -> None:
        return None


def _add(target: Any, p: Param, strict: bool) -> None:
    kw: dict[str, Any] = {"default": argparse.SUPPRESS if p.default is None or not strict else p.default}
    if p.action in ("store", "append"):
        kw["type"] = _CONVERTERS[p.type]
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
    groups = {}
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
            flags = [f for p in cmd.params for f in p.flags]
            raise UsageError(f"unknown option {bad}.", close_to(bad.split("=", 1)[0], flags))
        raise UsageError(f"unexpected argument {bad!r}.")
    return vars(ns)
