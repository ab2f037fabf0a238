"""The house: layers that import only downwards, no import cycle (lazy imports included), a small top level, the
public API `mcp_cli` exports, and the Layout table (docs/layout.md) holding every module of the package, once, in
its layer."""

import ast
import re
import subprocess
import sys

import grimp

import mcp_cli

from .conftest import ROOT

PUBLIC = [
    "CallError",
    "Command",
    "Group",
    "Param",
    "Result",
    "Runtime",
    "Settings",
    "SourceError",
    "Topic",
    "Tree",
    "__version__",
    "load",
    "testing",
]


def test_each_layer_imports_only_the_layers_below_it():
    proc = subprocess.run(["lint-imports"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:]


def test_no_module_imports_itself_back_through_others_lazy_imports_included():
    for package in ("mcp_cli", "bench"):
        graph = grimp.build_graph(package, exclude_type_checking_imports=True)
        cycles = [
            (a, b, graph.find_shortest_chain(b, a))
            for a in sorted(graph.modules)
            for b in sorted(graph.find_modules_directly_imported_by(a))
            if graph.find_shortest_chain(b, a)
        ]
        assert not cycles, cycles[0]


def test_the_top_level_holds_the_vocabulary_and_the_entry_points_only():
    top = sorted(p.name for p in (ROOT / "mcp_cli").glob("*.py"))
    assert len(top) <= 12, top


def test_the_public_api_is_pinned_and_each_name_resolves():
    assert mcp_cli.__all__ == PUBLIC
    for name in PUBLIC:
        assert getattr(mcp_cli, name) is not None
    assert mcp_cli.Runtime.__module__ == "mcp_cli.engine.runtime" and mcp_cli.testing.invoke
    assert set(PUBLIC) <= set(dir(mcp_cli))


def test_importing_mcp_cli_imports_nothing_else_until_a_name_is_used():
    code = "import sys, mcp_cli; before = set(sys.modules); mcp_cli.Tree; print(sorted(set(sys.modules) - before))"
    shown = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    loaded = eval(shown.stdout)
    assert "mcp_cli.tree" in loaded and "mcp_cli.engine.runtime" not in loaded and "mcp" not in loaded
    code = "import sys, mcp_cli; print(sorted(m for m in sys.modules if m.startswith('mcp')))"
    shown = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert shown.stdout.split() == ["['mcp_cli']"]


def test_a_runtime_imports_the_redis_extra_only_for_a_redis_store():
    code = "import sys, mcp_cli.engine.runtime, mcp_cli.engine.kept as k; print('redis' in sys.modules)"
    shown = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert shown.stdout.split() == ["False"]  # importing redis costs every server's start about 0.1 s


# -- the Layout table (docs/layout.md) ----------------------------------------------------------------------------

LAYOUT = ROOT / "docs" / "layout.md"


def layout() -> list[tuple[str, str]]:
    """(layer, module) for each row of the Layout table, in order; a bold row opens a layer."""
    rows, layer = [], ""
    for first in re.findall(r"^\| ([^|]+?) \|", LAYOUT.read_text(encoding="utf-8"), re.M):
        if first.startswith("**"):
            layer = first.strip("*")
        elif first.startswith("`"):
            rows.append((layer, first.strip("`")))
    return rows


def modules() -> set[str]:
    """The package's modules, as paths under mcp_cli/; an `__init__.py` that holds only its docstring is left out."""
    found = set()
    for path in (ROOT / "mcp_cli").rglob("*.py"):
        body = ast.parse(path.read_text(encoding="utf-8")).body
        code = [
            s
            for s in body
            if not isinstance(s, ast.Expr) and not (isinstance(s, ast.ImportFrom) and s.module == "__future__")
        ]
        if path.name != "__init__.py" or code:
            found.add(path.relative_to(ROOT / "mcp_cli").as_posix())
    return found


def dotted(module: str) -> str:
    """`engine/runtime.py` -> mcp_cli.engine.runtime; `handlers/__init__.py` -> mcp_cli.handlers."""
    parts = module.removesuffix(".py").split("/")
    return ".".join(["mcp_cli", *parts[: -1 if parts[-1] == "__init__" else None]])


def test_the_layout_table_has_one_row_per_module():
    """A module added, removed or renamed without its row in docs/layout.md following fails here."""
    listed = [module for _, module in layout()]
    assert len(listed) == len(set(listed)), [m for m in listed if listed.count(m) > 1]
    assert sorted(listed) == sorted(modules()), set(listed) ^ modules()


def test_the_layout_table_lists_layers_bottom_up():
    """A module imports only from rows of its own layer or of a layer listed above it; in the top level, from rows
    above its own."""
    rows = layout()
    layers = list(dict.fromkeys(layer for layer, _ in rows))
    where = {dotted(m): (layers.index(layer), i) for i, (layer, m) in enumerate(rows)}
    top = layers.index("the tree and its vocabulary")
    graph = grimp.build_graph("mcp_cli", exclude_type_checking_imports=True)
    wrong = []
    for module, (layer, row) in where.items():
        for imported in graph.find_modules_directly_imported_by(module):
            if imported not in where or imported == "mcp_cli":
                continue  # a package whose __init__ holds only its docstring; the root's names are imported lazily
            other_layer, other_row = where[imported]
            if other_layer > layer or (layer == other_layer == top and other_row > row):
                wrong.append(f"{module} imports {imported}")
    assert not wrong, wrong
