"""A Python file of a skill as a command: whether it is one, its interface, how it runs.

A file is a command when running it does something: a main guard, or any module-level statement beyond imports,
definitions, assignments, docstrings and set-up calls (`sys.path.insert`, `logging.basicConfig`), so a plain
`sys.argv` script counts. One that says it is not meant to be run directly, and reads no arguments, is hidden
with a warning. Its interface is read as argparse, click or typer (never imported or run); one that cannot be read
passes its argv through, with help from its docstring, a usage string or its leading comments.

How it runs: inline script metadata (PEP 723, `# /// script`) gives its dependencies and Python versions (see
`handlers.subprocess`: this Python when it has them, else `uv run --script`); a file with more than one such block
is broken (PEP 723), said when it is built and when it is called; a
module with relative imports runs as `python -m package.module`; reading `sys.stdin`, `input()` or an argparse
`FileType`/click `File` (which take `-`) means it reads its standard input.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from typing import Any

from ...compat import toml_loads
from ...refs import SubprocessRef
from ...tree import Command, Node
from . import files as files
from . import read_argparse, read_click, read_typer, usage
from .pyast import Module

# Module-level calls that prepare a library rather than run a program.
_SET_UP = (
    "sys.path.",
    "sys.setrecursionlimit",
    "sys.stdout.reconfigure",
    "sys.stderr.reconfigure",
    "logging.",
    "warnings.",
    "os.environ",
    "locale.",
    "load_dotenv",
    "dotenv.",
    "matplotlib.use",
    "mpl.use",
)
_SELF_TEST = ("doctest.", "unittest.", "pytest.")  # a main guard that only tests the module
_ARGS = ("sys.argv", "parse_args", "parse_known_args")
_STDIN = ("sys.stdin", "sys.__stdin__", "typer.FileText", "typer.FileBinaryRead")
# PEP 723 (the reference implementation's expression)
_METADATA = re.compile(r"(?m)^# /// (?P<type>[a-zA-Z0-9-]+)$\s(?P<content>(^#(| .*)$\s)+)^# ///$")
_BLOCK_START = re.compile(r"(?m)^# /// script[ \t]*$")


def source_of(data: bytes, rel: str) -> str:
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


def _runs(mod: Module, stmt: ast.stmt, functions: set[str], variables: set[str]) -> bool:
    """Whether a module-level statement does a program's work: not a definition, a constant, a set-up call, or a
    call that fills the module's own objects (`REGISTRY.update(...)`, `cli.add_command(...)`)."""
    if isinstance(stmt, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Pass)):
        return False
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):  # a docstring, `...`
        return False
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        func = stmt.value.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in variables:
            return func.attr.endswith(_ARGS)
        return not mod.dotted(func).startswith(_SET_UP)
    if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):  # runs when it reads argv or calls the program
        names = {mod.dotted(n.func) for n in ast.walk(stmt) if isinstance(n, ast.Call)}
        names |= {mod.dotted(n) for n in ast.walk(stmt) if isinstance(n, ast.Attribute)}
        return bool(names & functions) or any(n.endswith(_ARGS) or n in ("input", "sys.stdin.read") for n in names)
    if isinstance(stmt, ast.If):  # `if TYPE_CHECKING:`, a version check: a program only if a branch does work
        return any(_runs(mod, s, functions, variables) for s in stmt.body + stmt.orelse)
    if isinstance(stmt, ast.Try):  # `try: import x` / `except ImportError: x = None`; handlers run only on failure
        return any(_runs(mod, s, functions, variables) for s in stmt.body + stmt.orelse + stmt.finalbody)
    return True  # a loop, a `with`, `raise SystemExit(main())`, ...


def is_entry_point(mod: Module) -> bool:
    """A module that does something when run: a main guard that does more than test the module, or module-level
    work (see `_runs`)."""
    if mod.has_main_guard():
        return not all(name.startswith(_SELF_TEST) for name in mod.main_calls())
    body = mod.tree.body
    functions = {n.name for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    targets = [t for n in body if isinstance(n, ast.Assign) for t in n.targets]
    targets += [n.target for n in body if isinstance(n, ast.AnnAssign)]
    variables = {t.id for t in targets if isinstance(t, ast.Name)}
    return any(_runs(mod, s, functions, variables) for s in body)


def says_not_run(mod: Module, source: str) -> bool:
    """Its docstring, leading comments or main guard say it is not meant to be run directly."""
    guard = [n for n in mod.tree.body if isinstance(n, ast.If) and "__main__" in ast.unparse(n.test)]
    said = [n.value for g in guard for n in ast.walk(g) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    return any(usage.NOT_RUN.search(t) for t in (mod.docstring, usage.comments(source, "#"), *said))


def reads_stdin(mod: Module) -> bool:
    """It reads `sys.stdin`, calls `input()`, or takes a file argument that may be `-` (argparse `FileType`, click
    `File`, typer `FileText`, opened for reading)."""
    for node in ast.walk(mod.tree):
        if isinstance(node, (ast.Attribute, ast.Name)) and mod.dotted(node) in _STDIN:
            return True
        if isinstance(node, ast.Call):
            name = mod.dotted(node.func)
            first = mod.literal(node.args[0] if node.args else mod.kwargs(node).get("mode", ast.Constant("r")))
            if name in ("input", "fileinput.input") or (name, first) == ("click.get_text_stream", "stdin"):
                return True
            if name in ("argparse.FileType", "click.File") and isinstance(first, str) and "r" in first:
                return True
    return False


def inline_metadata(source: str, rel: str, warnings: list[str]) -> dict[str, Any] | None:
    """The script's inline metadata (PEP 723 `# /// script` block), or None; a block that is not TOML is a
    warning. More than one block is an error under PEP 723 (uv refuses such a script): then the metadata is only
    `{"broken": why}`, with a warning naming the file."""
    if len(_BLOCK_START.findall(source)) > 1:
        why = "it has more than one `# /// script` block, which PEP 723 forbids and uv refuses; keep one"
        warnings.append(f"{rel}: a broken script: {why}")
        return {"broken": why}
    blocks = [m for m in _METADATA.finditer(source) if m.group("type") == "script"]
    if not blocks:
        return None
    lines = blocks[0].group("content").splitlines(keepends=True)
    text = "".join(line[2:] if line.startswith("# ") else line[1:] for line in lines)
    try:
        data = toml_loads(text)
    except ValueError as exc:  # TOMLDecodeError
        warnings.append(f"{rel}: its `# /// script` metadata is not valid TOML ({exc}); it runs as a plain script")
        return None
    deps = data.get("dependencies", [])
    if not isinstance(deps, list) or not all(isinstance(d, str) for d in deps):
        warnings.append(f"{rel}: `dependencies` in its `# /// script` metadata must be a list of strings; ignored")
        data["dependencies"] = []
    return data


def _module_name(mod: Module, rel: str) -> str:
    """`tools.convert` for tools/convert.py when it imports relatively (`from .util import x`), else ''."""
    relative = any(isinstance(n, ast.ImportFrom) and n.level for n in ast.walk(mod.tree))
    parts = rel.removesuffix(".py").split("/")
    return ".".join(parts) if relative and all(p.isidentifier() for p in parts) else ""


def read(source: str, rel: str, warnings: list[str]) -> tuple[Node | None, dict[str, Any]]:
    """A Python file of a skill (at `rel` in it), from its source: its node (None: not a command), whose commands
    run the file (with `-m` when it imports relatively), and what else its handlers need (`stdin`: it reads its
    standard input; `dependencies`: its inline metadata's). A hidden file is a warning naming it. Raises
    SyntaxError when it is not Python."""
    mod = Module(source, filename=rel)
    if not is_entry_point(mod):
        return None, {}
    run: dict[str, Any] = {"stdin": reads_stdin(mod)}
    metadata = inline_metadata(source, rel, warnings)
    if metadata is not None and "broken" in metadata:
        run["broken"] = metadata["broken"]
    elif metadata is not None:  # a single-file script: this Python, or `uv run --script`, runs the file
        run["dependencies"] = metadata.get("dependencies", [])
        if isinstance(metadata.get("requires-python"), str):
            run["requires_python"] = metadata["requires-python"]
    module = "" if metadata is not None else _module_name(mod, rel)
    launch = ["{python}", "-m", module] if module else ["{python}", "{base}/" + rel]
    node = None
    for module_name, reader in (("typer", read_typer), ("click", read_click), ("argparse", read_argparse)):
        if any(i == module_name or i.startswith(module_name + ".") for i in mod.aliases.values()):
            try:
                node, notes = reader.read(mod, launch)
            except (AttributeError, IndexError, TypeError, ValueError, RecursionError) as exc:
                node, notes = None, [f"its {module_name} interface could not be read ({exc}); passing argv through"]
            warnings += [f"{rel}: {n}" for n in notes]
            if node is not None:
                break
    if node is None and says_not_run(mod, source):
        warnings.append(f"{rel}: says it is not meant to be run directly; not a command")
        return None, {}
    summary_doc = " ".join(mod.docstring.strip().split("\n\n")[0].split())
    if node is None:
        help_text = _usage_text(mod, source)
        node = Command(name="", passthrough=True, usage=help_text, handler=SubprocessRef(command=launch))
        summary_doc = summary_doc or usage.summary(help_text)
    node.summary = node.summary or summary_doc
    if isinstance(node, Command) and not node.description and mod.docstring.strip().count("\n\n"):
        node.description = mod.docstring.strip()
    return node, run


def _usage_text(mod: Module, source: str) -> str:
    """Help for a pass-through script: its docstring, a usage string found in the source, or its leading comments."""
    if mod.docstring.strip():
        return mod.docstring.strip()
    for name, value in mod.constants.items():
        if "usage" in name.lower() and isinstance(value, str):
            return value.strip()
    m = re.search(r"""["']{1,3}\s*([Uu]sage:[^"'\n]*(?:\n[^"']*)?)["']{1,3}""", source)
    return m.group(1).strip() if m else usage.comments(source, "#")
