"""Help at root, group and command level: golden files, determinism, every way to ask, the size budget."""

import os
import subprocess
import sys

import pytest

from mcp_cli.engine.help import one_line
from mcp_cli.testing import invoke
from mcp_cli.tree import Command, Group, Param, Tree

from .conftest import DEMO, FAULTS, ROOT, budget

GOLDEN = ROOT / "tests" / "golden"
CASES = {
    "demo_root": (DEMO, ["--help"]),
    "demo_text": (DEMO, ["text", "--help"]),
    "demo_text_stats": (DEMO, ["text", "stats", "--help"]),
    "demo_files_list": (DEMO, ["files", "list", "--help"]),
    "faults_py_typed": (FAULTS, ["py", "typed", "--help"]),
    "faults_sh_echo": (FAULTS, ["sh", "echo", "--help"]),
}


NOOP = {"kind": "python", "target": "builtins:print"}  # commands here are only asked for help


@pytest.mark.parametrize("name", sorted(CASES))
def test_help_matches_golden_file(name):
    path, argv = CASES[name]
    result = invoke(Tree.load(path), argv)
    assert result.ok
    golden = GOLDEN / f"{name}.txt"
    if os.environ.get("UPDATE_GOLDEN"):
        golden.write_text(result.output, encoding="utf-8")
    assert result.output == golden.read_text(encoding="utf-8")


@pytest.mark.parametrize("argv", [[], ["--help"], ["-h"]])
def test_root_help_three_ways(argv):
    assert invoke(Tree.load(DEMO), argv).output == (GOLDEN / "demo_root.txt").read_text()


@pytest.mark.parametrize("argv", [["text"], ["text", "-h"], ["text", "--help"]])
def test_group_help_three_ways(argv):
    assert invoke(Tree.load(DEMO), argv).output == (GOLDEN / "demo_text.txt").read_text()


def test_help_is_deterministic_across_round_trips():
    tree = Tree.load(DEMO)
    again = Tree.from_dict(tree.to_dict(), base_dir=tree.base_dir)
    for _, argv in CASES.values():
        assert invoke(tree, argv).output == invoke(again, argv).output


# Prints a source's tree JSON, then the help of every group and command in it.
SNAPSHOT = """
import sys
from mcp_cli import Command, Group, load
from mcp_cli.testing import invoke
tree = load(sys.argv[1])
print(tree.to_json())
for path, node in [([], tree.root), *tree.walk()]:
    if isinstance(node, (Group, Command)):
        print(invoke(tree, [*path, "--help"]).output)
"""


@pytest.mark.parametrize("source", [DEMO, ROOT / "skills" / "pdf", ROOT / "tests/fixtures/skills/clicktool"])
def test_help_and_tree_json_are_the_same_bytes_under_other_hash_seeds(source):
    def snapshot(seed: str) -> str:
        env = {**os.environ, "PYTHONHASHSEED": seed}
        proc = subprocess.run(
            [sys.executable, "-c", SNAPSHOT, str(source)],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=budget(120),
        )
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    first = snapshot("1")
    assert "Usage:" in first and '"format": "mcp-cli/tree"' in first
    assert snapshot("2") == first


def test_help_after_other_tokens_still_shows_help():
    out = invoke(Tree.load(DEMO), ["math", "add", "1", "--help"]).output
    assert out.startswith("Usage:\n  demo math add ") and "\nAdd two integers.\n" in out


def test_listing_over_budget_keeps_every_name_and_says_so():
    commands = [
        Command(f"command-{i:03d}", summary=f"Does thing number {i} with some detail.", handler=NOOP)
        for i in range(120)
    ]
    tree = Tree(Group("big", summary="Many commands.", children=commands))
    tree.settings.help_budget = 1500
    out = invoke(tree, ["--help"]).output
    assert "summaries left out to fit" in out
    assert all(f"command-{i:03d}" in out for i in range(120))
    assert len(out) < 2 * 1500


def test_one_line_takes_the_first_sentence():
    assert one_line("Extract text. Then more.\nAnd more.") == "Extract text."
    assert one_line("First paragraph\ncontinues here.\n\nSecond.") == "First paragraph continues here."
    assert len(one_line("word " * 100)) <= 90
    assert one_line("Find files (e.g. by name). Then more.") == "Find files (e.g. by name)."  # no end inside brackets
    assert one_line("Use a filter, e.g. open issues. Then more.") == "Use a filter, e.g. open issues."


@pytest.mark.parametrize(
    "text",
    [
        "List the issues of a repository (open, closed or all of them; see the state option) with their labels"
        " and more",
        "List the issues of a repository with `gh issue list --state open --json number,title,labels` for the owner",
        "Search the code of every repository the caller can read for a phrase, a symbol or a regular expression"
        " pattern",
        "Returns: a list of (name, size) pairs for each file found in the folder given, sorted by name, then by size",
    ],
)
def test_a_summary_is_cut_between_words_outside_brackets_with_an_ellipsis(text):
    cut = one_line(text, 80)
    assert len(cut) <= 80 and cut.endswith("...") and not cut.endswith(",...")
    kept = cut[:-3]
    assert text.startswith(kept) and text[len(kept)] == " "  # a whole word ends where the cut is
    assert kept.count("(") == kept.count(")") and kept.count("`") % 2 == 0


def test_long_command_help_is_cut_with_a_pointer_to_help_all():
    long = "A sentence that says what this option does. " + "More detail that costs tokens. " * 20
    cmd = Command(
        "go",
        summary="Go somewhere.",
        handler=NOOP,
        params=[Param(f"opt{i}", flags=[f"--opt{i}"], help=long) for i in range(6)],
    )
    tree = Tree(Group("t", children=[cmd]))
    tree.settings.help_budget = 1200
    short = invoke(tree, ["go", "--help"]).output
    assert "More detail" not in short and "A sentence that says what this option does." in short
    assert "`t go --help-all` shows them whole" in short
    full = invoke(tree, ["go", "--help-all"]).output
    assert full.count("More detail that costs tokens.") == 6 * 20


def test_long_topic_lists_its_sections_and_shows_one():
    from mcp_cli.tree import Topic

    text = "# Guide\n\nIntro line.\n\n" + "".join(
        f"## Part {i}\n\n" + f"Body of part {i}. " * 40 + "\n\n" for i in range(1, 4)
    )
    tree = Tree(Group("t", children=[Group("docs", children=[Topic("guide", summary="A guide.", text=text)])]))
    tree.settings.help_budget = 1000
    listing = invoke(tree, ["docs", "guide"]).output
    assert "Intro line." in listing and "Sections (" in listing and "part-2" in listing
    assert "Body of part 2" not in listing
    section = invoke(tree, ["docs", "guide", "part-2"]).output
    assert section.startswith("## Part 2") and "Body of part 3" not in section
    missing = invoke(tree, ["docs", "guide", "part-9"])
    assert not missing.ok and "Did you mean" in missing.message


def test_defaults_shown_when_they_say_something():
    params = [
        Param(name="limit", flags=["--limit"], type="integer", default=0),
        Param(name="prefix", flags=["--prefix"], default=""),
        Param(name="tags", flags=["--tags"], action="append", default=[]),
    ]
    tree = Tree(root=Group(name="t", children=[Command(name="c", params=params, handler=NOOP)]))
    out = invoke(tree, ["c", "--help"]).output
    assert "--limit INT    (default: 0)" in out
    assert "default: )" not in out and "default: []" not in out


def _wrapped(tools):
    from mcp_cli.sources.mcp_config import Server
    from mcp_cli.sources.mcp_tools import build

    return build("tools", [Server("hub", {"command": "unused"})], {"hub": {"tools": tools}}, threshold=2)


def test_help_says_each_thing_once():
    schema = {
        "type": "object",
        "properties": {
            "owner": {"type": "string", "description": "Repository owner"},
            "state": {"type": "string", "description": "Filter by state"},
        },
        "required": ["owner"],
    }
    long = "List the issues of a repository, open or closed, with their labels, assignees and milestones, newest first."
    tree = _wrapped(
        [
            {"name": "list_issues", "description": f"{long} Pages of 30.\n\nNeeds read access.", "inputSchema": schema},
            {"name": "get_issue", "description": "Get an issue. By number.", "inputSchema": schema},
            {"name": "create_issue", "description": "Create an issue.", "inputSchema": schema},
            {"name": "get_me", "description": "Get the caller."},
        ]
    )
    cmd = invoke(tree, ["hub", "issues", "list", "--help"]).output
    assert cmd.startswith("Usage:\n  tools hub issues list --owner TEXT [options]\n\n")  # usage first, as click does
    assert f"\n\n{long}\n\n" in cmd  # the first sentence whole, said once
    assert cmd.count("newest first") == 1 and "Pages of 30.\n\nNeeds read access." in cmd  # the rest kept
    assert "tools hub issues list --owner TEXT [options]\n" in cmd  # required in usage, the others folded
    assert "\n  --owner TEXT  Repository owner\n" in cmd and "required" not in cmd
    assert "--json" not in cmd  # every wrapped tool takes it: root help says so, once
    assert "By number." in invoke(tree, ["hub", "issues", "get", "--help"]).output
    group = invoke(tree, ["hub", "issues", "--help"]).output
    assert group.startswith("tools hub issues\n")  # its summary only names the commands listed below
    both = [Group(name, children=[Command("get", handler=NOOP)]) for name in ("issues", "pulls")]
    topics = Tree(Group("t", children=[Group("d", summary="Issues, pulls.", children=both)]))
    assert invoke(topics, ["d", "--help"]).output.startswith("t d\n")  # `Issues` names the group `issues`
    assert "Run `" not in group and "Run `" not in invoke(tree, ["hub", "--help"]).output
    root = invoke(tree, ["--help"]).output
    assert root.rstrip().endswith(
        "Run `tools <name> --help` for more. Options may also come as one `--json` object (or @FILE)."
    )
    assert "--json" not in invoke(Tree.load(DEMO), ["--help"]).output  # no command there takes it


def test_a_long_name_keeps_its_summary_on_its_row():
    long = Command("a-name-longer-than-the-column-is", summary="B.", handler=NOOP)
    tree = Tree(Group("t", children=[Command("short", summary="A.", handler=NOOP), long]))
    assert "\n  a-name-longer-than-the-column-is  B.\n" in invoke(tree, ["--help"]).output


def test_a_listing_is_rendered_once_a_tree_and_anew_for_a_new_tree(monkeypatch):
    import anyio

    from mcp_cli.engine import help as helptext
    from mcp_cli.engine.runtime import Runtime

    rendered = []
    real = helptext.group_help

    def counted(prog, group, is_root, budget):
        rendered.append(group.name)
        return real(prog, group, is_root, budget)

    monkeypatch.setattr(helptext, "group_help", counted)
    tree = Tree.load(DEMO)
    runtime = Runtime(tree)
    first = anyio.run(runtime.call, ["--help"]).text()
    again = [anyio.run(runtime.call, argv) for argv in (["--help"], [], ["-h"], ["no-such-domain"])]
    assert [r.text() for r in again[:3]] == [first] * 3 and first in again[3].text()  # the error shows the listing
    assert rendered == [tree.name]  # one rendering served them all
    renamed = Tree.load(DEMO)
    renamed.root.children = renamed.root.children[:1]
    runtime.adopt(renamed)
    assert anyio.run(runtime.call, ["--help"]).text() != first and rendered == [tree.name] * 2
