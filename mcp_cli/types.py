"""Parameter value types, one row each (how argv text becomes a value, its help placeholder, its JSON Schema
type), and JSON values given in argv: inline or `@FILE`, bounded in size and depth."""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import stat
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, NoReturn, TypeVar

from .errors import UsageError

DIGITS = 4_300  # digits a number written as text may have (Python reads no longer integer from text)
_WHOLE = re.compile(r"[+-]?[0-9]+(?:_[0-9]+)*")
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def whole(text: str, example: int = 12) -> int:
    """`text` as a whole number: the digits 0-9, a sign before them and `_` between them allowed (`-3`, `+7`,
    `1_000`), at most DIGITS of them. Every integer read from a caller's argv comes through here (typed options,
    `--budget`, `--more`, `head N`). ValueError saying what to give instead (`example`: a number that fits)."""
    value = text.strip()
    if not _WHOLE.fullmatch(value):
        raise ValueError(_instead(value, f"a whole number in the digits 0-9, e.g. {example}"))
    digits = sum(c.isdigit() for c in value)
    try:
        if digits <= DIGITS:
            return int(value)
    except ValueError:  # this Python reads fewer (PYTHONINTMAXSTRDIGITS)
        pass
    raise ValueError(f"it has {digits:,} digits, more than the {DIGITS:,} a number may have; give a smaller one")


def number(text: str) -> int | float:
    """`text` as a JSON number: a whole number as `whole` reads it, else a decimal in the digits 0-9 (`1.5`, `.5`,
    `1e3`, `-2.5E-3`) that is finite (`nan`, `inf` and `1e400` are not: JSON would carry them as null); a whole
    float as an int (`1e3` -> 1000). ValueError saying what to give instead."""
    value = text.strip()
    if _WHOLE.fullmatch(value):
        return whole(value)
    if not _DECIMAL.fullmatch(value):
        raise ValueError(_instead(value, "a number in the digits 0-9, with a `.` or an exponent if need be (2.5, 1e3)"))
    if len(value) > DIGITS:
        raise ValueError(
            f"it has {len(value):,} characters, more than the {DIGITS:,} a number may have; give a shorter one"
        )
    return integral(_finite(value))


def _instead(value: str, give: str) -> str:
    """What to give instead of `value`, which is not a number in the digits 0-9: the same number in them when it
    is one in another script's digits (`١٢` -> 12), else `give`."""
    try:
        same = int(value) if len(value) <= DIGITS else None  # Python reads every script's decimal digits
    except ValueError:
        same = None
    return f"write it in the digits 0-9: {same}" if same is not None else f"give {give}"


def whole_option(text: str, takes: str, least: int = 0, example: int = 12) -> int:
    """`text` read by `whole` for one of the runtime's own options (`--budget N`, `head N`): UsageError `{takes}, not
    {text!r}` saying what to give when it is not a whole number of at least `least`."""
    try:
        value = whole(text, example)
    except ValueError as exc:
        raise UsageError(f"{takes}, not {shown(text)}; {exc}.") from None
    if value < least:
        raise UsageError(f"{takes}, not {shown(text)}.")
    return value


def shown(text: str, limit: int = 24) -> str:
    """`text` quoted as a message names it, its start only when it is long."""
    return repr(text) if len(text) <= limit else f"{text[:limit]!r}... ({len(text):,} characters)"


def _integer(text: str) -> int:
    try:
        return whole(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"invalid integer value: {shown(text)}; {exc}") from None


def _number(text: str) -> int | float:
    """`100` -> 100, `1e3` -> 1000, `1.5` -> 1.5."""
    try:
        return number(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"invalid number value: {shown(text)}; {exc}") from None


def _finite(text: str) -> float:
    """A float that JSON can carry (`nan`, `inf` and `1e400` cannot: they would arrive as null)."""
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{shown(text)} is too large a number; give a finite one")
    return value


def _json_int(text: str) -> int:
    """An integer of a JSON value (digits the parser found): at most DIGITS of them."""
    try:
        return whole(text)
    except ValueError as exc:
        raise ValueError(f"a number in the JSON: {exc}") from None


def _no_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not a JSON number")


_V = TypeVar("_V")


def integral(value: _V) -> _V | int:
    """An integral float as an int (`100.0` -> 100): a `number` that is whole is sent as an integer, which every
    reader accepts (an upstream that checks for an integer refuses 100.0); anything else as it is."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


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


# Whether `@FILE` names a file of this machine: a call's surface decides (stdio and `mcp-cli run`: yes; HTTP and
# OpenAPI, whose callers' files are not this machine's: no), and the runtime sets it from the call's invocation.
LOCAL_FILES: ContextVar[bool] = ContextVar("mcp_cli_local_files", default=False)


def at_file(path: str, what: str) -> bytes:
    """The bytes of the file an `@FILE` argument names: a regular file of at most JSON_FILE_LIMIT bytes (never a
    device, FIFO or folder, which could block or flood the server). Raises ValueError saying what is wrong."""
    if not LOCAL_FILES.get():
        raise ValueError(
            f"@{path}: files are read only for callers on this machine (stdio, `mcp-cli run`), not over "
            f"HTTP (they would be the server's); give the {what} itself"
        )
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
        value = json.loads(text, parse_float=_finite, parse_int=_json_int, parse_constant=_no_constant)
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


@dataclass(frozen=True)
class ValueType:
    """A parameter's value type: how argv text becomes the value, its placeholder in help, its JSON Schema type
    ("" for any JSON value)."""

    name: str
    convert: Callable[[str], Any]
    metavar: str
    json: str


VALUE_TYPES = {
    t.name: t
    for t in (
        ValueType("string", str, "TEXT", "string"),
        ValueType("path", str, "PATH", "string"),
        ValueType("integer", _integer, "INT", "integer"),
        ValueType("number", _number, "NUM", "number"),
        ValueType("boolean", _bool, "BOOL", "boolean"),
        ValueType("json", _json, "JSON", ""),
    )
}
TYPES = tuple(VALUE_TYPES)


def of_schema(kind: object) -> ValueType:
    """The value type that carries a JSON Schema type (objects and arrays as JSON; anything unknown as text)."""
    return next(
        (t for t in VALUE_TYPES.values() if t.json == kind and t.name != "path"),
        VALUE_TYPES["json" if kind in ("object", "array") else "string"],
    )
