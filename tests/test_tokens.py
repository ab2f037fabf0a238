"""Token counting offline with o200k_base, and the `mcp-cli tokens` report."""

import statistics
import subprocess
import sys

import anyio
from mcp import Client

from mcp_cli.cli import tokens
from mcp_cli.engine.runtime import Runtime
from mcp_cli.sources.loader import load
from mcp_cli.surfaces.mcp_server import build
from mcp_cli.testing import invoke
from mcp_cli.tree import Command, Tree

from .conftest import DEMO, ROOT, budget

GOLDEN = ROOT / "tests" / "golden"


# o200k_base counts: words, JSON, a command line, non-ASCII, a special token read as text, long runs.
KNOWN = {
    "": 0,
    "hello world": 2,
    "Comprehensive PDF toolkit": 4,
    '{"tools":[{"name":"list_issues"}]}': 11,
    "pdf text extract --pages 1-3": 9,
    "naïve café 東京": 5,
    "<|endoftext|>": 7,
    "a" * 1000: 125,
}


def test_known_strings():
    assert tokens.encoding().name == "o200k_base"
    assert {text: tokens.count(text) for text in KNOWN} == KNOWN


def test_counts_offline_writing_nothing_and_changing_no_environment(tmp_path):
    code = (
        "import os; from mcp_cli.cli import tokens; before = dict(os.environ); "
        "print(tokens.count('Comprehensive PDF toolkit'), os.environ == before)"
    )
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "TMPDIR": str(tmp_path),
    }
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, timeout=budget(120)
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [str(tokens.count("Comprehensive PDF toolkit")), "True"]
    assert not list(tmp_path.iterdir())  # no cache, no temporary file


def test_without_tiktoken_the_tokens_command_says_which_extra_to_install():
    code = "import sys; sys.modules['tiktoken'] = None; from mcp_cli.__main__ import main; main()"
    out = subprocess.run(
        [sys.executable, "-c", code, "tokens", str(DEMO)], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert out.returncode == 1 and "pip install 'mcp-cli-tree[tokens]'" in out.stderr
    assert "Traceback" not in out.stderr and out.stdout == ""


async def listed(tree: Tree) -> dict:
    """The one tool as a client lists it (in-process server)."""
    async with Client(build(Runtime(tree))) as client:
        return (await client.list_tools()).tools[0].model_dump(by_alias=True, exclude_none=True, mode="json")


def test_report_counts_what_a_client_would_receive():
    tree = Tree.load(DEMO)
    r = tokens.report(tree)

    def helped(*path: str) -> int:
        return tokens.count(invoke(tree, [*path, "--help"]).text())

    assert r["root_help"] == tokens.count((GOLDEN / "demo_root.txt").read_text()) == helped()
    assert r["groups"] == {
        "text": tokens.count((GOLDEN / "demo_text.txt").read_text()),
        "math": helped("math"),
        "files": helped("files"),
    }
    each = [helped(*path) for path, node in tree.walk() if isinstance(node, Command)]
    assert r["commands"] == len(each) == 7
    assert (r["command_median"], r["command_max"]) == (statistics.median(each), max(each))
    assert r["single"] == tokens.count(tokens.tool_json([anyio.run(listed, tree)]))
    static = [tokens.static_tool(path, n) for path, n in tree.walk() if isinstance(n, Command)]
    assert r["static"] == tokens.count(tokens.tool_json(static)) > r["single"]


def test_static_tool_keeps_an_upstream_schema():
    from mcp_cli.sources.mcp_tools import command

    tool = {
        "name": "list_issues",
        "description": "List issues.",
        "inputSchema": {"type": "object", "properties": {"state": {"type": "string"}}},
        "annotations": {"readOnlyHint": True},
    }
    static = tokens.static_tool(["github", "issues", "list"], command("github", tool, "list"))
    assert static == tool


def test_tokens_command_on_a_skill():
    proc = subprocess.run(
        [sys.executable, "-m", "mcp_cli", "tokens", str(ROOT / "tests/fixtures/skills/argtool")],
        capture_output=True,
        text=True,
        timeout=budget(120),
    )
    assert proc.returncode == 0, proc.stderr
    argtool = load(str(ROOT / "tests/fixtures/skills/argtool"))
    assert proc.stdout == tokens.render(tokens.report(argtool))
    notes = tokens.count(invoke(argtool, ["notes", "--help"]).text())
    assert f"  help of notes                {notes:>8,}\n" in proc.stdout
