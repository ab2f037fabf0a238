"""The `mcp-cli` command in a terminal: run, inspect, --version, and errors for bad sources."""

import subprocess
import sys

import pytest

from mcp_cli import __version__

from . import forked
from .conftest import DEMO, FAULTS, ROOT, budget, inspector


def cli(*args: str) -> subprocess.CompletedProcess:
    """`mcp-cli args` in the repository, forked from a process that imported mcp-cli once (tests/forked.py);
    `python -m mcp_cli` itself runs in the tests of a Python source and of the Inspector."""
    return forked.mcp_cli(*args, cwd=ROOT, timeout=budget(60))


def test_version():
    assert cli("--version").stdout.strip() == f"mcp-cli {__version__}"


def test_run_prints_output_and_exits_zero():
    proc = cli("run", str(DEMO), "--", "text", "upper", "hello", "world", "--exclaim")
    assert (proc.returncode, proc.stdout) == (0, "HELLO WORLD!\n")


def test_run_without_dashes_passes_options_through():
    proc = cli("run", str(DEMO), "math", "--help")
    assert proc.returncode == 0 and proc.stdout.startswith("demo math - Arithmetic on numbers.")


@pytest.mark.parametrize(
    "argv, code, words",
    [
        (["math", "add", "1"], 2, "the following arguments are required: B"),
        (["maths"], 2, "Did you mean `math`?"),
        (["sh", "fail"], 1, "exited with status 1"),
        (["py", "boom"], 1, "RuntimeError: kaboom"),
        (["py", "hang"], 1, "did not finish within 2 s"),
    ],
)
def test_run_errors_go_to_stderr_with_a_status(argv, code, words):
    tree = DEMO if argv[0].startswith("math") else FAULTS
    proc = cli("run", str(tree), "--", *argv)
    assert proc.returncode == code
    assert words in proc.stderr and "Traceback" not in proc.stderr


def test_run_keeps_a_commands_stdout_and_stderr_apart():
    failed = cli("run", str(FAULTS), "--", "sh", "fail")  # prints `partial`, then exits with `it broke`
    assert (failed.returncode, failed.stdout) == (1, "partial\n")
    assert failed.stderr == "Error: `faults sh fail` exited with status 1.\n\nit broke\n"
    noisy = cli("run", str(FAULTS), "--", "sh", "noisy")  # only stderr, and it succeeds
    assert (noisy.returncode, noisy.stdout) == (0, "") and noisy.stderr.endswith("zzzTHE END\n")


def test_inspect_lists_every_path_with_summaries():
    lines = cli("inspect", str(DEMO)).stdout.splitlines()
    assert lines[0].split(None, 1) == ["demo", "A small toolkit for text, numbers and files, to try mcp-cli with."]
    paths = [line.split("  ")[0].strip() for line in lines]
    assert paths == [
        "demo",
        "demo text",
        "demo text upper",
        "demo text stats",
        "demo text repeat",
        "demo math",
        "demo math add",
        "demo math mean",
        "demo files",
        "demo files head",
        "demo files list",
    ]


def test_python_module_attribute_source(tmp_path):
    (tmp_path / "mytree.py").write_text(
        "from mcp_cli.tree import Command, Group, Param, Tree\n"
        "def hello(name):\n    return f'hello {name}'\n"
        "TREE = Tree(Group('hi', summary='Greets.', children=[Command('hello', summary='Say hello.',\n"
        "    params=[Param('name', required=True)], handler={'kind': 'python', 'target': 'mytree:hello'})]))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "mcp_cli", "run", "mytree:TREE", "--", "hello", "ada"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=budget(60),
    )
    assert (proc.returncode, proc.stdout) == (0, "hello ada\n"), proc.stderr


@pytest.mark.parametrize(
    "source, words",
    [
        ("no/such/tree.json", "no such file or folder"),
        ("nosuchmodule:TREE", "cannot import"),
        (str(ROOT / "README.md"), "invalid JSON"),
        (str(ROOT / "pyproject.toml"), "no [mcp_servers.NAME] tables (Codex config.toml format)"),
    ],
)
def test_bad_sources_are_named_without_traceback(source, words):
    proc = cli("run", source, "--", "--help")
    assert proc.returncode == 2
    assert words in proc.stderr and source in proc.stderr and "Traceback" not in proc.stderr


def test_inspector_cli_strict_lists_and_calls(tmp_path):
    """The MCP Inspector CLI, an independent client, accepts the server with --strict schema lint."""
    server = [sys.executable, "-m", "mcp_cli", "serve", str(DEMO)]
    listed = inspector(server, "--method", "tools/list", home=tmp_path, strict=True)
    assert listed.returncode == 0, listed.stderr
    assert '"name": "demo"' in listed.stdout
    called = inspector(
        server, "--method", "tools/call", "--tool-name", "demo", "--tool-arg", "command=math add 2 3", home=tmp_path
    )
    assert called.returncode == 0, called.stderr
    assert '"isError": false' in called.stdout and '"data": 5' in called.stdout
