"""The optional skill manifest, `mcp-cli.yaml` in the skill folder: reshape the default tree.

    name: pdf                  # the tool (root) name; default: the skill's name
    summary: PDF toolkit.      # the root summary; default: the skill's description
    docs: docs                 # the name of the doc-topics group; false leaves the documents out
    env: [OPENAI_API_KEY, AWS_*]   # variables the scripts get from the server's environment (beyond a safe base)
    timeout: 300               # seconds a script may run (default 60)
    stdin: [convert]           # commands that read their standard input (beyond those seen in their source)
    steps:                     # applied in order, each on the tree the previous one left
      - move: {from: extract-text, to: text extract}   # rename and/or regroup (groups made as needed)
      - hide: debug-dump                              # drop a node
      - flatten: misc                                 # a group's children take its place
      - summary: {text: Extract text from PDFs.}      # set summaries by path
      - order: [documents, text]                      # children of the root first, in this order
      - order: {text: [extract, search]}              # or of any group

Paths are space-separated names from the root. A step that names a missing path is a warning, not an error.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from ...errors import SourceError
from ...refs import SubprocessRef
from ...text import clip
from ...tree import MAX_DEPTH, Command, Group, Node, Tree
from . import files as files
from . import scripts
from .skillmd import Unsafe, load_yaml

FILE = "mcp-cli.yaml"
KEYS = ("name", "summary", "docs", "env", "timeout", "stdin", "steps")


def read(skill_dir: Path, warnings: list[str]) -> dict[str, Any]:
    """The manifest's keys; {} without one. One that cannot be read (refused by `files`, not YAML, not a mapping)
    is an error: the tree it asks for cannot be made. A key of the wrong type is a warning and ignored."""
    path = skill_dir / FILE
    if not os.path.lexists(path):
        return {}
    try:
        data = load_yaml(files.read_text(skill_dir, path, warnings, what="a manifest")) or {}
    except files.Refused as exc:
        why = f"refused, {exc.reason}" if exc.verb == "refused" else exc.reason
        raise SourceError(f"{path}: {why}. Make it a YAML text file in the skill folder, or remove it.") from None
    except Unsafe as exc:  # too deep, too many aliases, a number Python will not read
        raise SourceError(f"{path}: {exc}.") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise SourceError(f"{path}: not valid YAML{where}: {problem}") from None
    if not isinstance(data, dict):
        raise SourceError(f"{path}: must be a YAML mapping (keys: {', '.join(KEYS)})")
    for key in list(data):
        if key not in KEYS:
            warnings.append(f"{FILE}: unknown key {key!r} ignored (keys: {', '.join(KEYS)})")
        elif not _TYPES[key][0](data[key]):
            warnings.append(f"{FILE}: `{key}` must be {_TYPES[key][1]}; ignored")
            del data[key]
    return data


# key: (accepts, what it must be); env and timeout are checked where they are used
_TYPES: dict[str, tuple[Callable[[object], bool], str]] = {
    "name": (lambda v: isinstance(v, str) and bool(v.strip()), "a non-empty string"),
    "summary": (lambda v: isinstance(v, str), "a string"),
    "docs": (lambda v: v is None or v is False or (isinstance(v, str) and bool(v.strip())), "a group name, or false"),
    "env": (lambda v: True, ""),
    "timeout": (lambda v: True, ""),
    "stdin": (lambda v: isinstance(v, list) and all(isinstance(p, str) for p in v), "a list of command paths"),
    "steps": (lambda v: v is None or isinstance(v, list), "a list of steps"),
}


def _split(path: object) -> list[str]:
    return str(path).split() if path is not None else []


def _find(root: Group, names: list[str]) -> tuple[Group | None, Node | None]:
    """(parent, node) at a path; (None, None) when the path is missing."""
    parent: Group = root
    node: Node = root
    for name in names:
        if not isinstance(node, Group):
            return None, None
        child = node.child(name)
        if child is None:
            return None, None
        parent, node = node, child
    return parent, node


def _group_at(root: Group, names: list[str]) -> Group | None:
    node: Group = root
    for name in names:
        child = node.child(name)
        if child is None:
            child = Group(name=name)
            node.children.append(child)
        if not isinstance(child, Group):
            return None
        node = child
    return node


def _height(node: Node) -> int:
    """Levels of `node` and the nodes under it (1: a command or an empty group), counted without recursion."""
    height, level = 0, [node]
    while level:
        height += 1
        level = [c for n in level if isinstance(n, Group) for c in n.children]
    return height


def apply(root: Group, steps: list[Any], warnings: list[str]) -> None:
    for i, step in enumerate(steps or [], 1):
        if not isinstance(step, dict) or len(step) != 1:
            warnings.append(f"{FILE}: step {i} must be a mapping with one of move, hide, flatten, summary, order")
            continue
        ((op, arg),) = step.items()
        where = f"{FILE}: step {i} ({op})"
        if op == "move" and isinstance(arg, dict):
            src, dst = _split(arg.get("from")), _split(arg.get("to"))
            parent, node = _find(root, src)
            deep = len(dst) - 1 + _height(node) if node is not None else 0
            if deep > MAX_DEPTH:
                to = clip(str(arg.get("to")), 60)
                warnings.append(
                    f"{where}: not moved to {to!r}: it would be {deep} levels deep, more than the "
                    f"{MAX_DEPTH} a tree may have"
                )
                continue
            target = _group_at(root, dst[:-1]) if dst else None
            if node is None or parent is None or target is None or not src:
                warnings.append(f"{where}: cannot move {arg.get('from')!r} to {arg.get('to')!r}")
                continue
            parent.children.remove(node)
            node.name = dst[-1]
            target.children.append(node)
        elif op in ("hide", "flatten"):
            for path in arg if isinstance(arg, list) else [arg]:
                parent, node = _find(root, _split(path))
                if node is None or parent is None or (op == "flatten" and not isinstance(node, Group)):
                    warnings.append(f"{where}: no {'group' if op == 'flatten' else 'node'} at {path!r}")
                    continue
                at = parent.children.index(node)
                parent.children[at : at + 1] = node.children if isinstance(node, Group) and op == "flatten" else []
        elif op == "summary" and isinstance(arg, dict):
            for path, text in arg.items():
                _, node = _find(root, _split(path))
                if node is None:
                    warnings.append(f"{where}: no node at {path!r}")
                else:
                    node.summary = str(text)
        elif op == "order":
            for path, names in arg.items() if isinstance(arg, dict) else [("", arg)]:
                _, group = _find(root, _split(path))
                if not isinstance(group, Group) or not isinstance(names, list):
                    warnings.append(f"{where}: no group at {path!r}, or the order is not a list")
                    continue
                rank = {str(n): k for k, n in enumerate(names)}
                group.children.sort(key=lambda n: rank.get(n.name, len(rank)))
        else:
            warnings.append(f"{where}: unknown step or bad argument")


def configure_scripts(root: Group, options: dict[str, Any], warnings: list[str]) -> None:
    """Give every script the manifest's `env` (names to inherit) and `timeout`, and `--stdin` to the commands
    `stdin` names."""
    inherit, timeout = options.get("env") or [], options.get("timeout")
    if not isinstance(inherit, list) or not all(isinstance(n, str) for n in inherit):
        warnings.append(f"{FILE}: `env` must be a list of variable names (or patterns); ignored")
        inherit = []
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0):
        warnings.append(f"{FILE}: `timeout` must be a number of seconds; ignored")
        timeout = None
    for _, node in Tree(root).walk():
        if isinstance(node, Command) and isinstance(node.handler, SubprocessRef):
            node.handler.inherit = list(inherit) if inherit else node.handler.inherit
            node.handler.timeout = float(timeout) if timeout else node.handler.timeout
    for path in options.get("stdin") or []:
        _, found = _find(root, _split(path))
        if not isinstance(found, Command) or not isinstance(found.handler, SubprocessRef):
            warnings.append(f"{FILE}: stdin: no script command at {path!r}")
        elif not found.handler.stdin:
            scripts.accept_stdin(found, warnings, f"{FILE}: stdin {path}")
