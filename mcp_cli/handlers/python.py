"""Python callables run in-process: sync ones in a worker thread, async ones on the loop; both under a timeout.

A sync callable that hangs cannot be killed; it is abandoned, and the process exits without waiting for it
(`processes.exit_process`).

What the callable prints is captured into the result (stdout is the protocol's on stdio, never the handler's).
"""

from __future__ import annotations

import contextvars
import functools
import importlib
import inspect
import io
import json
import sys
from collections.abc import Callable
from typing import Any, TextIO

import anyio
import anyio.to_thread

from ..errors import CallError, HandlerError, HandlerTimeout
from ..refs import PythonRef
from ..result import Result, wire_text
from ..tree import Tree
from ..types import loads
from .base import Call, timeout_of

_capture: contextvars.ContextVar[io.StringIO | None] = contextvars.ContextVar("mcp_cli_capture", default=None)


class _Stdout(io.TextIOBase):
    """sys.stdout stand-in: writes go to the current call's buffer, or to the real stream outside calls."""

    def __init__(self, real: TextIO) -> None:
        self.real = real

    def write(self, text: str) -> int:
        buf = _capture.get()
        return buf.write(text) if buf is not None else self.real.write(text)

    def flush(self) -> None:
        if _capture.get() is None:
            self.real.flush()


def load(target: str, tree: Tree) -> Any:
    """Import `module:attribute` (dotted attributes allowed), with the tree's folder importable."""
    module_name, _, attr = target.partition(":")
    if tree.base_dir is not None and str(tree.base_dir) not in sys.path:
        sys.path.insert(0, str(tree.base_dir))
    obj: Any = importlib.import_module(module_name)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def ref(func: Callable[..., object], timeout: float | None = None) -> PythonRef:
    """A handler reference for a module-level callable: `Command(..., handler=ref(my_func))`."""
    return PythonRef(target=f"{func.__module__}:{func.__qualname__}", timeout=timeout)


def deep_json(value: object) -> str:
    """`value` as compact JSON, however deep, written with a stack rather than recursion (json.dumps stops at
    Python's recursion limit); what JSON cannot hold is written as its `str`."""
    out: list[str] = []
    stack: list[object] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, _Raw):
            out.append(item)
        elif isinstance(item, dict):
            out.append("{")
            stack.append(_Raw("}"))
            for i, (key, member) in reversed(list(enumerate(item.items()))):
                stack += [member, _Raw(("," if i else "") + json.dumps(str(key), ensure_ascii=False) + ":")]
        elif isinstance(item, (list, tuple)):
            out.append("[")
            stack.append(_Raw("]"))
            for i, member in reversed(list(enumerate(item))):
                stack += [member] + ([_Raw(",")] if i else [])
        else:
            try:
                out.append(json.dumps(item, ensure_ascii=False))
            except (TypeError, ValueError):
                out.append(json.dumps(str(item), ensure_ascii=False))
    return "".join(out)


class _Raw(str):
    """Text `deep_json` writes as it is (brackets, commas, keys)."""


def _to_result(value: object, printed: str) -> Result:
    """The handler's value as a Result. Lone surrogates (undecodable file names) become U+FFFD; data nested
    deeper than JSON arguments may be is left as text only, as the wire could not carry it."""
    if isinstance(value, Result):
        value.output = wire_text(printed + value.output)
        return value
    if value is None or isinstance(value, str):
        return Result(ok=True, output=wire_text(printed + (value or "")))
    try:
        text = wire_text(json.dumps(value, indent=1, ensure_ascii=False, default=str))
    except RecursionError:  # nested deeper than the encoder goes: written without recursion, as compact JSON
        return Result(ok=True, output=wire_text(printed + deep_json(value)))
    except (TypeError, ValueError):  # keys JSON cannot have, or a cycle: its repr
        return Result(ok=True, output=wire_text(printed + repr(value)))
    try:
        data = loads(text)
    except ValueError:
        data = None
    return Result(ok=True, output=wire_text(printed) + text, data=data)


class PythonHandler:
    def __init__(self, ref: PythonRef, tree: Tree) -> None:
        self.target = ref.target
        self.timeout = timeout_of(ref, tree)
        self.tree = tree
        self._func: Any = None

    def _callable(self) -> Any:
        if self._func is None:
            try:
                self._func = load(self.target, self.tree)
            except Exception as exc:
                raise HandlerError(f"cannot load handler {self.target}: {type(exc).__name__}: {exc}") from None
        return self._func

    async def run(self, call: Call) -> Result:
        func = self._callable()
        if not isinstance(sys.stdout, _Stdout):
            sys.stdout = _Stdout(sys.stdout)
        buf = io.StringIO()
        token = _capture.set(buf)
        try:
            with anyio.move_on_after(self.timeout) as scope:
                if inspect.iscoroutinefunction(func):
                    value = await func(**call.values)
                else:
                    bound = functools.partial(func, **call.values)
                    value = await anyio.to_thread.run_sync(bound, abandon_on_cancel=True)
        except CallError:
            raise
        except Exception as exc:
            raise HandlerError(f"`{call.path}` failed: {type(exc).__name__}: {exc}") from None
        finally:
            _capture.reset(token)
        if scope.cancelled_caught:
            raise HandlerTimeout(
                f"`{call.path}` did not finish within {self.timeout:g} s and was abandoned. "
                "Try a smaller input, or raise the timeout in the tree's settings."
            )
        return _to_result(value, buf.getvalue())
