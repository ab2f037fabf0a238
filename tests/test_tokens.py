"""Token counting offline with o200k_base, and the `mcp-cli tokens` report."""

import subprocess
import sys

from mcp_cli import tokens
from mcp_cli.tree import Tree

from .conftest import DEMO, ROOT


def test_known_strings():
    assert tokens.count("hello world") == 2
    assert tokens.count("") == 0
    assert tokens.encoding().name == "o200k_base"


def test_unpacks_the_ranks_offline_into_a_fresh_cache(tmp_path):
    code = "from mcp_cli import tokens; print(tokens.count('Comprehensive PDF toolkit'))"
    env = {"PATH": "/usr/bin:/bin", "TIKTOKEN_CACHE_DIR": str(tmp_path), "HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout) == tokens.count("Comprehensive PDF toolkit")
    assert (tmp_path / "fb374d419588a4632f3f557e76b4b70aebbca790").stat().st_size == 3613922


def test_report_counts_what_a_client_would_receive():
    tree = Tree.load(DEMO)
    r = tokens.report(tree)
    assert r["commands"] == 7
    from mcp_cli.help import group_help

    assert r["root_help"] == tokens.count(group_help("demo", tree.root, True, tree.settings.help_budget))
    assert set(r["groups"]) == {"text", "math", "files"}
    assert 0 < r["single"] < r["static"]
    assert r["command_median"] <= r["command_max"]


def test_static_tool_keeps_an_upstream_schema():
    from mcp_cli.sources.mcp_tools import command

    tool = {"name": "list_issues", "description": "List issues.", "inputSchema": {"type": "object",
            "properties": {"state": {"type": "string"}}}, "annotations": {"readOnlyHint": True}}  # fmt: skip
    static = tokens.static_tool(["github", "issues", "list"], command("github", tool, "list"))
    assert static == tool


def test_tokens_command_on_a_skill():
    proc = subprocess.run(
        [sys.executable, "-m", "mcp_cli", "tokens", str(ROOT / "tests/fixtures/skills/argtool")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "up front, one mcp-cli tool" in proc.stdout and "help of notes" in proc.stdout
