"""Scripts of a skill become commands: found, filtered to entry points, and their interfaces read statically.

Python scripts are read as argparse, click or typer programs (never imported or run); one whose interface
cannot be read passes its argv through, with help from its docstring or usage text. Shell and JavaScript
scripts pass their argv through. Tests, `__init__`, files starting with `_` and helper modules (no main
guard, no top-level call) are skipped. Only files `files.walk` accepts are candidates, and they are read through
`files` (bounded, never a device or a file outside the skill).
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

from ...tree import Command, Group, Node
from . import files, read_argparse, read_click, read_typer
from .pyast import Module, kebab

# Scripts run where the caller is; they find their skill folder in SKILL_DIR and can import from it.
SKILL_ENV = {"SKILL_DIR": "{base}", "PYTHONPATH": "{base}"}
RUNNERS = {".py": "{python}", ".sh": "bash", ".bash": "bash", ".js": "node", ".mjs": "node"}
_SKIP_DIRS = {"tests", "test", "__pycache__", "node_modules", "venv", ".venv", "references", "assets"}
_SKIP_FILES = {"__init__.py", "__main__.py", "setup.py", "conftest.py"}


def _skipped(path: Path) -> bool:
    name = path.name
    return (
        name in _SKIP_FILES
        or name.startswith(("_", ".", "test_"))
        or name.endswith(("_test.py", "_tests.py"))
        or path.suffix not in RUNNERS
    )


def discover(skill_dir: Path, listing: list[Path] | None = None) -> list[Path]:
    """Candidate script files: everything runnable under scripts/ (folders become groups) and in the top folder.
    `listing` is the skill's files as `files.walk` gives them (walked here when not given)."""
    listing = files.walk(skill_dir, []) if listing is None else listing
    relative = [(p, p.relative_to(skill_dir).parts) for p in listing]
    found = sorted(p for p, parts in relative if len(parts) == 1 and not _skipped(p))
    for p, parts in sorted(relative):
        dirs = parts[1:-1]
        if parts[0] == "scripts" and len(parts) > 1 and not _skipped(p):
            if not any(d in _SKIP_DIRS or d.startswith((".", "_")) for d in dirs):
                found.append(p)
    return found


def _is_entry_point(mod: Module) -> bool:
    if mod.has_main_guard():
        return True
    functions = {n.name for n in mod.tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    for stmt in mod.tree.body:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            name = mod.dotted(stmt.value.func)
            if name in functions or name.endswith(("parse_args", "parse_known_args")) or name == "typer.run":
                return True
            if name in mod.constants or re.fullmatch(r"app|cli|main", name or ""):
                return True
        elif isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call):
            if mod.dotted(stmt.value.func).endswith(("parse_args", "parse_known_args")):
                return True
    return False


def _usage_text(mod: Module, source: str) -> str:
    """Help for a pass-through script: its docstring, or a usage string found in the source."""
    if mod.docstring.strip():
        return mod.docstring.strip()
    for name, value in mod.constants.items():
        if "usage" in name.lower() and isinstance(value, str):
            return value.strip()
    m = re.search(r"""["']{1,3}\s*([Uu]sage:[^"'\n]*(?:\n[^"']*)?)["']{1,3}""", source)
    return m.group(1).strip() if m else ""


def _comment_header(source: str) -> str:
    """The leading comment block of a shell script, without the shebang and the `#`s."""
    lines = []
    for line in source.splitlines():
        if line.startswith("#!") and not lines:
            continue
        if not line.startswith("#"):
            if lines or line.strip():
                break
            continue
        lines.append(line.lstrip("#").rstrip()[1:] if line.startswith("# ") else line.lstrip("#").rstrip())
    return "\n".join(lines).strip()


def _python_source(data: bytes, rel: str) -> str:
    """A script's source as Python reads it (its coding declaration, else UTF-8); Refused if Python could not."""
    if b"\0" in data:
        raise files.Refused(rel, "a binary file (it has NUL bytes), not Python source", "")
    try:
        encoding, problem = tokenize.detect_encoding(io.BytesIO(data).readline)[0], ""
    except SyntaxError as exc:  # not UTF-8 in its first lines, or a coding declaration Python does not know
        encoding, problem = "utf-8", exc.msg
    try:
        source = data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise files.Refused(
            rel,
            f"not valid {encoding.upper().replace('-SIG', '')} (byte 0x{data[exc.start]:02x} at offset {exc.start}), "
            "so Python cannot run it either; save it as UTF-8 or declare its encoding (`# -*- coding: latin-1 -*-`)",
            "",
        ) from None
    if problem:
        raise files.Refused(rel, f"Python cannot read it: {problem}", "")
    return source


def _read_python(skill_dir: Path, path: Path, rel: str, warnings: list[str]) -> Node | None:
    try:
        source = _python_source(files.read_bytes(skill_dir, path, files.MAX_TEXT, "a script"), rel)
        mod = Module(source, filename=rel)
    except files.Refused as exc:
        files.note(warnings, f"{exc}; skipped")
        return None
    except SyntaxError as exc:
        warnings.append(f"{rel}: syntax error at line {exc.lineno}: {exc.msg}; skipped")
        return None
    except (OSError, ValueError, RecursionError, MemoryError) as exc:
        warnings.append(f"{rel}: cannot be read ({exc}); skipped")
        return None
    if not _is_entry_point(mod):
        return None
    imported = set(mod.aliases.values())
    node = None
    for module_name, reader in (("typer", read_typer), ("click", read_click), ("argparse", read_argparse)):
        if any(i == module_name or i.startswith(module_name + ".") for i in imported):
            try:
                node, notes = reader.read(mod)
            except (AttributeError, IndexError, TypeError, ValueError, RecursionError) as exc:
                warnings.append(f"{rel}: its {module_name} interface could not be read ({exc}); passing argv through")
                node, notes = None, []
            warnings += [f"{rel}: {n}" for n in notes]
            if node is not None:
                break
    summary_doc = mod.docstring.strip().split("\n\n")[0]
    if node is None:
        return Command(
            name="",
            summary=" ".join(summary_doc.split()),
            passthrough=True,
            usage=_usage_text(mod, source),
            handler={"args": []},
        )
    if not node.summary:
        node.summary = " ".join(summary_doc.split())
    if isinstance(node, Command) and not node.description and mod.docstring.strip() != summary_doc:
        node.description = mod.docstring.strip()
    return node


def _attach_handlers(node: Node, command: list[str]) -> None:
    if isinstance(node, Group):
        for child in node.children:
            _attach_handlers(child, command)
    elif isinstance(node, Command):
        node.handler = {"kind": "subprocess", "command": command + node.handler.get("args", []), "env": dict(SKILL_ENV)}


def read_all(skill_dir: Path, warnings: list[str], listing: list[Path] | None = None) -> list[Node]:
    """One node per script, named after its file stem in kebab-case; nested script folders become groups.
    `listing` is the skill's files as `files.walk` gives them (walked here when not given)."""
    nodes: list[Node] = []
    groups: dict[tuple[str, ...], Group] = {}
    for path in discover(skill_dir, files.walk(skill_dir, warnings) if listing is None else listing):
        rel = path.relative_to(skill_dir).as_posix()
        if path.suffix == ".py":
            node = _read_python(skill_dir, path, rel, warnings)
        else:
            try:
                header = _comment_header(files.read_text(skill_dir, path, warnings, what="a script"))
            except files.Refused as exc:
                files.note(warnings, f"{exc}; skipped")
                continue
            node = Command(
                name="",
                summary=" ".join(header.split("\n\n")[0].split()),
                passthrough=True,
                usage=header,
                handler={"args": []},
            )
        if node is None:
            continue
        node.name = kebab(path.stem)
        _attach_handlers(node, [RUNNERS[path.suffix], "{base}/" + rel])
        parent_parts = path.relative_to(skill_dir).parts[1:-1] if rel.startswith("scripts/") else ()
        siblings = nodes
        for depth in range(len(parent_parts)):
            key = parent_parts[: depth + 1]
            if key not in groups:
                groups[key] = Group(name=kebab(key[-1]), summary=f"Scripts in {'/'.join(('scripts',) + key)}.")
                siblings.append(groups[key])
            siblings = groups[key].children
        if any(n.name == node.name for n in siblings):
            warnings.append(f"{rel}: another script is already named {node.name!r}; skipped")
            continue
        siblings.append(node)
    return nodes
