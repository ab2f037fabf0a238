"""The serving runtime a built package carries, so that it installs from the package registries alone.

The modules are found, not listed: starting from `mcp_cli/surfaces/launcher.py`, every relative import in the syntax
tree (lazy ones inside functions too) is followed, with the `__init__.py` of each package on the way. They are copied
byte for byte, but for the copy's own `__init__.py`, which holds the version of mcp-cli it came from (mcp_cli's
re-exports the public API, which serving does not need).

Their imports from outside mcp_cli and the standard library become the package's dependencies, with the version
ranges mcp-cli itself declares; an import inside `try: ... except ImportError` is optional (an extra's) and becomes
none, as does one under `if TYPE_CHECKING:` (for type checkers only).
"""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import mcp_cli

ENTRY = "surfaces.launcher"
DISTRIBUTION = "mcp-cli-tree"
# What the `mcp-cli` command needs and a served tree never should (import names).
FORBIDDEN = frozenset({"typer", "jinja2", "yaml", "tiktoken"})


class VendorError(RuntimeError):
    """The runtime a build would copy is not self-contained (a bug in mcp-cli, not in the skill)."""


@dataclass
class Runtime:
    """Modules to copy (paths relative to the mcp_cli folder `root`, posix, sorted) and the requirements they need."""

    root: Path
    files: list[str]
    packages: list[str]  # dotted subpackages below the copy's root ("handlers")
    requirements: list[str]


def collect(root: Path | None = None) -> Runtime:
    """The runtime closure of the mcp_cli package at `root` (default: the one running)."""
    root = root or Path(mcp_cli.__file__).resolve().parent
    modules, external = _closure(root)
    blocked = sorted(FORBIDDEN & external.keys())
    if blocked:
        where = ", ".join(f"{name} (imported by {external[name]})" for name in blocked)
        raise VendorError(f"the serving runtime must not import {where}; make that import lazy or move it out")
    files = sorted(_file(root, m).relative_to(root).as_posix() for m in modules)
    packages = sorted(m for m in modules if m and _file(root, m).name == "__init__.py")
    return Runtime(root, files, packages, _requirements(root, external))


def copy(runtime: Runtime, dest: Path) -> None:
    """Copy the runtime's files, byte for byte, into `dest`; its `__init__.py` says which mcp-cli it is."""
    for rel in runtime.files:
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(stamp() if rel == "__init__.py" else (runtime.root / rel).read_bytes())


def stamp() -> bytes:
    """The copy's `__init__.py`: the version of mcp-cli whose runtime it is."""
    version = mcp_cli.__version__
    return (
        f'"""The serving runtime of mcp-cli {version}, copied by its build."""\n\n__version__ = "{version}"\n'.encode()
    )


def _file(root: Path, module: str) -> Path:
    """`handlers.base` -> root/handlers/base.py; `handlers` -> root/handlers/__init__.py; `` -> root/__init__.py."""
    base = root.joinpath(*module.split(".")) if module else root
    if (base / "__init__.py").is_file():
        return base / "__init__.py"
    return base.with_suffix(".py")


def _exists(root: Path, module: str) -> bool:
    return _file(root, module).is_file()


def _closure(root: Path) -> tuple[set[str], dict[str, str]]:
    """Module names (dotted, relative to mcp_cli; "" is mcp_cli itself) reachable from the entry module, and the
    top-level names they import from outside, each with the first module that imports it."""
    seen: set[str] = set()
    external: dict[str, str] = {}
    todo = [ENTRY]
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        if not _exists(root, module):
            raise VendorError(f"the serving runtime imports mcp_cli.{module}, which does not exist")
        seen.add(module)
        if not module:  # mcp_cli's own __init__ is not copied (see `copy`)
            continue
        parts = module.split(".")
        todo.extend(".".join(parts[:i]) for i in range(len(parts)))  # the packages it lives in
        path = _file(root, module)
        package = parts if path.name == "__init__.py" else parts[:-1]
        tree = ast.parse(path.read_bytes(), filename=str(path))
        optional = {
            id(n)
            for t in ast.walk(tree)
            if isinstance(t, ast.Try) and _catches_import_error(t)
            for s in t.body
            for n in ast.walk(s)
        }
        optional |= {
            id(n)
            for t in ast.walk(tree)
            if isinstance(t, ast.If) and _type_checking(t.test)
            for s in t.body
            for n in ast.walk(s)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level:
                if node.level - 1 > len(package):
                    raise VendorError(f"{path}: a relative import climbs out of mcp_cli")
                base = package[: len(package) - (node.level - 1)] + (node.module.split(".") if node.module else [])
                target = ".".join(base)
                todo.append(target)
                for alias in node.names:  # `from . import help` imports a module, `from .tree import Tree` does not
                    if _exists(root, ".".join([*base, alias.name])):
                        todo.append(".".join([*base, alias.name]))
            elif isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in optional:
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                for name in names:
                    top = name.split(".")[0]
                    if top == "mcp_cli":
                        raise VendorError(f"{path}: `import {name}` must be relative to be copied into a package")
                    if top not in sys.stdlib_module_names and top != "__future__":
                        external.setdefault(top, f"mcp_cli.{module}" if module else "mcp_cli")
    return seen, external


def _type_checking(test: ast.expr) -> bool:
    """Whether an `if` is `if TYPE_CHECKING:`: the imports in its body are for type checkers, never run."""
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _catches_import_error(node: ast.Try) -> bool:
    """Whether a `try` catches ImportError: the imports in its body are optional (an extra's), not requirements."""
    caught = [h.type for h in node.handlers]
    names = {n.id for t in caught if t is not None for n in ast.walk(t) if isinstance(n, ast.Name)}
    return bool(names & {"ImportError", "ModuleNotFoundError"})


_REQUIREMENT = re.compile(
    r"\s*(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\s*(?P<extras>\[[^\]]*\])?(?P<spec>[^;]*)(;(?P<marker>.*))?$"
)


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _canonical(match: re.Match[str]) -> str:
    """One spelling whether read from pyproject.toml (`mcp>=2.3,<3`) or from metadata (`mcp<3,>=2.3`), so a build
    from a checkout and one from an installed mcp-cli give the same bytes."""
    spec = ",".join(sorted(s for s in re.sub(r"\s+", "", match["spec"]).split(",") if s))
    marker = " ".join((match["marker"] or "").replace("'", '"').split())
    return f"{match['name']}{match['extras'] or ''}{spec}" + (f"; {marker}" if marker else "")


def _requirements(root: Path, external: dict[str, str]) -> list[str]:
    """The requirement mcp-cli declares for each imported top-level name, in name order."""
    declared: dict[str, str] = {}
    for requirement in _declared(root):
        match = _REQUIREMENT.match(requirement)
        if match and "extra" not in (match["marker"] or ""):
            declared[_normal(match["name"])] = _canonical(match)
    chosen: set[str] = set()
    for name in sorted(external):
        dists = [_normal(name)]
        if dists[0] not in declared:
            from importlib.metadata import packages_distributions

            dists = [_normal(d) for d in packages_distributions().get(name, [])]
        found = [d for d in dists if d in declared]
        if not found:
            raise VendorError(
                f"the serving runtime imports {name} ({external[name]}), which {DISTRIBUTION} does not declare"
            )
        chosen.add(found[0])
    return [declared[d] for d in sorted(chosen)]


def _declared(root: Path) -> list[str]:
    """mcp-cli's own requirements: from the checkout's pyproject.toml when running from one, else its metadata."""
    pyproject = root.parent / "pyproject.toml"
    if pyproject.is_file():
        if sys.version_info >= (3, 11):
            import tomllib
        else:  # pragma: no cover
            import tomli as tomllib
        project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
        if project.get("name") == DISTRIBUTION:
            return list(project.get("dependencies", []))
    from importlib.metadata import requires

    return list(requires(DISTRIBUTION) or [])
