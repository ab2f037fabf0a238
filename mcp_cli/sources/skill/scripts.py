"""Scripts of a skill become commands: found in every folder of the skill, named, and given a way to run.

Found: `.py`, `.sh`/`.bash` and `.js`/`.mjs`/`.cjs` files in any folder of the skill except tests, virtual
environments, `node_modules`, build output and vendored code (`dist`, `build`, `vendor`, `third_party`), folders
starting with `.` or `_`, and the material an agent reads or copies rather than runs (`references`, `reference`,
`assets`, `templates`). Tests, `__init__.py`, `setup.py`, minified JavaScript and files starting with `_` are skipped.
Only files `files.walk` accepts are candidates, and they are read through `files` (bounded, never a device or a
file outside the skill). Each language's reader decides whether a file is a command at all (`read_python`,
`read_shell_js`).

Named: a script is a node named after its file stem as an upstream tool is by its name (`text.command_name`:
kebab-case, accents folded, other scripts kept: `make_report.py` -> `make-report`, `导出报告.py` -> `导出报告`);
each folder it is in becomes a group named after the folder the same way, except folders named `scripts` or `bin`,
which add no level (`scripts/pdf/merge.py` is `pdf merge`, `tools/convert.py` is `tools convert`,
`ooxml/scripts/pack.py` is `ooxml pack`). A name already taken by a folder or an earlier script (in path order) gets
its extension as a suffix (`convert-sh`), then a number, with a warning: no script is dropped.

Run: with its interpreter (`{python}` for Python, bash, node), where the caller works, with the skill folder in
`SKILL_DIR` and on `PYTHONPATH` (see `handlers.subprocess` for `dependencies`, `stdin` and `before`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...handlers.subprocess import STDIN_FLAG
from ...refs import SubprocessRef
from ...text import command_name
from ...tree import Command, Group, Node, Param
from . import files as files
from . import read_python, read_shell_js

# Scripts run where the caller is; they find their skill folder in SKILL_DIR and can import from it.
SKILL_ENV = {"SKILL_DIR": "{base}", "PYTHONPATH": "{base}"}
SHELL, JS = (".sh", ".bash"), (".js", ".mjs", ".cjs")  # with .py, the files that can be scripts
_SKIP_DIRS = {
    "tests",
    "test",
    "__pycache__",
    "node_modules",
    "venv",
    "site-packages",
    "dist",
    "build",
    "vendor",
    "third_party",
    "references",
    "reference",
    "assets",
    "templates",
}
_SKIP_FILES = {"__init__.py", "__main__.py", "setup.py", "conftest.py"}
_NO_LEVEL = {"scripts", "bin"}  # folders that hold scripts without naming a group
STDIN_HELP = (
    "Text written to the script's standard input; `@FILE` reads it from a file. Without it, the input is empty."
)


def _skipped(path: Path) -> bool:
    name = path.name
    return (
        name in _SKIP_FILES
        or name.startswith(("_", ".", "test_"))
        or name.endswith(("_test.py", "_tests.py", ".test.js", ".spec.js", ".min.js"))
        or path.suffix not in (".py", *SHELL, *JS)
    )


def discover(skill_dir: Path, listing: list[Path] | None = None) -> list[Path]:
    """Candidate script files in every folder of the skill but the skipped ones: those in the top folder and in
    `scripts/` first, each part in path order. `listing` is the skill's files as `files.walk` gives them."""
    listing = files.walk(skill_dir, []) if listing is None else listing
    relative = [(p, p.relative_to(skill_dir).parts) for p in listing]
    venvs = {parts[:-1] for _, parts in relative if parts[-1] == "pyvenv.cfg"}
    found = [
        (bool(_group_key(parts)), p)
        for p, parts in relative
        if not _skipped(p)
        and not any(d in _SKIP_DIRS or d.startswith((".", "_")) for d in parts[:-1])
        and not any(parts[: len(v)] == v for v in venvs)
    ]
    return [p for _, p in sorted(found)]


def _group_key(parts: tuple[str, ...]) -> tuple[str, ...]:
    """The groups a script file at `parts` (relative to the skill) is in."""
    return tuple(command_name(d) for d in parts[:-1] if d not in _NO_LEVEL)


def _folder(parts: tuple[str, ...], depth: int) -> str:
    """The folder (relative to the skill) that makes the group at `depth` of a script file at `parts`."""
    at = [i for i, d in enumerate(parts[:-1]) if d not in _NO_LEVEL][depth]
    return "/".join(parts[: at + 1])


def _read(skill_dir: Path, path: Path, rel: str, warnings: list[str]) -> tuple[Node | None, dict[str, Any]]:
    """A script's node (None: not a command, or unreadable: a warning says so) and how it runs."""
    try:
        data = files.read_bytes(skill_dir, path, files.MAX_TEXT, "a script")
        if path.suffix == ".py":
            return read_python.read(read_python.source_of(data, rel), rel, warnings)
        reader = read_shell_js.read_shell if path.suffix in SHELL else read_shell_js.read_js
        return reader(files.decode(data, rel, warnings), rel, warnings)
    except files.Refused as exc:
        files.note(warnings, f"{exc}; skipped")
    except SyntaxError as exc:
        warnings.append(f"{rel}: syntax error at line {exc.lineno}: {exc.msg}; skipped")
    except (OSError, ValueError, RecursionError, MemoryError) as exc:
        warnings.append(f"{rel}: cannot be read ({exc}); skipped")
    return None, {}


def accept_stdin(cmd: Command, warnings: list[str], where: str) -> None:
    """Let a command that reads its standard input take `--stdin TEXT|@FILE`, written to that input. `where`
    names it in a warning (when it has an option of that name already)."""
    if any(STDIN_FLAG in p.flags or p.name == "stdin" for p in cmd.params):
        warnings.append(f"{where}: reads its standard input but has its own {STDIN_FLAG}; its input stays empty")
        return
    if isinstance(cmd.handler, SubprocessRef):
        cmd.handler.stdin = True
    if cmd.passthrough:
        cmd.usage = f"{cmd.usage}\n\n{STDIN_FLAG} TEXT (taken out of the arguments): {STDIN_HELP}".strip()
    else:
        cmd.params.append(Param(name="stdin", flags=[STDIN_FLAG], metavar="TEXT", help=STDIN_HELP))


def _commands(node: Node) -> list[Command]:
    if isinstance(node, Group):
        return [c for child in node.children for c in _commands(child)]
    return [node] if isinstance(node, Command) else []


def _complete_handlers(node: Node, run: dict[str, Any], rel: str, warnings: list[str]) -> None:
    """The skill's environment, and what its reader says the script needs (`run`), on each command's handler."""
    for cmd in _commands(node):
        if isinstance(cmd.handler, SubprocessRef):
            ref = cmd.handler
            ref.env = dict(SKILL_ENV)
            ref.dependencies = list(run["dependencies"]) if "dependencies" in run else ref.dependencies
            ref.requires_python = run.get("requires_python", ref.requires_python)
            ref.broken = run.get("broken", ref.broken)
        if run.get("stdin"):
            accept_stdin(cmd, warnings, rel)


def _name_apart(siblings: list[Node], origin: dict[int, str], warnings: list[str]) -> None:
    """Give every command a name no folder group or earlier command among its siblings has (recursively)."""
    taken = {n.name for n in siblings if isinstance(n, Group) and id(n) not in origin}
    for n in siblings:
        if isinstance(n, Group) and id(n) not in origin:
            _name_apart(n.children, origin, warnings)
            continue
        name, rel = n.name, origin[id(n)]
        if name in taken:
            name = f"{n.name}-{Path(rel).suffix.lstrip('.')}"
            k = 2
            while name in taken:
                name, k = f"{n.name}-{Path(rel).suffix.lstrip('.')}-{k}", k + 1
            warnings.append(f"{rel}: another script or folder is already named {n.name!r}; this one is {name!r}")
            n.name = name
        taken.add(name)


def read_all(skill_dir: Path, warnings: list[str], listing: list[Path] | None = None) -> list[Node]:
    """One node per script (see the module's docstring for where they are found and how they are named).
    `listing` is the skill's files as `files.walk` gives them (walked here when not given)."""
    nodes: list[Node] = []
    groups: dict[tuple[str, ...], Group] = {}
    origin: dict[int, str] = {}  # id(node) -> the file it was read from
    for path in discover(skill_dir, files.walk(skill_dir, warnings) if listing is None else listing):
        rel = path.relative_to(skill_dir).as_posix()
        node, run = _read(skill_dir, path, rel, warnings)
        if node is None:
            continue
        node.name = command_name(path.stem)
        _complete_handlers(node, run, rel, warnings)
        origin[id(node)] = rel
        parts = path.relative_to(skill_dir).parts
        key, siblings = _group_key(parts), nodes
        for depth in range(len(key)):
            if key[: depth + 1] not in groups:
                groups[key[: depth + 1]] = Group(name=key[depth], summary=f"Scripts in {_folder(parts, depth)}.")
                siblings.append(groups[key[: depth + 1]])
            siblings = groups[key[: depth + 1]].children
        siblings.append(node)
    _name_apart(nodes, origin, warnings)
    return nodes
