"""SKILL.md: YAML frontmatter read and checked against the Agent Skills spec, plus the markdown body.

Spec violations are warnings (real skills break the spec); a missing, empty, binary or refused SKILL.md (see
`files`), unreadable YAML or a missing name/description is an error naming the file and the problem.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ...errors import SourceError
from ...text import clip
from ...types import DIGITS
from . import files as files

FIELDS = ("name", "description", "license", "compatibility", "metadata", "allowed-tools")
_NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


@dataclass
class SkillMeta:
    name: str
    description: str
    body: str
    path: Path
    frontmatter: dict[str, Any] = field(default_factory=dict)  # every field as written, as JSON values


def valid_name(name: str) -> bool:
    """Whether the spec allows `name` as a skill's name: 1-64 lowercase letters, digits and single hyphens."""
    return 1 <= len(name) <= 64 and bool(_NAME.match(name))


def find(skill_dir: Path) -> Path | None:
    """SKILL.md in the folder; another spelling of the name (skill.md) is accepted too. Anything by that name that
    is not a folder counts (a FIFO, a broken symlink), so that `read` can say why it cannot be read."""
    exact = skill_dir / "SKILL.md"
    if os.path.lexists(exact) and not exact.is_dir():
        return exact
    try:
        entries = sorted(skill_dir.iterdir())
    except OSError:
        return None
    return next((p for p in entries if p.name.lower() == "skill.md" and not p.is_dir()), None)


def read(skill_dir: Path) -> tuple[SkillMeta, list[str]]:
    path = find(skill_dir)
    if path is None:
        raise SourceError(
            f"{skill_dir}: no SKILL.md. A skill folder needs a SKILL.md with YAML frontmatter "
            "(name, description) between --- lines."
        )
    warnings = [] if path.name == "SKILL.md" else [f"{path.name}: the spec names this file SKILL.md"]
    try:
        text = files.read_text(skill_dir, path, warnings, what="SKILL.md")
    except files.Refused as exc:
        why = f"refused, {exc.reason}" if exc.verb == "refused" else exc.reason
        raise SourceError(f"{path}: {why}. SKILL.md must be a UTF-8 text file inside the skill folder.") from None
    if not text.strip():
        raise SourceError(
            f"{path}: empty. Start it with YAML frontmatter: a --- line, `name:` and `description:`, another --- line."
        )
    m = re.match(r"\A---[ \t]*\r?\n(.*?)^---[ \t]*\r?$\n?", text, re.S | re.M)
    if not m and re.match(r"\A---[ \t]*\r?$", text, re.M):
        raise SourceError(f"{path}: the frontmatter is not closed: add a --- line after its last field.")
    if not m:
        raise SourceError(
            f"{path}: no YAML frontmatter. Start the file with a --- line, then `name:` and "
            "`description:`, then another --- line."
        )
    try:
        data = load_yaml(m.group(1))
    except Unsafe as exc:
        raise SourceError(f"{path}: the frontmatter {exc}.") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        data = _key_by_key(m.group(1))
        if data is None:
            raise SourceError(
                f"{path}: the frontmatter is not valid YAML{where}: {problem}. Quote values that contain colons."
            ) from None
        warnings.append(
            f"{path.name}: the frontmatter is not valid YAML{where} ({problem}); read key by key, taking values YAML "
            "cannot read as plain text. Quote values that contain colons."
        )
    if not isinstance(data, dict):
        raise SourceError(f"{path}: the frontmatter must be a YAML mapping with name and description.")
    for key in ("name", "description"):
        if data.get(key) is not None and not isinstance(data[key], str):
            raise SourceError(
                f"{path}: the frontmatter's `{key}` must be a string, not {_a(data[key])}. Quote it if it looks like "
                "something else."
            )
        if not isinstance(data.get(key), str) or not data[key].strip():
            raise SourceError(f"{path}: the frontmatter has no `{key}` (a non-empty string); the spec requires it.")
    name, description = data["name"].strip(), " ".join(data["description"].split())
    rel = path.name
    if not valid_name(name):
        warnings.append(f"{rel}: name {name!r} breaks the spec (1-64 lowercase letters, digits and single hyphens)")
    if name != skill_dir.resolve().name:
        warnings.append(f"{rel}: name {name!r} does not match the folder name {skill_dir.resolve().name!r}")
    if len(description) > 1024:
        warnings.append(f"{rel}: description has {len(description)} characters; the spec allows 1024")
    compat = data.get("compatibility")
    if compat is not None and (not isinstance(compat, str) or len(compat) > 500):
        warnings.append(f"{rel}: compatibility should be a string of at most 500 characters")
    if "metadata" in data and not isinstance(data["metadata"], dict):
        warnings.append(f"{rel}: metadata should be a mapping")
    unknown = [k for k in data if k not in FIELDS]
    if unknown:
        warnings.append(
            f"{rel}: unknown frontmatter field(s) {', '.join(map(str, unknown))} ignored "
            f"(the spec has {', '.join(FIELDS)})"
        )
    return SkillMeta(name, description, text[m.end() :], path, _json(data)), warnings


MAX_VALUES = 100_000  # values (scalars, lists, mappings) a YAML document may hold, aliases counted as expanded
MAX_DEPTH = 100  # lists and mappings a YAML value may nest
_LONG = re.compile(rf"[-+]?[0-9][0-9_]{{{DIGITS - 1},}}")  # a decimal integer of DIGITS characters or more


class Unsafe(Exception):
    """YAML that would take too long or too deep a recursion to read: the message says which."""


def load_yaml(text: str) -> Any:
    """`yaml.safe_load`, refusing (Unsafe) aliases that expand to more than MAX_VALUES values (a "billion laughs")
    and nesting deeper than MAX_DEPTH, both found on the composed node graph before anything is built from it."""
    depth = 0
    for event in yaml.parse(text, Loader=yaml.SafeLoader):  # events, read without recursion: stops at the depth
        if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            depth += 1
            if depth > MAX_DEPTH:
                raise Unsafe(f"nests more than {MAX_DEPTH} levels deep; flatten it")
        elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            depth -= 1
        elif isinstance(event, yaml.ScalarEvent) and event.implicit[0] and _LONG.fullmatch(event.value):
            digits = sum(c.isdigit() for c in event.value)
            if digits > DIGITS:  # YAML would read it as an integer, which Python refuses to make
                raise Unsafe(
                    f"holds a number of {digits:,} digits, more than the {DIGITS:,} a number may have; "
                    "quote it to keep it as text"
                )
    node = yaml.compose(text, Loader=yaml.SafeLoader)
    if node is None:
        return None
    sizes: dict[int, int] = {}  # each node's size with its aliases expanded, counted once per node

    def size(node: yaml.Node, depth: int) -> int:
        if depth > MAX_DEPTH:
            raise Unsafe(f"nests more than {MAX_DEPTH} levels deep; flatten it")
        if id(node) not in sizes:
            children = node.value if isinstance(node, yaml.SequenceNode) else []
            if isinstance(node, yaml.MappingNode):
                children = [n for pair in node.value for n in pair]
            sizes[id(node)] = 1 + sum(size(child, depth + 1) for child in children)
        return sizes[id(node)]

    if size(node, 0) > MAX_VALUES:
        raise Unsafe(
            f'holds YAML aliases that expand to {sizes[id(node)]:,} values (more than {MAX_VALUES:,}: a "billion '
            'laughs"); write the values out or remove the aliases'
        )
    try:
        return yaml.safe_load(text)  # read again: a few kilobytes, and then known to be safe
    except (ValueError, RecursionError) as exc:  # a value the checks above did not foresee
        why = clip(str(exc), 120)
        raise Unsafe(f"holds a value that cannot be read ({why}); quote it to keep it as text") from None


def _json(value: object) -> Any:
    """A YAML value as JSON: mappings with string keys, lists; dates and other scalars YAML makes as text."""
    if isinstance(value, dict):
        return {str(k): _json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [_json(v) for v in value]
    return value if value is None or isinstance(value, (str, int, float, bool)) else str(value)


_KEY = re.compile(r"^([A-Za-z_][\w-]*)[ \t]*:(?:[ \t]+(.*))?$")


def _key_by_key(frontmatter: str) -> dict[str, Any] | None:
    """Frontmatter YAML cannot read as a whole (most often an unquoted `: ` inside a value, which tools that read
    frontmatter loosely accept), read one top-level key at a time: a key with its indented lines as YAML, else its
    value as plain text. None when a line belongs to no key: then the intent is not clear."""
    entries: list[tuple[re.Match[str], list[str]]] = []  # a key's line, read, and its lines
    for line in frontmatter.splitlines():
        if key := _KEY.match(line):
            entries.append((key, [line]))
        elif entries and (not line.strip() or line[0] in " \t"):
            entries[-1][1].append(line)
        elif line.strip() and not line.startswith("#"):
            return None
    data: dict[str, Any] = {}
    for key, lines in entries:
        try:
            value = load_yaml("\n".join(lines))
        except (yaml.YAMLError, Unsafe):
            value = None
        if isinstance(value, dict):
            data.update(value)
        else:
            name, first = key.groups()
            data[name] = " ".join(" ".join([first or "", *lines[1:]]).split())
    return data or None


def _a(value: object) -> str:
    """`a list`, `a mapping`, `a number`: what a YAML value is, for a message."""
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, (int, float)):
        return "a number"
    names: dict[type[object], str] = {list: "a list", dict: "a mapping"}
    return names.get(type(value), f"a {type(value).__name__}")
