"""The command tree (IR): groups, commands, typed parameters and doc topics, as plain data.

A tree serialises to JSON losslessly (`Tree.to_dict` / `Tree.from_dict`); fields that hold
their default value are left out of the JSON, so frozen trees stay small and diffable.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .refs import HandlerRef, NoHandler
from .text import command_name, kebab
from .types import TYPES

FORMAT = "mcp-cli/tree"
FORMAT_VERSION = 1

ACTIONS = ("store", "store_true", "store_false", "negatable", "count", "append")
MAX_DEPTH = 32  # levels of nodes below a tree's root, at most (what a source reshapes it to stays within them)


@dataclass
class Param:
    """One parameter of a command: a positional (no `flags`) or an option (`flags` like `["-p", "--pages"]`).

    `type` is the value type of one item; an array is a positional with `nargs` ("+", "*", a count) or an
    option with `action="append"` (repeatable). `nargs="..."` takes every remaining token verbatim. `notes` are what
    help says of its value after its description, in brackets (a range, a format, a shape); `details` lines it shows
    under the option: each choice with what it means, each field of a JSON object value.
    """

    name: str
    type: str = "string"
    flags: list[str] = field(default_factory=list)
    help: str = ""
    required: bool = False
    default: Any = None
    choices: list[Any] | None = None
    nargs: str | int | None = None
    action: str = "store"
    metavar: str | None = None
    notes: str = ""
    details: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.type not in TYPES:
            raise ValueError(f"parameter {self.name!r}: unknown type {self.type!r} (one of {', '.join(TYPES)})")
        if self.action not in ACTIONS:
            raise ValueError(f"parameter {self.name!r}: unknown action {self.action!r} (one of {', '.join(ACTIONS)})")

    @property
    def positional(self) -> bool:
        return not self.flags

    @property
    def takes_value(self) -> bool:
        return self.action in ("store", "append")


@dataclass
class Exclusive:
    """Parameters of one command that may not be given together (`required`: exactly one must be)."""

    params: list[str]
    required: bool = False


@dataclass
class _Named:
    """What every node has: a name (a token of argv) and a one-line summary."""

    name: str
    summary: str = ""


@dataclass
class Command(_Named):
    """A leaf that runs a handler. `handler` is a reference (typed, see `refs.py`; given in its JSON form, as a tree
    file has it, it is read into one), resolved by the runtime.

    A `passthrough` command accepts any tokens and hands them to its handler unparsed; its help is `usage`.
    With a JSON `schema` (an MCP tool's input schema), parsed options are assembled into the arguments object
    and validated against it before the handler runs (see `schema.py`); `annotations` are the tool's hints.
    `entities` are the entity types it acts on, each with the parameters whose values make one (see `entities.py`).
    `returns` says what it gives back, in a line, where its source says so (an MCP tool's output schema).
    """

    description: str = ""
    params: list[Param] = field(default_factory=list)
    exclusive: list[Exclusive] = field(default_factory=list)
    handler: HandlerRef = field(default_factory=NoHandler)
    aliases: list[str] = field(default_factory=list)
    examples: list[str] = field(default_factory=list)
    passthrough: bool = False
    usage: str = ""
    schema: dict[str, Any] | None = None
    annotations: dict[str, Any] = field(default_factory=dict)
    entities: dict[str, list[str]] = field(default_factory=dict)
    returns: str = ""
    kind: str = field(default="command", init=False, repr=False)

    def __post_init__(self) -> None:
        given: object = self.handler
        if isinstance(given, dict):
            self.handler = HandlerRef.from_dict(given)
        if not isinstance(self.entities, dict) or not all(
            isinstance(names, list) and names and all(isinstance(n, str) for n in names)
            for names in self.entities.values()
        ):
            raise ValueError('"entities" must map entity types to lists of parameter names')


@dataclass
class Topic(_Named):
    """A document reachable through argv (`pdf docs forms`); markdown `text`, shown by section when long."""

    text: str = ""
    aliases: list[str] = field(default_factory=list)
    kind: str = field(default="topic", init=False, repr=False)


@dataclass
class Group(_Named):
    """An inner node: a domain at the root, a group below it. Children keep their order."""

    description: str = ""
    children: list[Node] = field(default_factory=list)
    aliases: list[str] = field(default_factory=list)
    kind: str = field(default="group", init=False, repr=False)

    def child(self, token: str) -> Node | None:
        """The child named `token`, else the one aliased `token`, or None."""
        named = (n for n in self.children if token == n.name)
        return next(named, None) or next((n for n in self.children if token in n.aliases), None)


Node = Group | Command | Topic
_NODE_TYPES: dict[str, type[Node]] = {"group": Group, "command": Command, "topic": Topic}


@dataclass
class Settings:
    """Limits that apply to every call of a tree: an answer's budget (tokens, see `engine/answers.py`), handler
    timeout (seconds), help budget (characters); and how the one tool meets hosts: `always_load` marks it to stay
    loaded where a host defers MCP tools, `structured` sends each answer's envelope as structuredContent beside the
    text (hosts that get it show their model only it); `answers_store`: where a server keeps cut answers' next parts
    (a Redis or Valkey URL that replicas share; None: in memory)."""

    budget: int = 8_000
    timeout: float = 60.0
    help_budget: int = 4_000
    always_load: bool = True
    structured: bool = False
    answers_store: str | None = None


@dataclass
class Tree:
    """A root group plus settings, and the upstream MCP servers its `mcp` handlers call (name -> config).
    `base_dir` (not serialised) anchors relative paths in handler references. A tree read from a skill folder
    has `skill`: `{"file": "SKILL.md", "frontmatter": {...}}` (its SKILL.md's name and frontmatter as written), and
    serves the folder `base_dir` as skill resources (see `skill_resources`). `file` (not serialised) is the tree
    JSON file it was read from, if any: a built package keeps it beside the skill's files, not one of them."""

    root: Group
    settings: Settings = field(default_factory=Settings)
    upstreams: dict[str, dict[str, Any]] = field(default_factory=dict)
    skill: dict[str, Any] | None = None
    base_dir: Path | None = field(default=None, compare=False, repr=False)
    file: Path | None = field(default=None, compare=False, repr=False)
    # the `mcp-cli` arguments it was loaded by, its options then its source (`--only x /abs/config.json`), with which
    # a shell's caller runs it again (not serialised; None: not loaded by the `mcp-cli` command)
    origin: list[str] | None = field(default=None, compare=False, repr=False)
    # the tree again, for a source that could not read everything (not serialised)
    rediscover: Callable[[], Awaitable[Tree]] | None = field(default=None, compare=False, repr=False)
    # the tree again after server NAME said its tools changed, given their listing now (not serialised)
    reload: Callable[[str, Any], Awaitable[Tree]] | None = field(default=None, compare=False, repr=False)
    # the pool of upstream sessions its source was listed through, for the runtime to call them in (not serialised;
    # a `handlers.upstream.Upstreams`, which the tree, below the handlers, holds without knowing)
    sessions: object | None = field(default=None, compare=False, repr=False)

    @property
    def name(self) -> str:
        return self.root.name

    def walk(self) -> list[tuple[list[str], Node]]:
        """Every node below the root with its path of names (root name excluded), depth first, in order."""
        out: list[tuple[list[str], Node]] = []

        def visit(group: Group, prefix: list[str]) -> None:
            for node in group.children:
                out.append((prefix + [node.name], node))
                if isinstance(node, Group):
                    visit(node, prefix + [node.name])

        visit(self.root, [])
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "settings": _to_data(self.settings),
            **({"upstreams": self.upstreams} if self.upstreams else {}),
            **({"skill": self.skill} if self.skill else {}),
            "root": _to_data(self.root),
        }

    def to_json(self, indent: int | None = 1) -> str:
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False, sort_keys=False) + "\n"

    @classmethod
    def from_dict(cls, data: dict[str, Any], base_dir: Path | None = None, file: Path | None = None) -> Tree:
        if data.get("format") != FORMAT:
            raise ValueError(f'not an mcp-cli tree (expected "format": "{FORMAT}")')
        if data.get("version") != FORMAT_VERSION:
            raise ValueError(f"unsupported tree version {data.get('version')!r} (this mcp-cli reads {FORMAT_VERSION})")
        root = _node_from(data["root"])
        if not isinstance(root, Group):
            raise ValueError("the root of a tree must be a group")
        settings = Settings(**_settings(data.get("settings", {})))
        upstreams, skill = data.get("upstreams", {}), data.get("skill")
        if skill is not None and not (
            isinstance(skill, dict)
            and isinstance(skill.get("file"), str)
            and isinstance(skill.get("frontmatter"), dict)
            and isinstance(skill["frontmatter"].get("name"), str)
        ):
            raise ValueError('"skill" must be {"file": "SKILL.md", "frontmatter": {"name": ..., ...}}')
        return cls(root=root, settings=settings, upstreams=upstreams, skill=skill, base_dir=base_dir, file=file)

    @classmethod
    def load(cls, path: str | Path) -> Tree:
        path = Path(path).resolve()
        return cls.from_dict(json.loads(path.read_text(encoding="utf-8")), base_dir=path.parent, file=path)


def server_depth(walked: list[Node]) -> int | None:
    """Where in `walked` (root to a command) the group of the wrapped MCP server the command calls is: the group
    named after the server's config key (as a command, in kebab-case or as it is: the one of servers alike in
    kebab-case is named so), or with it as an alias (a server renamed by what it does); inside a group of look-alike
    servers too. None for a command of no server."""
    server = walked[-1].handler.server if isinstance(walked[-1], Command) else None
    if server:
        keys = {server, command_name(server), kebab(server)}
        for depth in range(1, len(walked) - 1):
            if keys & {walked[depth].name, *walked[depth].aliases}:
                return depth
    return None


def _settings(data: dict[str, Any]) -> dict[str, Any]:
    """Settings as written, a tree of before budgets read too: its `max_output` (characters) as a budget (tokens)."""
    data = dict(data)
    if "max_output" in data:
        data.setdefault("budget", int(data.pop("max_output")) // 3)
    return data


def _to_data(obj: Any) -> Any:
    """Dataclass -> dict without default-valued fields (but always with a node's `kind`)."""
    if isinstance(obj, list):
        return [_to_data(x) for x in obj]
    if isinstance(obj, HandlerRef):
        return obj.to_dict()
    if not dataclasses.is_dataclass(obj):
        return obj
    out: dict[str, Any] = {}
    for f in dataclasses.fields(obj):
        if f.name == "base_dir":
            continue
        value = getattr(obj, f.name)
        default = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
        if f.name == "kind" or value != default:
            out[f.name] = _to_data(value)
    return out


def _node_from(data: dict[str, Any], above: tuple[str, ...] = ()) -> Node:
    """A node from its JSON form; ValueError naming it by its path (`above`: the names of the groups it is in)."""
    kind = data.get("kind", "command")
    path = " ".join([*above, str(data.get("name", "?"))])
    node_type = _NODE_TYPES.get(kind)
    if node_type is None:
        raise ValueError(f"unknown node kind {kind!r} in {path!r}")
    args = {k: v for k, v in data.items() if k != "kind"}
    if node_type is Group:
        args["children"] = [_node_from(c, (*above, str(data.get("name")))) for c in args.get("children", [])]
    elif node_type is Command:
        args["exclusive"] = [Exclusive(**e) for e in args.get("exclusive", [])]
    try:
        if node_type is Command:
            args["params"] = [Param(**p) for p in args.get("params", [])]
        return node_type(**args)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"bad {kind} {path!r}: {exc}") from None
