"""Parameter value types, one row each (how argv text becomes a value, its help placeholder, its JSON Schema
type), and JSON values given in argv: inline or `@FILE`, bounded in size and depth."""

from __future__ import annotations

import argparse
import json
import math
import os
import stat
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, NoReturn, TypeVar


def _integer(text: str) -> int:
    return int(text)


def _number(text: str) -> int | float:
    """`100` -> 100, `1e3` -> 1000, `1.5` -> 1.5."""
    try:
        return int(text)
    except ValueError:
        return integral(_finite(text))


def _finite(text: str) -> float:
    """A float that JSON can carry (`nan`, `inf` and `1e400` cannot: they would arrive as null)."""
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text!r} is not a finite number")
    return value


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
        raise ValueError(f"@{path}: files are read only for callers on this machine (stdio, `mcp-cli run`), not over "
                         f"HTTP (they would be the server's); give the {what} itself")  # fmt: skip
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
        value = json.loads(text, parse_float=_finite, parse_constant=_no_constant)
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


VALUE_TYPES = {t.name: t for t in (
    ValueType("string", str, "TEXT", "string"),
    ValueType("path", str, "PATH", "string"),
    ValueType("integer", _integer, "INT", "integer"),
    ValueType("number", _number, "NUM", "number"),
    ValueType("boolean", _bool, "BOOL", "boolean"),
    ValueType("json", _json, "JSON", ""),
)}  # fmt: skip
TYPES = tuple(VALUE_TYPES)


def of_schema(kind: object) -> ValueType:
    """The value type that carries a JSON Schema type (objects and arrays as JSON; anything unknown as text)."""
    return next((t for t in VALUE_TYPES.values() if t.json == kind and t.name != "path"),
                VALUE_TYPES["json" if kind in ("object", "array") else "string"])  # fmt: skip
