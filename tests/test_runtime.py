"""The runtime: a broken tree fails when it is loaded, naming the command; each command keeps what it compiled."""

import gc
import json
import subprocess
import sys

import pytest

from mcp_cli.engine.runtime import Runtime
from mcp_cli.errors import SourceError
from mcp_cli.testing import invoke
from mcp_cli.tree import Command, Group, Param, Tree

from .conftest import FAULTS, budget

ECHO = {"kind": "python", "target": "json:dumps"}


def tree_of(*commands: Command) -> Tree:
    return Tree(root=Group(name="t", children=[Group(name="g", children=list(commands))]))


@pytest.mark.parametrize(
    "handler, words",
    [
        ({}, "no handler of kind None"),
        ({"kind": "teleport"}, "no handler of kind 'teleport' (known kinds: mcp, python, search, subprocess)"),
        ({"kind": "python", "target": "no_colon"}, "is not of the form module:attribute"),
        ({"kind": "subprocess", "command": "echo hi"}, "needs 'command': the program and its arguments, a list"),
        ({"kind": "mcp", "server": "s"}, "needs 'tool'"),
        ({"kind": "subprocess", "command": ["x", 3]}, "bad 'command': it must be a list of strings"),
        ({"kind": "subprocess", "command": ["x"], "env": {"A": 1}}, "bad 'env': it must be an object of strings"),
        ({"kind": "subprocess", "command": ["x"], "stdin": "yes"}, "bad 'stdin': it must be true or false"),
        ({"kind": "subprocess", "command": ["x"], "before": ["-v"]}, "bad 'before'"),
        ({"kind": "python", "target": "m:f", "timeout": "soon"}, "bad 'timeout': it must be a number of seconds"),
        ({"kind": "mcp", "server": "s", "tool": "t", "timeout": True}, "bad 'timeout'"),
    ],
)
def test_a_broken_handler_reference_fails_at_load_naming_the_command(handler, words):
    data = tree_of(Command("ok", handler=ECHO)).to_dict()
    data["root"]["children"][0]["children"].append({"kind": "command", "name": "bad", "handler": handler})
    with pytest.raises(ValueError) as err:
        Tree.from_dict(data)
    assert str(err.value).startswith("bad command 't g bad': ") and words in str(err.value)
    with pytest.raises(ValueError) as err:
        Command("bad", handler=handler)
    assert words in str(err.value)  # its JSON form given in Python is read, and checked, as a file's is


def test_an_unknown_key_of_a_reference_is_refused_naming_the_known_ones():
    with pytest.raises(ValueError, match=r"python handler reference has an unknown key 'targte' \(known: target, "):
        Command("c", handler={"kind": "python", "targte": "m:f"})


def test_a_command_without_a_handler_cannot_run_naming_it():
    with pytest.raises(SourceError, match="^`t g bare` cannot run: it has no handler$"):
        Runtime(tree_of(Command("ok", handler=ECHO), Command("bare")))


def test_a_reference_reads_back_as_it_was_written():
    written = [
        {"kind": "python", "target": "m:f", "timeout": 5},
        {
            "kind": "subprocess",
            "command": ["{python}", "x.py"],
            "cwd": ".",
            "env": {"A": "1"},
            "inherit": ["HOME"],
            "stdin": True,
            "dependencies": [],
            "requires_python": ">=3.8",
            "broken": "why",
            "before": [{"-v": 0}],
        },
        {"kind": "mcp", "server": "s", "tool": "t", "task": True},
        {"kind": "mcp", "server": "s", "op": "prompts/get", "prompt": "p"},
        {"kind": "mcp", "server": "s", "op": "resources/read", "templates": ["x://{id}"]},
        {"kind": "search"},
    ]
    assert [Command("c", handler=ref).handler.to_dict() for ref in written] == written


def test_a_broken_tree_file_is_refused_before_serving(tmp_path):
    data = json.loads(FAULTS.read_text())
    data["root"]["children"][0]["children"][0]["handler"] = {"kind": "teleport"}
    broken = tmp_path / "tree.json"
    broken.write_text(json.dumps(data))
    proc = subprocess.run(
        [sys.executable, "-m", "mcp_cli", "serve", str(broken)],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=budget(60),
    )
    assert (
        proc.returncode == 2
        and "not a valid tree: bad command 'faults py boom': no handler of kind 'teleport'" in proc.stderr
    )
    assert "Traceback" not in proc.stderr


def test_an_unknown_parameter_type_fails_when_the_tree_is_read():
    with pytest.raises(ValueError, match="parameter 'n': unknown type 'int'"):
        Param("n", type="int")
    with pytest.raises(ValueError, match="bad command 't c': parameter 'n': unknown action 'store_const'"):
        Tree.from_dict(
            {
                "format": "mcp-cli/tree",
                "version": 1,
                "root": {
                    "kind": "group",
                    "name": "t",
                    "children": [
                        {
                            "kind": "command",
                            "name": "c",
                            "handler": ECHO,
                            "params": [{"name": "n", "action": "store_const"}],
                        }
                    ],
                },
            }
        )


def test_each_command_is_validated_against_its_own_schema():
    """Commands made one after another, each dropped after its call, are each checked against their own schema
    (a cache keyed by a dead command's id once checked new commands against old schemas). What the process held
    before is frozen (`gc.freeze`), so that each collect walks only what the loop made, not the whole session's heap."""
    gc.collect()
    gc.freeze()
    try:
        for i in range(200):
            name = f"field{i}"
            schema = {"type": "object", "properties": {name: {"type": "string"}}, "required": [name]}
            cmd = Command("c", params=[Param(name, flags=[f"--{name}"])], schema=schema, handler=ECHO)
            message = invoke(tree_of(cmd), ["g", "c"]).message
            del cmd
            assert f"missing required option --field{i}" in message, message
            gc.collect()
    finally:
        gc.unfreeze()
