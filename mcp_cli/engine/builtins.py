"""The data built-ins of a pipeline: `jq FILTER`, `head N`, `tail N` and `save FILE` (`each` runs commands, so it
lives with the pipeline). Each is made from its stage's words (a UsageError when they are wrong, before anything
runs) and turns the previous stage's output (a `Flow`) into its own."""

from __future__ import annotations

import functools
import json
import os
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import HandlerError, UsageError
from ..handlers.base import in_thread
from ..text import clip
from ..types import whole_option
from .jq_pool import POOL, JqError

USAGE = {
    "jq": "jq [-r] FILTER: the jq language over JSON (-r: strings as raw text)",
    "head": "head [N]: the first N (10) items of a JSON array, else lines",
    "tail": "tail [N]: the last N (10) items of a JSON array, else lines",
    "each": "each COMMAND ...: the command once per item of a JSON array; {} is the item, {.field} a field of it",
    "save": "save FILE: the whole output to FILE in the caller's folder; answers with its size, shape, first items",
}
# What `BUILTIN --help` says: what it does, what it answers, an example (`{tool}` is the tool's name).
HELP = {
    "jq": "The jq language over the JSON the stage before gives (the jq library, in a process that sees nothing "
    "but its input). Several outputs come one per line (and as an array for the next stage); -r prints "
    "strings raw.\n\n"
    "Examples:\n  {tool} CMD | jq '.items[] | {{id, name}}'\n  {tool} CMD | jq -r '.[].name' | head 5",
    "head": "The first N items (10 without N) of the JSON array the stage before gives; of its lines, for text.\n\n"
    "Example:\n  {tool} CMD | head 3",
    "tail": "The last N items (10 without N) of the JSON array the stage before gives; of its lines, for text.\n\n"
    "Example:\n  {tool} CMD | tail 3",
    "each": "Runs COMMAND once per item of the JSON array the stage before gives (at most 100 items, 4 at a time). In "
    "its words `{{}}` is the item (a string as it is, anything else as JSON) and `{{.field}}` or `{{.a.b}}` a "
    'field of it. Answers a JSON array of {{"item", "ok", "output"}} (or "error") in the items\' '
    "order: one item failing does not stop the others.\n\n"
    "Example:\n  {tool} CMD | jq '[.[] | {{id, title}}]' | each DOMAIN COMMAND --id {{.id}} "
    "--title {{.title}}\n\n"
    "To run several different commands in one call, join them with `;` (each runs) or `&&` (each runs only "
    "if those before succeeded): {tool} A ... ; B ... ; C ...",
    "save": "Writes the whole output of the stage before to FILE in the caller's folder (stdio and `mcp-cli run` "
    "only) and answers with its size, its shape and its first items.\n\nExample:\n  {tool} CMD | save out.json",
}
SEQUENCES = "`A ; B` runs A, then B; `A && B` runs B only if A succeeded; each answers under its own header."


def help_of(name: str, tool: str) -> str:
    """The help of the built-in `name`, its examples written with the tool's name."""
    return f"Usage: CMD | {USAGE[name]}\n\n{HELP[name].format(tool=tool)}\n"


_NOT_JSON = object()
_DECODER = json.JSONDecoder()


def _skip(text: str, at: int, chars: str = " \t\r\n") -> int:
    """Where the run of `chars` from `at` ends."""
    while at < len(text) and text[at] in chars:
        at += 1
    return at


FIRST = 3  # items a summary shows


class Flow:
    """What a stage gives the next: JSON (a value) or text, each made from the other when first asked for (a
    stage's JSON output stays text until a stage needs its value)."""

    def __init__(self, text: str | None = None, value: Any = _NOT_JSON, parsed: bool = False) -> None:
        self._text, self._value, self._parsed = text, value, parsed or value is not _NOT_JSON
        self.written = text is None  # its text is its value's JSON (written when first asked for)

    @classmethod
    def of(cls, data: Any, output: str, value: Any = None) -> Flow:
        """A command's output: its structured content when it has some, else its text (JSON when it parses; `value`:
        its JSON value, known already). Structured content that only wraps the text (`{"content": TEXT}`, as some
        servers send) is the text."""
        wraps = isinstance(data, dict) and len(data) == 1 and next(iter(data.values())) == output
        if data is not None and not wraps:
            return cls(value=data)
        return cls(text=output, value=value) if value is not None else cls(text=output)

    @property
    def written_value(self) -> Any:
        """The JSON value its text was written from (None when the text came first)."""
        return self._value if self.written and self._value is not _NOT_JSON else None

    @property
    def is_json(self) -> bool:
        if not self._parsed:
            try:
                self._value = json.loads(self.text)
            except (ValueError, RecursionError):
                self._value = _NOT_JSON
            self._parsed = True
        return self._value is not _NOT_JSON

    @property
    def value(self) -> Any:
        """The JSON value (check `is_json` first)."""
        return self._value if self.is_json else None

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = json.dumps(self._value, ensure_ascii=False)
        return self._text

    def first(self, n: int) -> list[Any] | None:
        """The first `n` items of a JSON array not parsed yet, read without parsing the rest (None: it is not an
        array, or has been parsed)."""
        text = self._text
        if self._parsed or text is None or text.lstrip()[:1] != "[":
            return None
        items: list[Any] = []
        at = _skip(text, text.index("[") + 1)
        try:
            while len(items) < n and text[at : at + 1] != "]":
                item, at = _DECODER.raw_decode(text, at)
                items.append(item)
                at = _skip(text, at, " \t\r\n,")
        except (ValueError, RecursionError):  # not JSON, or nested past the parser's depth (then it is text)
            return None
        return items

    def shape(self) -> str:
        """What it is, in a few words: `a JSON array of 600 items`, `text of 12 lines`."""
        if not self.is_json:
            return f"text of {len(self.text.splitlines()):,} lines"
        value = self._value
        if isinstance(value, list):
            return f"a JSON array of {len(value):,} item{'s' * (len(value) != 1)}"
        if isinstance(value, dict):
            keys = ", ".join(list(value)[:8]) + (", ..." if len(value) > 8 else "")
            return f"a JSON object of {len(value):,} keys ({keys})" if value else "an empty JSON object"
        return f"a JSON {type(value).__name__.replace('str', 'string').replace('NoneType', 'null')}"


def _count(name: str, args: list[str]) -> int:
    """N of `head N`, `head -n N`, `head -N` (10 without one)."""
    if args[:1] == ["-n"]:
        args = args[1:]
    elif len(args) == 1 and args[0][:1] == "-" and args[0][1:].isdigit():
        args = [args[0][1:]]
    if not args:
        return 10
    takes = f"`{name}` takes one count, a whole number (`{name} 5`)"
    if len(args) != 1:
        raise UsageError(f"{takes}, not {shlex.join(args)!r}.")
    return whole_option(args[0], takes, 0, 5)


class _InThread:
    """A built-in that runs in this process, in a worker thread (the event loop serves other calls meanwhile),
    abandoned with a `timeout` answer at the call's time limit."""

    def apply(self, flow: Flow) -> Flow:
        raise NotImplementedError

    async def run(self, flow: Flow, timeout: float) -> Flow:
        return await in_thread(lambda: self.apply(flow), timeout, "it")


@dataclass
class Slice(_InThread):
    """`head N` / `tail N`: items of a JSON array, else lines of text."""

    name: str
    count: int

    def apply(self, flow: Flow) -> Flow:
        n = self.count
        first = flow.first(n) if self.name == "head" else None
        if first is not None:
            return Flow(value=first)
        if flow.is_json and isinstance(flow.value, list):
            items = flow.value
            return Flow(value=items[:n] if self.name == "head" else items[len(items) - n :])
        lines = flow.text.splitlines(keepends=True)
        return Flow(text="".join(lines[:n] if self.name == "head" else lines[len(lines) - n :]))


class Jq:
    """`jq [-r] FILTER` through the jq library (compiled when the stage is checked)."""

    def __init__(self, args: list[str]) -> None:
        self.raw = args[:1] == ["-r"]
        args = args[1:] if self.raw else args
        if len(args) != 1:
            raise UsageError("`jq` takes one filter (quote it): jq '.items[] | .name'.")
        self.source = args[0]
        try:
            _compiled(self.source)  # checked here, before any stage runs; run in a worker (`run`)
        except ValueError as exc:
            raise UsageError(f"bad jq filter: {_first(exc)}") from None

    async def run(self, flow: Flow, timeout: float) -> Flow:
        """The filter's outputs over the flow, run in a jq worker process (`jq_pool.py`): no more than its input
        reaches it, and a runaway is stopped at `timeout` seconds."""
        try:
            outputs = await POOL.run(self.source, flow.text, timeout, "jq")
        except JqError as exc:
            if not flow.is_json:
                start = clip(flow.text.strip(), 60) or "(empty)"
                raise UsageError(
                    f"its input is not JSON ({start}); jq reads JSON: put it after a stage that gives JSON"
                ) from None
            raise HandlerError(f"jq: {_first(exc)}") from None
        value = outputs[0] if len(outputs) == 1 else outputs
        if not self.raw and len(outputs) == 1:
            return Flow(value=value)
        lines = [o if self.raw and isinstance(o, str) else json.dumps(o, ensure_ascii=False) for o in outputs]
        return Flow(text="".join(line + "\n" for line in lines), value=value)


@functools.lru_cache(maxsize=256)
def _compiled(source: str) -> Any:
    """A jq program, compiled (never run) to check it, once for every call that gives the same filter (ValueError
    for a bad one)."""
    import jq

    return jq.compile(source)


def _first(exc: Exception) -> str:
    return str(exc).split("\n")[0].removeprefix("jq: error: ").rstrip(":")


class Save(_InThread):
    """`save FILE`: the whole output written to FILE in the caller's folder (never outside it)."""

    def __init__(self, args: list[str], cwd: str | None, local_files: bool) -> None:
        if len(args) != 1:
            raise UsageError("`save` takes one file name: save out.json.")
        if not local_files:
            raise UsageError(
                "`save` writes to the caller's folder, which only a caller on this machine has (stdio, "
                "mcp-cli run); narrow the answer with jq, head or tail instead."
            )
        folder = Path(cwd or os.getcwd()).resolve()
        self.name, self.path = args[0], (folder / args[0]).resolve()
        if not self.path.is_relative_to(folder) or self.path == folder:
            raise UsageError(
                f"`save {self.name}`: the file must be in the caller's folder ({folder}); give a name "
                "relative to it, without `..`."
            )
        if not self.path.parent.is_dir():
            raise UsageError(f"`save {self.name}`: its folder does not exist; save into an existing folder.")

    def apply(self, flow: Flow) -> Flow:
        text = flow.text
        data = text.encode("utf-8")
        try:
            self.path.write_bytes(data)
        except OSError as exc:
            raise HandlerError(f"cannot write {self.name}: {exc.strerror or exc}") from None
        size = len(data)
        if flow.is_json and isinstance(flow.value, list):
            first = [json.dumps(item, ensure_ascii=False) for item in flow.value[:FIRST]]
        else:
            first = text.splitlines()[:FIRST]
        shown = "".join(f"  {clip(line, 200)}\n" for line in first)
        what = "items" if flow.is_json and isinstance(flow.value, list) else "lines"
        head = f"Saved {size:,} bytes to {self.name}: {flow.shape()}."
        return Flow(text=head + (f" First {what}:\n{shown}" if shown else "\n"))


def make(name: str, args: list[str], cwd: str | None, local_files: bool) -> Slice | Jq | Save:
    """The built-in `name` of a stage with its words `args`; UsageError when they do not fit it."""
    if name == "jq":
        return Jq(args)
    if name == "save":
        return Save(args, cwd, local_files)
    return Slice(name, _count(name, args))
