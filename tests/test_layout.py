"""The house: layers that import only downwards, no import cycle (lazy imports included), a small top level, and
the public API `mcp_cli` exports."""

import subprocess
import sys

import grimp

import mcp_cli

from .conftest import ROOT

PUBLIC = ["CallError", "Command", "Group", "Param", "Result", "Runtime", "Settings", "SourceError", "Topic", "Tree",
          "__version__", "load", "testing"]  # fmt: skip


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
