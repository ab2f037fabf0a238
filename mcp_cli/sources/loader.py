"""Sources produce trees. `load` picks the source from what TREE names."""

from __future__ import annotations

import importlib
import json
import logging
import sys
from pathlib import Path
from typing import Any

from ..errors import SourceError
from ..tree import Tree
from . import mcp_config

__all__ = ["SourceError", "load"]


log = logging.getLogger("mcp_cli")


def load(source: str, **config_options: Any) -> Tree:
    """A tree from a skill folder, an MCP client configuration (`config_options` as for `mcp_tools.load`),
    a tree JSON file, or a Python `module:attribute` (a Tree or a function returning one).
    Warnings (a skill that breaks the spec, an unknown config key) are logged."""
    path = Path(source)
    warnings: list[str] = []
    if path.is_dir():
        from .skill import folder as skill

        tree, warnings = skill.load(path)
    elif path.is_file() and mcp_config.looks_like_config(path):
        from . import mcp_tools

        tree, warnings = mcp_tools.load(path, **config_options)
    else:
        tree = _tree_file_or_module(source, path)
    for warning in warnings:
        log.warning("%s", warning)
    return tree


def _tree_file_or_module(source: str, path: Path) -> Tree:
    if path.is_file():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise SourceError(f"{path}: cannot read: {exc.strerror}") from None
        except ValueError as exc:
            raise SourceError(f"{path}: invalid JSON: {exc}") from None
        if not isinstance(data, dict):
            raise SourceError(f"{path}: expected a JSON object (a tree or an MCP client config)")
        problem = mcp_config.unknown_keys(data)
        if problem:
            raise SourceError(f"{path}: {problem}")
        try:
            return Tree.from_dict(data, base_dir=path.resolve().parent, file=path.resolve())
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise SourceError(f"{path}: not a valid tree: {exc}") from None
    if ":" in source and not path.exists():
        return _from_python(source)
    raise SourceError(f"{source}: no such file or folder, and not a Python module:attribute")


def _from_python(source: str) -> Tree:
    module_name, _, attr = source.partition(":")
    if "" not in sys.path and "." not in sys.path:
        sys.path.insert(0, "")
    try:
        obj = importlib.import_module(module_name)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as exc:
        raise SourceError(f"{source}: cannot import: {exc}") from None
    if callable(obj) and not isinstance(obj, Tree):
        obj = obj()
    if not isinstance(obj, Tree):
        raise SourceError(f"{source}: is a {type(obj).__name__}, not an mcp_cli Tree")
    if obj.base_dir is None:
        module_file = getattr(sys.modules.get(module_name), "__file__", None)
        obj.base_dir = Path(module_file).resolve().parent if module_file else Path.cwd()
    return obj
