"""Skill folders become trees: SKILL.md checks, scripts read statically, docs topics, the manifest."""

import subprocess
import sys

import pytest

from mcp_cli.errors import SourceError
from mcp_cli.sources.skill.folder import load
from mcp_cli.testing import node
from mcp_cli.tree import Command, Group, Topic

from .conftest import ROOT, budget
from .skills import write_skill

SKILLS = ROOT / "tests" / "fixtures" / "skills"


def params(cmd: Command) -> dict:
    return {p.name: p for p in cmd.params}


def test_argparse_skill_shape_and_warnings():
    tree, warnings = load(SKILLS / "argtool")
    assert tree.name == "argtool"
    assert tree.root.summary.startswith("Manage notes in a small archive.")
    paths = [" ".join(p) for p, _ in tree.walk()]
    assert paths == [
        "count",
        "notes",
        "notes add",
        "notes find",
        "notes export",
        "raw-echo",
        "docs",
        "docs skill",
        "docs guide",
        "docs faq",
    ]
    assert "helpers" not in paths and "test-notes" not in paths  # helper module and test file skipped
    assert any("unknown frontmatter field(s) color" in w for w in warnings)
    assert any("references/missing.md" in w for w in warnings)


def test_argparse_parameters_are_read_statically():
    tree, _ = load(SKILLS / "argtool")
    add = params(node(tree, "notes add"))
    assert add["title"].positional and add["title"].required
    assert add["tag"].flags == ["--tag", "-t"] and add["tag"].action == "append"
    assert (add["priority"].type, add["priority"].choices, add["priority"].default) == ("integer", [1, 2, 3, 4, 5], 3)
    assert add["priority"].help == "Priority (default 3)."
    assert add["pinned"].action == "store_true"
    find = node(tree, "notes find")
    assert [(e.params, e.required) for e in find.exclusive] == [(["title", "regex"], True)]
    assert params(find)["format"].choices == ["json", "csv"]  # a module-level constant
    export = node(tree, "notes export")
    assert export.aliases == ["dump"]
    assert params(export)["paths"].nargs == "+"
    assert params(export)["ratio"].type == "number"
    assert params(export)["verbose"].action == "count"
    assert node(tree, "notes export").handler.command[-1] == "export"


def test_passthrough_scripts_get_help_from_docstring_or_comments():
    tree, _ = load(SKILLS / "argtool")
    raw, count = node(tree, "raw-echo"), node(tree, "count")
    assert raw.passthrough and raw.summary == "Echo the raw arguments, one per line."
    assert "Usage: argtool raw-echo" in raw.usage
    assert count.passthrough and count.summary == "Count the arguments given."
    assert count.handler.command[0] == "bash"


def test_click_skill():
    tree, _ = load(SKILLS / "clicktool")
    assert [" ".join(p) for p, _ in tree.walk()][:5] == [
        "images",
        "images convert",
        "images meta",
        "images meta show",
        "images info",
    ]
    conv = params(node(tree, "images convert"))
    assert (conv["sources"].nargs, conv["sources"].required) == ("+", True)
    assert (conv["fmt"].flags, conv["fmt"].choices, conv["fmt"].default) == (["--to"], ["png", "jpeg", "webp"], "png")
    assert conv["quality"].type == "integer" and conv["quality"].flags == ["--quality", "-q"]
    assert conv["tag"].action == "append"
    assert conv["overwrite"].action == "negatable"
    assert conv["dry_run"].action == "store_true"
    assert conv["verbose"].action == "count"
    assert "Reads every SOURCE" in node(tree, "images convert").description
    show = node(tree, "images meta show")
    assert show.handler.command[-2:] == ["meta", "show"]
    assert (params(show)["path"].type, params(show)["scale"].type) == ("path", "number")
    assert node(tree, "images info").handler.command[-1] == "info"


def test_typer_skill():
    tree, _ = load(SKILLS / "typertool")
    assert [" ".join(p) for p, _ in tree.walk()][:5] == [
        "remind",
        "remind add",
        "remind list",
        "remind config",
        "remind config set",
    ]
    add = params(node(tree, "remind add"))
    assert add["text"].positional and add["text"].required
    assert (add["when"].flags, add["when"].default) == (["--when", "-w"], "tomorrow")
    assert (add["channel"].choices, add["channel"].default) == (["email", "sms"], "email")
    assert (add["repeat"].type, add["repeat"].default) == ("integer", 1)
    assert add["urgent"].action == "negatable"
    assert (add["tags"].flags, add["tags"].action) == (["--tag"], "append")
    lst = node(tree, "remind list")
    assert lst.handler.command[-1] == "list"
    assert params(lst)["out"].type == "path"
    cfg = node(tree, "remind config set")
    assert cfg.handler.command[-2:] == ["config", "set"]
    assert params(cfg)["force"].action == "store_true"


def test_docs_topics_resolve_links_case_insensitively():
    tree, _ = load(SKILLS / "argtool")
    docs = node(tree, "docs")
    assert isinstance(docs, Group) and all(isinstance(t, Topic) for t in docs.children)
    assert node(tree, "docs guide").text.startswith("# The argtool guide")  # linked as References/GUIDE.md
    assert node(tree, "docs faq").summary == "Frequently asked questions"  # linked as FAQ.md#top
    assert "Add notes with" in node(tree, "docs skill").text


def test_manifest_reshapes_the_tree(tmp_path):
    import shutil

    skill = tmp_path / "argtool"
    shutil.copytree(SKILLS / "argtool", skill)
    (skill / "mcp-cli.yaml").write_text(
        "summary: Notes, reshaped.\n"
        "docs: guides\n"
        "steps:\n"
        "  - move: {from: notes add, to: write note}\n"
        "  - move: {from: raw-echo, to: echo}\n"
        "  - hide: count\n"
        "  - flatten: notes\n"
        "  - summary: {write: Writing notes.}\n"
        "  - order: [guides, write]\n"
        "  - hide: no-such-node\n"
        "  - colour: red\n"
    )
    tree, warnings = load(skill)
    assert tree.root.summary == "Notes, reshaped."
    assert [" ".join(p) for p, _ in tree.walk()] == [
        "guides",
        "guides skill",
        "guides guide",
        "guides faq",
        "write",
        "write note",
        "find",
        "export",
        "echo",
    ]
    assert node(tree, "write").summary == "Writing notes."
    assert node(tree, "write note").handler.command[-1] == "add"
    assert any("step 7 (hide): no node at 'no-such-node'" in w for w in warnings)
    assert any("step 8 (colour)" in w for w in warnings)


def test_syntax_error_is_a_warning_and_the_rest_builds():
    tree, warnings = load(SKILLS / "broken" / "syntax-error")
    assert any("scripts/bad.py: syntax error at line 3" in w for w in warnings)
    assert any("name 'Syntax_Error' breaks the spec" in w for w in warnings)
    assert tree.name == "syntax-error"
    assert [p for p, _ in tree.walk()][0] == ["good"]


@pytest.mark.parametrize(
    "folder, words",
    [
        ("no-skillmd", "no SKILL.md"),
        ("bad-yaml", "not valid YAML at line 3"),
        ("no-name", "has no `name`"),
    ],
)
def test_broken_skills_are_clear_errors(folder, words):
    with pytest.raises(SourceError, match=words):
        load(SKILLS / "broken" / folder)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mcp_cli",
            "build",
            str(SKILLS / "broken" / folder),
            "-o",
            str(ROOT / "build" / "never"),
        ],
        capture_output=True,
        text=True,
        timeout=budget(60),
    )
    assert proc.returncode == 2
    assert words in proc.stderr and "Traceback" not in proc.stderr
    assert not (ROOT / "build" / "never").exists()


HELPER_OPTIONS = (
    '"""Tool with shared options."""\nimport argparse\n\n\ndef add_common(p):\n'
    '    p.add_argument("--verbose", action="store_true")\n\n\n'
    'if __name__ == "__main__":\n    parser = argparse.ArgumentParser()\n    parser.add_argument("--name")\n'
    "    for each in PARSERS:\n        add_common(each)\n    print(parser.parse_args())\n"
)
CLICK_DECORATOR = (
    '"""Click tool."""\nimport click\n\n\n'
    'def common(f):\n    return click.option("--verbose", is_flag=True)(f)\n\n\n'
    '@click.command()\n@click.option("--name")\n@common\ndef main(name, verbose):\n    click.echo(name)\n\n\n'
    'if __name__ == "__main__":\n    main()\n'
)


@pytest.mark.parametrize(
    "script, summary, said",
    [
        (HELPER_OPTIONS, "Tool with shared options.", ["p.add_argument at line 6", "passing argv through"]),
        (CLICK_DECORATOR, "Click tool.", ["@common on main may add options"]),  # a decorator of its own
    ],
)
def test_options_added_out_of_sight_make_the_script_pass_argv_through(tmp_path, script, summary, said):
    skill = write_skill(tmp_path / "helped", "Options come from a helper.", {"scripts/tool.py": script})
    tree, warnings = load(skill)
    tool = node(tree, "tool")
    assert tool.passthrough and tool.summary == summary
    assert any(all(words in w for words in said) for w in warnings)


CONSTANT_CHOICES = '''"""Render a chart from a CSV file."""
import argparse
import os

FORMATS = {"png": "image/png", "svg": "image/svg+xml", "pdf": "application/pdf"}
STYLES = ("line", "bar")
THEMES = ["light", "dark"]
THEMES.append("sepia")  # changed in place: not a constant
DEFAULT_DPI = 150
SIZES = [480, 720] + [1080]


def main():
    parser = argparse.ArgumentParser(description="Render a chart.")
    parser.add_argument("csv")
    parser.add_argument("--format", choices=list(FORMATS), default="png")
    parser.add_argument("--mime", choices=FORMATS.keys())
    parser.add_argument("--style", choices=sorted(STYLES), help="Chart style")
    parser.add_argument("--theme", choices=THEMES)
    parser.add_argument("--dpi", type=int, default=DEFAULT_DPI)
    parser.add_argument("--height", type=int, choices=SIZES, default=SIZES[0])
    parser.add_argument("--out", default=os.getcwd(), help="Where to write")
    print(vars(parser.parse_args()))


if __name__ == "__main__":
    main()
'''

CLICK_CHOICES = """import click

UNITS = {"metric": 1.0, "imperial": 2.2}


@click.command()
@click.option("--unit", type=click.Choice(list(UNITS)), default="metric")
@click.option("--lang", type=click.Choice(available_languages()))
def main(unit, lang):
    click.echo(unit)


if __name__ == "__main__":
    main()
"""


@pytest.mark.anyio
async def test_choices_and_defaults_given_by_constants_are_shown_and_checked(tmp_path):
    from mcp_cli.engine.runtime import Runtime

    scripts = {"scripts/render.py": CONSTANT_CHOICES, "scripts/weigh.py": CLICK_CHOICES}
    skill = write_skill(tmp_path / "charts", "Charts from CSV files.", scripts)
    tree, _ = load(skill)
    got = params(node(tree, "render"))
    assert got["format"].choices == ["png", "svg", "pdf"] and got["format"].default == "png"
    assert got["mime"].choices == ["png", "svg", "pdf"] and got["style"].choices == ["bar", "line"]
    assert got["dpi"].default == 150 and got["height"].choices == [480, 720, 1080] and got["height"].default == 480
    assert got["theme"].choices is None  # changed in place: computed
    assert got["theme"].help == "(choices computed by the script, passed to it unchecked)"
    assert got["out"].default is None and got["out"].help == "Where to write (default computed by the script)"
    weigh = params(node(tree, "weigh"))
    assert weigh["unit"].choices == ["metric", "imperial"] and weigh["lang"].choices is None
    assert "choices computed by the script" in weigh["lang"].help
    async with Runtime(tree) as runtime:
        help_text = (await runtime.call(["render", "--help"])).text()
        assert "--format {png,svg,pdf}" in help_text and "(default: 150)" in help_text
        refused = await runtime.call(["render", "data.csv", "--format", "gif"])
        assert refused.error == "usage" and "'gif'" in refused.message and "'svg'" in refused.message
        result = await runtime.call(["render", "data.csv", "--theme", "sepia", "--height", "720"])
        assert "'theme': 'sepia'" in result.output and "'height': 720" in result.output, result.message


PARSER_IN_HELPERS = '''"""Keep notes in a local store."""
import argparse


def main():
    parser = get_parser()
    args = parser.parse_args()
    print(vars(args))


def add_common(p, store=True):
    p.add_argument("--store", default="notes.db", help="Store file")
    if store:
        p.add_argument("-q", "--quiet", action="store_true")


def add_list_command(subparsers):
    cmd = subparsers.add_parser("list", help="List notes.")
    add_common(cmd)
    cmd.add_argument("--limit", type=int, default=10)
    return cmd


def get_parser():
    parser = argparse.ArgumentParser(description="Keep notes.")
    sub = parser.add_subparsers(dest="command", required=True)
    add_list_command(sub)
    put = sub.add_parser("put", help="Add a note.")
    put.add_argument("text")
    add_common(p=put)
    return parser


if __name__ == "__main__":
    main()
'''

BUILD_PARSER = """import argparse

MIN = 1


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)  # made first, but a parent: not the program's parser
    common.add_argument("--output", help="Write JSON here")
    parents = [common]
    p = argparse.ArgumentParser(description="Count words in files.", parents=parents)
    p.add_argument("files", nargs="+")
    p.add_argument("--min", type=int, default=MIN, help=f"Fewest letters (default {MIN})")
    return p


if __name__ == "__main__":
    print(vars(build_parser().parse_args()))
"""


@pytest.mark.anyio
async def test_a_parser_built_in_helper_functions_is_read(tmp_path):
    from mcp_cli.engine.runtime import Runtime

    scripts = {"scripts/store.py": PARSER_IN_HELPERS, "scripts/words.py": BUILD_PARSER}
    skill = write_skill(tmp_path / "notes", "Notes in a local store.", scripts)
    tree, warnings = load(skill)
    assert not [w for w in warnings if "store.py" in w or "words.py" in w]
    assert [" ".join(p) for p, _ in tree.walk()][:4] == ["store", "store list", "store put", "words"]
    assert set(params(node(tree, "store list"))) == {"store", "quiet", "limit"}
    assert set(params(node(tree, "store put"))) == {"text", "store", "quiet"}
    assert node(tree, "store list").summary == "List notes." and not node(tree, "words").passthrough
    async with Runtime(tree) as runtime:
        result = await runtime.call(["store", "list", "--limit", "3", "-q"])
        assert "'limit': 3" in result.output and "'quiet': True" in result.output, result.message
        refused = await runtime.call(["store", "put", "hi", "--limit", "3"])
        assert refused.error == "usage" and "--limit" in refused.message
        result = await runtime.call(["words", "a.txt", "--min", "2", "--output", "x.json"])
        assert "'output': 'x.json', 'files': ['a.txt'], 'min': 2" in result.output, result.message
    assert params(node(tree, "words"))["min"].help == "Fewest letters (default 1)"


CLASS_AND_PARENT_HELPERS = '''"""Sync files between two folders."""
import argparse


def common_parser():
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--dry-run", action="store_true", help="Show what would change")
    return common


class SyncTool:
    def __init__(self):
        self.parser = argparse.ArgumentParser(description="Sync files.", parents=[common_parser()])
        self._add_paths(self.parser)

    def _add_paths(self, parser):
        parser.add_argument("source")
        parser.add_argument("target")

    def run(self):
        print(vars(self.parser.parse_args()))


if __name__ == "__main__":
    SyncTool().run()
'''


@pytest.mark.anyio
async def test_a_parser_built_in_methods_and_parent_factories_is_read(tmp_path):
    from mcp_cli.engine.runtime import Runtime

    skill = write_skill(tmp_path / "sync", "Sync folders.", {"scripts/sync.py": CLASS_AND_PARENT_HELPERS})
    tree, warnings = load(skill)
    assert warnings == []
    sync = node(tree, "sync")
    assert not sync.passthrough and list(params(sync)) == ["dry_run", "source", "target"]
    async with Runtime(tree) as runtime:
        result = await runtime.call(["sync", "a", "b", "--dry-run"])
        assert "'dry_run': True, 'source': 'a', 'target': 'b'" in result.output, result.message
