"""Handler references: what a command runs, as typed data (one class per kind), checked when made.

In a tree file a reference is a JSON object, `{"kind": "python", "target": "m:f"}`; `HandlerRef.from_dict` reads one
(a broken one fails with a message naming the key and what it must be) and `to_dict` writes it back, leaving out
keys at their default. What the rest of the package asks of a command's handler (which upstream server and tool it
calls, whether search lists it, how it takes a pipeline's input) each kind answers itself: nothing outside
`handlers/` compares kind names. The handlers that run references are in `handlers/`, one per kind.

- `python`: a callable `target` (`module:attribute`), run in-process (`handlers/python.py`).
- `subprocess`: a program and its arguments, `command`, never through a shell (`handlers/subprocess.py`).
- `mcp`: an upstream server's `tool` (`McpToolRef`), or with `op` one of its resources or prompts methods
  (`McpOpRef`) (`handlers/mcp.py`, `handlers/catalogue.py`).
- `search`: the tree's own `search` command (`handlers/search.py`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

OPS = ("resources/list", "resources/templates/list", "resources/read", "prompts/list", "prompts/get")


def _spec(
    types: type | tuple[type, ...],
    what: str,
    items: type | None = None,
    bad: str = "",
    required: bool = False,
    **default: Any,
) -> Any:
    """A field of a reference: the JSON types its value may have (`items`: of its members), what it must be (said
    when it is missing or wrong; `bad`: when only its members are), and its default. A field without a default is
    required, and so is one marked `required` (an upstream's `server` and `tool`, which have a default only so as
    to stand for the properties of every reference of those names): it must be there and not empty."""
    return field(
        metadata={"types": types, "what": what, "items": items, "bad": bad or what, "required": required}, **default
    )


@dataclass(kw_only=True)
class HandlerRef:
    """A handler reference. `timeout` (seconds) overrides the tree's for this command."""

    kind: ClassVar[str] = ""
    listed: ClassVar[bool] = True  # search lists the command, and counts of a tree's commands count it
    free_text: ClassVar[bool] = False  # its words are free text: a quote left open in `command` is taken as is
    piped_as: ClassVar[Literal["stdin", "arguments"] | None] = None  # how it takes a previous pipeline stage's output

    timeout: float | None = _spec((int, float), "a number of seconds", default=None)

    @property
    def server(self) -> str | None:
        """The upstream MCP server the command calls (its config key), if it calls one."""
        return None

    @property
    def tool(self) -> str | None:
        """The upstream tool the command calls (its own name), if it calls one."""
        return None

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value, required = getattr(self, f.name), _required(f)
            types, items = f.metadata["types"], f.metadata["items"]
            if required and (not value or not _is(value, types)):
                raise ValueError(f"{self.kind} handler reference needs {f.name!r}: {f.metadata['what']}")
            if value is None and not required:
                continue
            members = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
            if not _is(value, types) or (items is not None and not all(_is(m, items) for m in members)):
                raise ValueError(f"{self.kind} handler reference has a bad {f.name!r}: it must be {f.metadata['bad']}")
        self._check()

    def _check(self) -> None:
        """What a kind checks besides the types of its fields."""

    def to_dict(self) -> dict[str, Any]:
        """The reference as a tree file holds it: its kind, then each key not at its default."""
        out: dict[str, Any] = {"kind": self.kind}
        for f in _fields(type(self)):
            value = getattr(self, f.name)
            factory = f.default_factory
            if value != (factory() if callable(factory) else f.default):
                out[f.name] = value
        return out

    @staticmethod
    def from_dict(data: object) -> HandlerRef:
        """Read a reference from its JSON form; ValueError saying what is wrong with a broken one."""
        if not isinstance(data, dict):
            raise ValueError('a handler reference must be an object, {"kind": ..., ...}')
        kind = data.get("kind")
        cls: type[HandlerRef] | None = KINDS.get(kind) if isinstance(kind, str) else None
        if cls is McpToolRef and "op" in data:
            cls = McpOpRef
        if cls is None:
            raise ValueError(f"no handler of kind {kind!r} (known kinds: {', '.join(sorted(KINDS))})")
        keys = [f.name for f in _fields(cls)]
        unknown = [k for k in data if k != "kind" and k not in keys]
        if unknown:
            raise ValueError(f"{kind} handler reference has an unknown key {unknown[0]!r} (known: {', '.join(keys)})")
        for f in dataclasses.fields(cls):
            if f.name not in data and _required(f):
                raise ValueError(f"{kind} handler reference needs {f.name!r}: {f.metadata['what']}")
        return cls(**{k: v for k, v in data.items() if k != "kind"})


def _fields(cls: type[HandlerRef]) -> list[dataclasses.Field[Any]]:
    """A kind's fields, its own first (`timeout`, which every kind has, last)."""
    return sorted(dataclasses.fields(cls), key=lambda f: f.name == "timeout")


def _required(f: dataclasses.Field[Any]) -> bool:
    return bool(f.metadata["required"]) or (f.default is dataclasses.MISSING and not _has_factory(f))


def _has_factory(f: dataclasses.Field[Any]) -> bool:
    return f.default_factory is not dataclasses.MISSING


def _is(value: object, types: type | tuple[type, ...]) -> bool:
    """Whether a JSON value is of `types` (true and false are not numbers)."""
    wanted = types if isinstance(types, tuple) else (types,)
    return isinstance(value, wanted) and (bool in wanted or not isinstance(value, bool))


@dataclass(kw_only=True)
class NoHandler(HandlerRef):
    """A command whose handler is not set (yet: a source sets it once it knows it). A runtime refuses it."""

    def to_dict(self) -> dict[str, Any]:
        return {}


@dataclass(kw_only=True)
class PythonRef(HandlerRef):
    """A Python callable, imported from `target` (`module:attribute`, dotted attributes allowed; the tree's folder
    is importable), run in-process."""

    kind: ClassVar[str] = "python"
    target: str = _spec(str, "module:attribute")

    def _check(self) -> None:
        module_name, _, attr = self.target.partition(":")
        if not module_name or not attr:
            raise ValueError(f"python handler target {self.target!r} is not of the form module:attribute")


@dataclass(kw_only=True)
class SubprocessRef(HandlerRef):
    """A program and its arguments (`command`), run without a shell; the call's tokens go after them. `{python}` is
    this interpreter and `{base}` the tree's folder (in `command` and `env`). See `handlers/subprocess.py` for what
    each key does."""

    kind: ClassVar[str] = "subprocess"
    piped_as: ClassVar[Literal["stdin", "arguments"] | None] = "stdin"

    command: list[str] = _spec(list, "the program and its arguments, a list", str, "a list of strings")
    cwd: str | None = _spec(str, "a folder, relative to the tree's", default=None)
    env: dict[str, str] = _spec(dict, "an object of strings", str, default_factory=dict)
    inherit: list[str] = _spec(list, "a list of variable names or patterns", str, default_factory=list)
    stdin: bool = _spec(bool, "true or false", default=False)  # takes `--stdin TEXT|@FILE`, written to its input
    dependencies: list[str] | None = _spec(list, "a list of requirements", str, default=None)  # PEP 723
    requires_python: str | None = _spec(str, "a version specifier such as '>=3.10'", default=None)
    broken: str = _spec(str, "why the script cannot run", default="")
    before: list[dict[str, int | None]] = _spec(
        list, "a list of objects, one per subcommand word", dict, default_factory=list
    )


@dataclass(kw_only=True)
class McpToolRef(HandlerRef):
    """A tool of an upstream MCP server: `server` (its key in the tree's `upstreams`), `tool` (its own name); `task`:
    it runs only as a task."""

    kind: ClassVar[str] = "mcp"
    piped_as: ClassVar[Literal["stdin", "arguments"] | None] = "arguments"

    server: str = _spec(str, "the upstream server's name", required=True, default="")
    tool: str = _spec(str, "the tool's name", required=True, default="")
    task: bool = _spec(bool, "true or false", default=False)


@dataclass(kw_only=True)
class McpOpRef(HandlerRef):
    """A method of an upstream MCP server's resources or prompts (`op`, one of OPS): `prompt` names the prompt of
    `prompts/get`; `templates` are the server's resource URI templates, for `resources/read`."""

    kind: ClassVar[str] = "mcp"

    server: str = _spec(str, "the upstream server's name", required=True, default="")
    op: str = _spec(str, f"one of {', '.join(OPS)}")
    prompt: str = _spec(str, "the prompt's name", default="")
    templates: list[str] = _spec(list, "a list of URI templates", str, default_factory=list)

    def _check(self) -> None:
        if self.op not in OPS:
            raise ValueError(f"mcp handler reference has an unknown 'op' {self.op!r} (one of {', '.join(OPS)})")
        if self.op == "prompts/get" and not self.prompt:
            raise ValueError("mcp handler reference needs 'prompt': the prompt's name")


@dataclass(kw_only=True)
class SearchRef(HandlerRef):
    """The tree's `search` command: it searches the tree it is in (a client's part of it, in a scope)."""

    kind: ClassVar[str] = "search"
    listed: ClassVar[bool] = False
    free_text: ClassVar[bool] = True


KINDS: dict[str, type[HandlerRef]] = {
    "python": PythonRef,
    "subprocess": SubprocessRef,
    "mcp": McpToolRef,
    "search": SearchRef,
}
