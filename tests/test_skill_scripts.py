"""Scripts of real skills as they are: found in every folder, recognised as commands or not, and run the way the
skill says (plain `sys.argv` programs, parent-parser options, standard input, inline dependencies through uv)."""

import json
import os
import shutil
import sys
import zipfile
from pathlib import Path

import pytest

from mcp_cli.engine.runtime import Runtime
from mcp_cli.handlers import CallScope
from mcp_cli.sources.skill.folder import load
from mcp_cli.sources.skill.pyast import Module
from mcp_cli.sources.skill.read_python import is_entry_point
from mcp_cli.testing import envelope, node
from mcp_cli.tree import Command

from .conftest import ROOT, served, text
from .skills import write_skill

pytestmark = pytest.mark.anyio
FIXTURES = ROOT / "tests" / "fixtures" / "scripts"


def paths(tree) -> list[str]:
    return [" ".join(p) for p, _ in tree.walk()]


async def run(skill: str, *argv: str, cwd: Path | None = None):
    tree, _ = load(FIXTURES / skill)
    async with Runtime(tree) as runtime:
        return await runtime.call(list(argv), CallScope(str(cwd) if cwd else None, local_files=True))


def without_uv() -> str:
    """PATH without the folders that hold a `uv`."""
    return os.pathsep.join(d for d in os.environ["PATH"].split(os.pathsep) if not shutil.which("uv", path=d))


# What is a command


@pytest.mark.parametrize(
    "source, command",
    [
        ("import sys\nprint(sys.argv[1:])\n", True),  # a plain program
        ("import sys\nfor a in sys.argv:\n    pass\n", True),
        ("import sys\nname = sys.argv[1]\n", True),
        ("def main():\n    pass\n\nmain()\n", True),
        ("import asyncio\nasync def main():\n    pass\nasyncio.run(main())\n", True),
        ('if __name__ == "__main__":\n    print(1)\n', True),
        ("import sys\nraise SystemExit(0)\n", True),
        ('"""Doc."""\nimport os\nX = 1\ndef f():\n    pass\nclass C:\n    pass\n', False),  # a library
        ("import sys, logging\nsys.path.insert(0, '.')\nlogging.basicConfig()\nlog = logging.getLogger()\n", False),
        ("try:\n    import yaml\nexcept ImportError:\n    yaml = None\n", False),
        ("REGISTRY = {}\nREGISTRY.update({'a': 1})\n__all__ = []\n__all__.append('x')\n", False),  # fills its own
        ("import click\ncli = click.Group()\ncli.add_command(click.Command('x'))\ncli()\n", True),
        ("import argparse\np = argparse.ArgumentParser()\np.add_argument('x')\np.parse_args()\n", True),
        ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import os\n", False),
        ('def f():\n    pass\nif __name__ == "__main__":\n    import doctest\n    doctest.testmod()\n', False),
    ],
)
def test_a_module_is_a_command_when_running_it_does_something(source, command):
    assert is_entry_point(Module(source)) is command


def test_plain_argv_scripts_are_commands_and_libraries_are_not():
    tree, warnings = load(FIXTURES / "plain-argv")
    assert paths(tree) == ["empty-check", "shout", "wordcount", "docs", "docs skill"]  # not textlib, selftest
    assert warnings == []
    count, shout = node(tree, "wordcount"), node(tree, "shout")
    assert count.passthrough and count.summary == "Count the words of each file given."
    assert "Usage: plain-argv wordcount FILE [FILE ...]" in count.usage  # as the agent calls it
    assert shout.summary == "Print the arguments in capitals."  # no docstring: its leading comments
    assert node(tree, "empty-check").summary == "Report whether each file given is empty."  # after its imports


async def test_a_plain_argv_script_runs_end_to_end(tmp_path):
    (tmp_path / "a.txt").write_text("one two three\n")
    async with served("serve", str(FIXTURES / "plain-argv")) as client:
        result = await client.call_tool("plain-argv", {"argv": ["wordcount", str(tmp_path / "a.txt")]})
        assert not result.is_error, text(result)
        assert text(result).strip() == f"{tmp_path / 'a.txt'}: 3"
        result = await client.call_tool("plain-argv", {"command": "wordcount --help"})
        assert "Count the words of each file given." in text(result)
        assert "Usage: plain-argv wordcount FILE" in text(result)
        result = await client.call_tool("plain-argv", {"argv": ["shout", "hi", "there"]})
        assert text(result).strip() == "HI THERE"


def test_files_not_meant_to_be_run_are_hidden_with_a_note():
    tree, warnings = load(FIXTURES / "not-run")
    assert paths(tree) == ["report", "web", "web stamp", "docs", "docs skill"]  # web/format.js: a library module
    assert warnings == [
        "scripts/colors.sh: defines functions for other scripts to `source`; not a command",
        "scripts/common.sh: defines functions for other scripts to `source`; not a command",
        "scripts/engine.py: says it is not meant to be run directly; not a command",
        "scripts/guarded.py: says it is not meant to be run directly; not a command",
        "web/template.js: says it is not meant to be run directly; not a command",
        "web/viewer.js: uses `document`/`window` and nothing of Node, so it runs in a browser; not a command",
    ]


def test_files_with_no_code_are_not_commands(tmp_path):
    sources = {"a.sh": "", "b.sh": "#!/bin/bash\n# To do.\n", "c.js": "", "d.js": "#!/usr/bin/env node\n"}
    sources |= {"e.mjs": "/* To do. */\n// Later.\n", "f.py": "# To do.\n", "g.sh": "echo hi\n"}
    skill = write_skill(tmp_path / "blank", "Blank.", {f"scripts/{name}": s for name, s in sources.items()})
    tree, warnings = load(skill)
    assert (paths(tree), warnings) == (["g"], [])  # not "defines functions for other scripts to `source`"


async def test_a_script_that_sources_a_shell_library_and_one_that_requires_a_js_module_run():
    result = await run("not-run", "report", "a", "b")
    assert result.ok, result.message
    assert result.output.strip() == ">> report: a b"
    result = await run("not-run", "web", "stamp", "x")
    assert result.output == " stamp x\n"


# Where scripts are found and how they are named


def test_scripts_are_found_in_every_folder_of_the_skill():
    tree, warnings = load(FIXTURES / "folders")
    assert paths(tree) == [
        "hello",
        "core",
        "core cli",
        "examples",
        "examples demo",
        "ooxml",
        "ooxml pack",
        "pdf",
        "pdf merge",
        "tools",
        "tools convert",
        "docs",
        "docs skill",
    ]
    # assets/, references/, templates/, tests/, vendor/, _private/, a virtual environment, minified JS: no commands
    assert warnings == []
    assert node(tree, "tools").summary == "Scripts in tools."
    assert node(tree, "core cli").handler.command == ["{python}", "-m", "core.cli"]  # relative imports


async def test_a_script_in_a_folder_imports_its_siblings_and_the_skills_packages(tmp_path):
    result = await run("folders", "tools", "convert", "2", "--unit", "km", cwd=tmp_path)
    assert result.ok, result.message + result.stderr
    assert result.output.strip() == "2000 m (core)"  # `from units import ...` and `import core`
    result = await run("folders", "core", "cli", "hi", cwd=tmp_path)
    assert result.ok, result.stderr
    assert result.output.strip() == "HI!"  # `from .text import shout`, run as a module
    result = await run("folders", "ooxml", "pack", "x", cwd=tmp_path)
    assert result.output.strip() == "pack x"


async def test_names_that_meet_get_their_extension_and_no_script_is_dropped():
    tree, warnings = load(FIXTURES / "collisions")
    assert paths(tree) == [
        "report",
        "convert",
        "convert-sh",
        "pdf-py",
        "report-py",
        "pdf",
        "pdf split",
        "docs",
        "docs skill",
    ]
    assert warnings == [
        "scripts/convert.sh: another script or folder is already named 'convert'; this one is 'convert-sh'",
        "scripts/pdf.py: another script or folder is already named 'pdf'; this one is 'pdf-py'",
        "scripts/report.py: another script or folder is already named 'report'; this one is 'report-py'",
    ]
    for path, said in [("convert-sh", "convert sh"), ("pdf-py", "pdf py"), ("report-py", "report scripts")]:
        result = await run("collisions", *path.split())
        assert result.output.strip() == said


async def test_scripts_named_in_other_scripts_are_named_as_tools_are_and_each_is_called(tmp_path):
    """Scripts and folders whose names have no ASCII letter keep their own (as tool names do), accents folded; no
    two become `command`."""
    argv = '"""Say which script ran."""\nimport sys\nprint(__file__.rsplit("/", 1)[-1], *sys.argv[1:])\n'
    files = {f"scripts/{n}": argv for n in ("导出报告.py", "导入数据.py", "отчёт.py", "créer_problème.py")}
    files |= {"工具/转换.py": argv, "scripts/数据.sh": '#!/bin/bash\n# Say which script ran.\necho "数据.sh $1"\n'}
    skill = write_skill(tmp_path / "reports", "Reports in any language.", files)
    tree, warnings = load(skill)
    assert sorted(paths(tree)) == sorted(
        ["导出报告", "导入数据", "отчёт", "creer-probleme", "数据", "工具", "工具 转换"]
    )
    assert warnings == []
    async with served("serve", str(skill)) as client:
        called = {"导出报告": "导出报告.py", "导入数据": "导入数据.py", "отчёт": "отчёт.py"}
        called |= {"creer-probleme": "créer_problème.py", "数据": "数据.sh", "工具 转换": "转换.py"}
        for command, said in called.items():
            result = await client.call_tool("reports", {"argv": [*command.split(), "二"]})
            assert text(result).strip() == f"{said} 二", (command, text(result))
        result = await client.call_tool("reports", {"command": "reports 导入数据 一"})  # the shell-like form too
        assert text(result).strip() == "导入数据.py 一"


# argparse parent parsers


def test_options_of_parent_parsers_are_options_of_every_subcommand():
    tree, warnings = load(FIXTURES / "parents")
    assert warnings == []
    assert paths(tree)[3:8] == ["store", "store list", "store put", "store remote", "store remote add"]
    flags = [p.flags[-1] for p in node(tree, "store list").params]
    assert flags == ["--verbose", "--region", "--color", "--config", "--dry-run", "--limit"]
    add = node(tree, "store remote add")
    assert [p.flags[-1] if p.flags else p.name for p in add.params] == [
        "--verbose",
        "--region",
        "--color",
        "--timeout",
        "--config",
        "--dry-run",
        "url",
    ]
    assert add.handler.before[1] == {"--timeout": 1}


async def test_parent_options_given_anywhere_reach_argparse_where_it_reads_them():
    result = await run("parents", "store", "list", "--config", "c.yaml", "-v", "--region=eu", "--no-color", "-vv")
    assert result.ok, result.message + result.stderr
    assert json.loads(result.output) == {
        "color": False,
        "command": "list",
        "config": "c.yaml",
        "dry_run": False,
        "limit": None,
        "region": "eu",
        "verbose": 3,
    }
    result = await run("parents", "store", "remote", "add", "https://x", "--timeout", "5", "--dry-run", "-v")
    assert result.ok, result.message + result.stderr
    assert json.loads(result.output) == {
        "color": None,
        "command": "remote",
        "config": None,
        "dry_run": True,
        "region": None,
        "remote_command": "add",
        "timeout": 5,
        "url": "https://x",
        "verbose": 1,
    }
    result = await run("parents", "store", "put", "--region", "mars", "k", "v")
    assert result.error == "usage" and "invalid choice: 'mars'" in result.message


async def test_click_group_and_typer_callback_options_are_accepted_after_the_command():
    result = await run("parents", "sync", "push", "docs", "--config", "c.yaml", "-q")
    assert result.ok, result.message + result.stderr
    assert json.loads(result.output) == {"config": "c.yaml", "push": "docs", "quiet": True}
    result = await run("parents", "jobs", "stop", "build", "--workers", "4", "--verbose")
    assert result.ok, result.message + result.stderr
    assert json.loads(result.output) == {"stop": "build", "verbose": True, "workers": 4}


async def test_a_parent_parser_option_on_a_subcommand_end_to_end():
    async with served("serve", str(FIXTURES / "parents")) as client:
        result = await client.call_tool("parents", {"command": "store list --config x --limit 3"})
        assert not result.is_error, text(result)
        assert json.loads(text(result))["config"] == "x"
        result = await client.call_tool("parents", {"command": "store list --help"})
        assert "--config TEXT" in text(result) and "--region {eu,us}" in text(result)


# argparse and click as real scripts use them

ODD_INTERFACES = {
    "looped.py": """import argparse
p = argparse.ArgumentParser()
for name in ("fast", "slow"):
    p.add_argument("--" + name, type=int)
print(vars(p.parse_args()))
""",
    "options.py": """import click
COMMON = dict(type=int, default=1)
@click.command()
@click.option("--times", **COMMON)
def main(times):
    print({"times": times})
main()
""",
    "resolve.py": """import argparse
base = argparse.ArgumentParser(add_help=False)
base.add_argument("-l", "--level", action="store_true")
p = argparse.ArgumentParser(parents=[base], conflict_handler="resolve")
p.add_argument("--level", type=int)
print(vars(p.parse_args()))
""",
    "switch.py": """import argparse
class On(argparse.Action):
    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, **kwargs)
    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, "on")
class Set(argparse.Action):
    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, "on")
p = argparse.ArgumentParser()
p.add_argument("--power", action=On)
p.add_argument("--mode", nargs=0, action=Set)
print(vars(p.parse_args()))
""",
    "broken.py": """import argparse
p = argparse.ArgumentParser()
either = p.add_mutually_exclusive_group()
either.add_argument("name")
print(vars(p.parse_args()))
""",
}


async def test_computed_redefined_and_valueless_arguments(tmp_path):
    scripts = {f"scripts/{name}": source for name, source in ODD_INTERFACES.items()}
    skill = write_skill(tmp_path / "odd", "Odd interfaces.", scripts)
    tree, warnings = load(skill)
    assert node(tree, "looped").passthrough and node(tree, "options").passthrough  # names or options computed
    assert (
        "scripts/looped.py: arguments added where they cannot be followed statically (p.add_argument with "
        "computed names or options at line 4); passing argv through" in warnings
    )
    async with Runtime(tree) as runtime:
        result = await runtime.call(["looped", "--fast", "3"])
        assert result.output.strip() == "{'fast': 3, 'slow': None}", result.message
        result = await runtime.call(["options", "--times", "2"])
        assert result.output.strip() == "{'times': 2}", result.message
        result = await runtime.call(["resolve", "-l", "--level", "2"])  # --level redefined; -l stays a switch
        assert result.output.strip() == "{'level': 2}", result.message
        result = await runtime.call(["switch", "--power", "--mode"])
        assert result.output.strip() == "{'power': 'on', 'mode': 'on'}", result.message
        result = await runtime.call(["broken", "x"])  # argparse itself refuses it: said in one line
        assert result.message == (
            "Error: `odd broken` cannot run: its parameters are malformed (parameter 'name': mutually exclusive "
            "arguments must be optional)."
        )


# Standard input


def test_commands_that_read_stdin_take_a_stdin_option():
    tree, _ = load(FIXTURES / "stdin")
    for path in ("upper", "numbered"):
        assert [p for p in node(tree, path).params if p.flags == ["--stdin"]], path
    for path in ("lines", "count"):
        assert "--stdin TEXT" in node(tree, path).usage
    assert all(c.handler.stdin for c in map(lambda p: node(tree, p), ("upper", "numbered", "lines", "count")))
    assert not node(tree, "args").handler.stdin and "--stdin" not in node(tree, "args").usage


def test_a_long_run_of_blank_lines_does_not_stall_reading_a_script(tmp_path):
    # the patterns for `read`, `echo "Usage: ..."` and `// comments` are line patterns: their leading space no
    # longer runs over line ends, which made them scan a run of blank lines from each of its lines (minutes here)
    blank = "\n" * 200_000
    ask = f'#!/bin/bash\n{blank}read -r name\necho "Usage: ask.sh"\n'
    echo = f"// Ask.\n{blank}process.stdin.pipe(process.stdout);\n"
    skill = write_skill(tmp_path / "padded", "Padded.", {"scripts/ask.sh": ask, "scripts/echo.js": echo})
    tree, _ = load(skill)
    assert node(tree, "ask").handler.stdin and node(tree, "echo").handler.stdin
    assert "Usage: padded ask" in node(tree, "ask").usage  # the script named as the agent calls it


async def test_stdin_text_or_file_is_written_to_the_script(tmp_path):
    (tmp_path / "in.txt").write_text("alpha\nbeta\n")
    result = await run("stdin", "upper", "--stdin", "abc", "--prefix", ">")
    assert (result.ok, result.output) == (True, ">ABC")
    result = await run("stdin", "numbered", "-", "--stdin", "@in.txt", cwd=tmp_path)
    assert result.output == "1 alpha\n2 beta\n"
    result = await run("stdin", "lines", "--stdin=one\ntwo\n")
    assert result.output == "[one]\n[two]\n"
    result = await run("stdin", "count", "--stdin", "12345")
    assert result.output.strip() == "5 characters"
    result = await run("stdin", "upper", "--prefix", "empty:")  # without --stdin the input is empty
    assert result.output == "empty:"
    result = await run("stdin", "upper", "--stdin", "@missing.txt", cwd=tmp_path)
    assert result.error == "usage" and "--stdin: cannot read @" in result.message
    result = await run("stdin", "args", "--stdin", "x")  # reads no stdin: the option is its own argument
    assert result.output.strip() == "--stdin x"


async def test_the_manifest_names_commands_that_read_stdin(tmp_path):
    loud = "#!/bin/sh\n# Upper-case the input.\ntr a-z A-Z\n"  # reads stdin where no pattern sees it
    manifest = "stdin: [loud, nothing-here]\n"
    skill = write_skill(tmp_path / "shout", "Shouts.", {"scripts/loud.sh": loud, "mcp-cli.yaml": manifest})
    tree, warnings = load(skill)
    assert "mcp-cli.yaml: stdin: no script command at 'nothing-here'" in warnings
    async with Runtime(tree) as runtime:
        result = await runtime.call(["loud", "--stdin", "quiet words"])
    assert (result.ok, result.output) == (True, "QUIET WORDS")


async def test_stdin_end_to_end():
    async with served("serve", str(FIXTURES / "stdin")) as client:
        result = await client.call_tool("stdin", {"argv": ["upper", "--stdin", "fed through mcp"]})
        assert not result.is_error, text(result)
        assert text(result).strip() == "FED THROUGH MCP"
        result = await client.call_tool("stdin", {"command": "upper --help"})
        assert "--stdin TEXT" in text(result) and "standard input" in text(result)


# Inline script metadata (PEP 723)


def test_inline_dependencies_are_read():
    tree, warnings = load(FIXTURES / "inline-deps")
    assert node(tree, "isolated").handler.dependencies == []
    assert node(tree, "isolated").handler.requires_python == ">=3.8"
    assert node(tree, "fetch").handler.dependencies == ["mcp-cli-test-absent-package>=1.0", "pyyaml"]
    assert node(tree, "badmeta").handler.dependencies is None
    assert any(w.startswith("scripts/badmeta.py: its `# /// script` metadata is not valid TOML") for w in warnings)


async def test_a_script_whose_inline_dependencies_are_here_runs_with_this_python_and_others_through_uv(tmp_path):
    skill = FIXTURES / "inline-deps"
    async with served("serve", str(skill)) as client:  # uv is on PATH, but not needed: uv may be offline
        result = await client.call_tool("inline-deps", {"argv": ["present", "x"]})
        assert not result.is_error and text(result) == "args:\n- x\n", text(result)
        result = await client.call_tool("inline-deps", {"argv": ["isolated", "a", "b"]})
        out = dict(line.split("=", 1) for line in text(result).splitlines())
        assert (out["uv"], out["python"], out["skill"], out["args"]) == ("no", sys.executable, str(skill), "a b")
    wheel = tmp_path / "tinypkg-1.0-py3-none-any.whl"  # a package this Python lacks, which uv installs offline
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr("tinypkg/__init__.py", 'VALUE = "from the wheel"\n')
        z.writestr("tinypkg-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: tinypkg\nVersion: 1.0\n")
        z.writestr("tinypkg-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        z.writestr("tinypkg-1.0.dist-info/RECORD", "")
    use = (
        f'# /// script\n# dependencies = ["tinypkg @ {wheel.as_uri()}"]\n# ///\n'
        '"""Use the package."""\nimport os\nimport tinypkg\n\nprint(tinypkg.VALUE, "uv" if os.getenv("UV") else "")\n'
    )
    wanting = write_skill(tmp_path / "wanting", "Needs a package.", {"scripts/use.py": use})
    async with served("serve", str(wanting)) as client:
        result = await client.call_tool("wanting", {"argv": ["use"]})
        assert text(result).strip() == "from the wheel uv", text(result)


def test_which_interpreter_runs_a_script_with_inline_metadata_is_logged(caplog):
    from dataclasses import replace

    from mcp_cli.handlers.subprocess import SubprocessHandler, _installed

    assert _installed("PyYAML>=5") and _installed("x; python_version < '3'")  # met, or not needed here
    assert not _installed("pyyaml<5") and not _installed("mcp-cli-test-absent-package")
    assert not _installed("pyyaml @ https://example.invalid/pyyaml.whl")  # a direct reference is never assumed
    tree, _ = load(FIXTURES / "inline-deps")
    with caplog.at_level("DEBUG", logger="mcp_cli"):
        here = SubprocessHandler(node(tree, "present").handler, tree)
        uv = SubprocessHandler(replace(node(tree, "present").handler, dependencies=["packaging<22"]), tree)
    assert here.command[0] == sys.executable and Path(uv.command[0]).stem == "uv"
    said = [r.getMessage() for r in caplog.records]
    assert any(m.endswith("present.py: runs with this Python, which has its inline dependencies") for m in said)
    assert any(m.endswith("present.py: runs through uv, as this Python lacks packaging<22") for m in said)
    old = replace(node(tree, "isolated").handler, requires_python="<3")  # a Python this is not
    assert Path(SubprocessHandler(old, tree).command[0]).stem == "uv"


async def test_a_script_with_two_metadata_blocks_is_broken_at_build_and_call():
    tree, warnings = load(FIXTURES / "inline-deps")
    assert (
        "scripts/twice.py: a broken script: it has more than one `# /// script` block, which PEP 723 forbids and uv "
        "refuses; keep one" in warnings
    )
    async with Runtime(tree) as runtime:
        result = await runtime.call(["twice"])
    assert result.error == "handler" and result.message == (
        "Error: `inline-deps twice` cannot run: it has more than one `# /// script` block, which PEP 723 forbids and "
        "uv refuses; keep one"
    )


async def test_without_uv_inline_dependencies_must_be_installed():
    async with served("serve", str(FIXTURES / "inline-deps"), env={"PATH": without_uv()}) as client:
        result = await client.call_tool("inline-deps", {"argv": ["isolated"]})  # nothing to install
        assert not result.is_error, text(result)
        assert "uv=no" in text(result) and f"python={sys.executable}" in text(result)
        result = await client.call_tool("inline-deps", {"argv": ["present", "x"]})  # installed here
        assert not result.is_error and text(result) == "args:\n- x\n"
        result = await client.call_tool("inline-deps", {"argv": ["fetch"]})
        assert result.is_error
        assert text(result).strip() == (
            "Error: `inline-deps fetch` needs mcp-cli-test-absent-package>=1.0 (its inline script metadata), which "
            "uv would install, but uv is not on PATH; install uv (pip install uv) or the packages "
            "(pip install 'mcp-cli-test-absent-package>=1.0')"
        )
        assert envelope(result)["error"] == "handler"


# Help from comments


def test_help_comes_from_header_comments_not_annotations():
    tree, _ = load(FIXTURES / "comments")
    build, deploy = node(tree, "build"), node(tree, "deploy")
    assert build.summary == "Build the site into a folder."  # not "Exit on error", which annotates `set -e`
    assert "Usage: comments build [--watch] OUT" in build.usage and "Exit on error" not in build.usage
    init = node(tree, "init")  # its comments only annotate lines of code; its usage is in an echo
    assert (init.summary, init.usage) == ("", "Usage: comments init NAME")
    assert deploy.summary == "Deploy the site to ENV (staging or production)."  # from its usage() here-document
    assert "Usage: comments deploy ENV" in deploy.usage and "shellcheck" not in deploy.usage
    annotate = node(tree, "annotate")
    assert annotate.summary == "Annotate a text file with line numbers."
    assert "Usage:\n  comments annotate FILE [--start N]" in annotate.usage
    assert "Example:\n  comments annotate notes.txt --start 10" in annotate.usage
    assert "numbered from 1" in annotate.usage
    tidy = node(tree, "tidy")  # a Python script without a docstring, under a licence header
    assert tidy.summary == "Tidy the whitespace of the files given."
    assert tidy.usage == "Tidy the whitespace of the files given.\n\nUsage: comments tidy FILE [FILE ...]"
    greet = node(tree, "greet")
    assert greet.summary == "Greet someone by name."
    assert greet.usage == "Greet someone by name.\n\nUsage: comments greet NAME"
    assert isinstance(greet, Command) and greet.handler.command[0] == "node"


# Help that reads right: a summary said once, usage lines as the agent calls the command

OFFICE_PACK = '''#!/usr/bin/env python3
"""Pack a directory into a DOCX, PPTX, or XLSX file.

Validates the XML first, then zips the directory.

Usage:
    python scripts/office/pack.py <input_directory> <output_file> [--validate true|false]

Examples:
    python pack.py unpacked/ output.docx
    python3 scripts/office/pack.py unpacked/ output.pptx --validate false

Unpack a file first with: python scripts/office/unpack.py document.docx unpacked/
"""
import argparse

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Pack a directory into a DOCX, PPTX, or XLSX file")
    parser.add_argument("input_directory", help="Unpacked Office document directory")
    parser.add_argument("output_file", help="Output Office file")
    parser.add_argument("--validate", default="true", help="Validate first")
    print(vars(parser.parse_args()))
'''

OFFICE_UNPACK = """import sys

if len(sys.argv) != 3:
    print(f"Usage: {sys.argv[0]} <office_file> <output_dir>")
    sys.exit(1)
print(sys.argv[1:])
"""

CHECK_BOXES = """import json
import sys

# Script for the agent to run to check the bounding boxes of form fields.


def main():
    if len(sys.argv) != 2:
        print("Usage: check_bounding_boxes.py [fields.json]")
        sys.exit(1)
    print(json.load(open(sys.argv[1])))


main()
"""

INIT_SH = """#!/bin/bash
set -e
if [ -z "$1" ]; then
  echo "Usage: ./create-react-app.sh <project-name>"
  exit 1
fi
echo "created $1"
"""


async def test_a_scripts_own_usage_lines_name_the_command_the_agent_calls(tmp_path):
    scripts = {"scripts/office/pack.py": OFFICE_PACK, "scripts/office/unpack.py": OFFICE_UNPACK}
    scripts |= {"scripts/check_bounding_boxes.py": CHECK_BOXES, "scripts/init-app.sh": INIT_SH}
    scripts["scripts/review.py"] = '"""Poster check\nUsage: review.py poster.pdf\n"""\nprint(1)\n'
    skill = write_skill(tmp_path / "office", "Office documents as XML.", scripts, body="See scripts.\n")
    tree, _ = load(skill)
    async with Runtime(tree) as runtime:
        pack = (await runtime.call(["office", "pack", "--help"])).text()
        assert pack == (
            "Usage:\n  office office pack [options] INPUT_DIRECTORY OUTPUT_FILE\n\n"
            "Pack a directory into a DOCX, PPTX, or XLSX file.\n\n"  # once, not once per source
            "Validates the XML first, then zips the directory.\n\n"
            "Usage:\n    office office pack <input_directory> <output_file> [--validate true|false]\n\n"
            "Examples:\n    office office pack unpacked/ output.docx\n"
            "    office office pack unpacked/ output.pptx --validate false\n\n"
            "Unpack a file first with: office office unpack document.docx unpacked/\n\n"
            "Arguments:\n  INPUT_DIRECTORY  Unpacked Office document directory\n"
            "  OUTPUT_FILE      Output Office file\n\n"
            "Options:\n  --validate TEXT  Validate first (default: true)\n"
        )
        assert (
            "Usage: office office unpack <office_file> <output_dir>"
            in (await runtime.call(["office", "unpack", "--help"])).text()
        )
        boxes = (await runtime.call(["check-bounding-boxes", "--help"])).text()
        assert "Usage: office check-bounding-boxes [fields.json]" in boxes and "check_bounding_boxes.py" not in boxes
        assert "Usage: office init-app <project-name>" in (await runtime.call(["init-app", "--help"])).text()
        review = (await runtime.call(["review", "--help"])).text()  # the usage line is not part of the summary
        assert review.count("Poster check") == 1 and "\n\nUsage: office review poster.pdf\n" in review
        # the rewritten lines work as written
        result = await runtime.call(["office", "pack", "unpacked/", "output.pptx", "--validate", "false"])
        assert "'validate': 'false'" in result.output, result.message
    assert tree.root.child("office").child("pack").summary == "Pack a directory into a DOCX, PPTX, or XLSX file."
    async with served("serve", str(skill)) as client:  # the same over MCP
        result = await client.call_tool("office", {"command": "check-bounding-boxes --help"})
        assert "Usage: office check-bounding-boxes [fields.json]" in text(result)


def test_usage_lines_follow_the_manifest_and_name_subcommands(tmp_path):
    store = (
        '"""Keep notes.\n\nExamples:\n    python -m scripts.store list --limit 3\n    %(prog)s put "a note"\n"""\n'
        "import argparse\n\n"
        "p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)\n"
        "sub = p.add_subparsers(dest='cmd')\nls = sub.add_parser('list', help='List notes')\n"
        "ls.add_argument('--limit', type=int)\n"
        "ls.description = 'List the notes.'\nput = sub.add_parser('put', help='Add a note',\n"
        "    description='Add a note to the store. Usage: python store.py put TEXT')\n"
        "put.add_argument('text')\np.parse_args()\n"
    )
    manifest = "steps:\n  - move: {from: store, to: data store}\n"
    skill = write_skill(tmp_path / "notes", "Notes.", {"mcp-cli.yaml": manifest, "scripts/store.py": store})
    tree, _ = load(skill)
    group = tree.root.child("data").child("store")
    assert group.description == (
        'Keep notes.\n\nExamples:\n    notes data store list --limit 3\n    notes data store put "a note"'
    )
    put = group.child("put")
    assert put.summary == "Add a note to the store." and put.description.endswith("Usage: notes data store put TEXT")


@pytest.mark.parametrize(
    "summary, description, said",
    [
        ("Add comments to DOCX files", "Add comments to DOCX files.\n\nMore.", "Add comments to DOCX files."),
        (
            "Create thumbnail grids",
            "Create thumbnail grids from slides.\n\nMore.",
            "Create thumbnail grids from slides.",
        ),
        ("Run the server", "Start one database, then clean up.\n\nMore.", "Run the server"),  # says other things
        (
            "Filter using medchem",
            "Filter using medchem\n\nFilter using the medchem library.\n\nMore.",
            "Filter using the medchem library.",
        ),  # an argparse description over the docstring as its epilog
    ],
)
def test_a_summary_the_description_restates_is_said_once(summary, description, said):
    from mcp_cli.engine.help import command_help
    from mcp_cli.sources.skill.helptext import said_once

    cmd = Command(name="x", summary=summary, description=description)
    said_once(cmd)
    assert cmd.summary == said
    assert command_help("tool x", cmd).count(said) == 1 and "More." in command_help("tool x", cmd)
