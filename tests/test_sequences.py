"""Several commands in one call (`engine/sequence.py`): `;` runs each, `&&` stops at the first failure, every step is
checked before any runs, each answer comes under its own header within one budget; in-process on the demo tree, and
end to end over stdio (a real wrapped server that counts its calls), meta call_tool, HTTP with scopes, OpenAPI,
`mcp-cli run` and an exported skill's script."""

import json
import re
import subprocess
import sys

import httpx2
import pytest

from mcp_cli.engine.sequence import split_argv
from mcp_cli.testing import ainvoke, call, ok, served
from mcp_cli.tree import Command, Group, Param, Tree

from .conftest import NODE_BIN, ROOT, budget
from .test_http_security import environment, server
from .test_scopes import connect

pytestmark = pytest.mark.anyio

DEMO = ROOT / "examples" / "demo" / "demo.json"
SCOPES = """
[[scope]]
name = "readers"
token_env = "READER_TOKEN"
paths = ["memory *"]
read_only = true
"""
READER = "sequence reader token"


async def test_semicolons_run_each_command_and_answer_each_under_its_header():
    result = await ainvoke(DEMO, "text upper hi ; math add 2 3 ; math mean 1 2 3 | jq .mean")
    assert result.ok, result.text()
    assert result.output == (
        "[1/3] text upper hi\nHI\n\n[2/3] math add 2 3\n5\n\n[3/3] math mean 1 2 3 | jq .mean\n2\n"
    )
    same = await ainvoke(
        DEMO,
        ["text", "upper", "hi", ";", "math", "add", "2", "3", ";", "math", "mean", "1", "2", "3", "|", "jq", ".mean"],
    )
    assert same.output == result.output
    assert (await ainvoke(DEMO, "demo text upper a ; demo math add 1 1")).output.endswith("[2/2] math add 1 1\n2\n")


async def test_a_failure_in_a_semicolon_sequence_is_named_and_the_rest_still_run():
    result = await ainvoke(DEMO, "math add 1 1 ; files head /no/such/file ; text upper after")
    assert not result.ok and result.error is not None
    text = result.text()
    assert text.startswith("Error: 1 of 3 commands failed")
    assert "[2/3] files head /no/such/file: failed (" in text and "[3/3] text upper after\nAFTER" in text


async def test_and_and_stops_at_the_first_failure():
    result = await ainvoke(DEMO, "math add 1 1 && files head /no/such/file && text upper never")
    text = result.text()
    assert not result.ok and "[1/3] math add 1 1\n2" in text and "[2/3] files head /no/such/file: failed" in text
    assert "[3/3] text upper never: not run" in text and "NEVER" not in text


@pytest.mark.parametrize(
    ("command", "said"),
    [
        ("text upper a ; nosuch thing", "[2/2] nosuch thing: `demo` has no domain `nosuch`"),
        ("text upper a ; math add 1 x", "[2/2] math add 1 x: argument B: invalid integer value"),
        ("text upper a && math add 1 2 | jq '.['", "[2/2] math add 1 2 | jq '.[': stage 2"),
        ("; text upper a", "the sequence starts with `;`"),
        ("text upper a ; ; text upper b", "has two `;`"),
        ("text upper a &&", "the sequence ends with `&&`"),
        ("text upper a ; --budget 900 text upper b", "[2/2]"),
    ],
)
async def test_every_step_is_checked_before_any_runs(command, said):
    result = await ainvoke(DEMO, command)
    assert not result.ok and result.error in ("usage", "not_found"), result.text()
    assert said in result.text(), result.text()
    assert "[1/" not in result.output  # nothing ran: no step's answer


async def test_a_trailing_semicolon_is_allowed_and_quoted_separators_are_data():
    assert (await ainvoke(DEMO, "text upper a ;")).output == (await ainvoke(DEMO, "text upper a")).output
    assert (await ainvoke(DEMO, "text upper 'a;b' ; text upper 'c && d'")).output == (
        "[1/2] text upper 'a;b'\nA;B\n\n[2/2] text upper 'c && d'\nC && D\n"
    )
    assert (await ainvoke(DEMO, "text upper a & b")).output.strip() == "A & B"


async def test_a_local_caller_s_file_arguments_are_read_in_every_step(tmp_path):
    """The caller's scope (here `mcp-cli run`'s: its files are this machine's) holds for each step as it is checked
    before any runs, as for one command."""
    tree = Tree(
        root=Group(
            name="t",
            children=[
                Command(
                    "show",
                    handler={"kind": "python", "target": "builtins:dict"},
                    params=[Param("value", type="json", flags=["--value"])],
                ),
            ],
        )
    )
    (tmp_path / "v.json").write_text('{"a": 1}')
    at = f"@{tmp_path / 'v.json'}"
    assert (await ainvoke(tree, ["show", "--value", at])).ok
    result = await ainvoke(tree, ["show", "--value", at, ";", "show", "--value", at])
    assert result.ok, result.text()
    assert result.output.count('"a": 1') == 2


def test_argv_is_cut_at_tokens_that_are_exactly_a_separator():
    steps = split_argv(["a", ";", "b", "|", "jq", ".", "&&", "c", "';'"])
    assert [(s.joiner, s.stages) for s in steps] == [("", [["a"]]), (";", [["b"], ["jq", "."]]), ("&&", [["c", "';'"]])]


async def test_one_budget_holds_the_whole_sequence():
    long = " ; ".join(["text repeat word --times 400"] * 6)
    result = await ainvoke(DEMO, f"--budget 600 {long}")
    assert "[1/6] text repeat" in result.output and "--more" in result.output  # cut once, with the next part's call
    assert "[6/6]" not in result.output


async def test_the_next_part_of_a_sequence_is_read_with_the_call_its_note_gives():
    from mcp_cli.engine.runtime import Runtime
    from mcp_cli.sources import loader

    long = " ; ".join(["text repeat word --times 400"] * 6)
    async with Runtime(loader.load(str(DEMO))) as runtime:
        first = await runtime.call_tool({"command": f"--budget 600 {long}"})
        nxt = re.search(r"Next part: `demo (--budget 600 --more \S+ text repeat word [^`]*)`", first.output).group(1)
        second = await runtime.call_tool({"command": nxt})  # refused before: "give it as a call of its own"
    assert second.ok and second.output.startswith("word") and "[6/6]" not in first.output, second.message


async def test_built_ins_explain_themselves():
    for name in ("each", "jq", "head", "tail", "save"):
        said = await ainvoke(DEMO, f"{name} --help")
        assert said.ok and said.output.startswith(f"Usage: CMD | {name}"), said.text()
    each = (await ainvoke(DEMO, "each --help")).output
    assert "{.field}" in each and "demo CMD | jq" in each and "; B ... ; C" in each
    refused = await ainvoke(DEMO, "math add 1 2 | each")
    assert not refused.ok and "Runs COMMAND once per item" in refused.text()


# --- end to end ---------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("sequences")
    memory = root / "memory.jsonl"
    config = root / "team.json"
    config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "memory": {
                        "command": str(NODE_BIN / "mcp-server-memory"),
                        "env": {"MEMORY_FILE_PATH": str(memory)},
                    },
                }
            }
        )
    )
    (root / "scopes.toml").write_text(SCOPES)
    return {"root": root, "config": config, "memory": memory, "env": {"MCP_CLI_CACHE_DIR": str(root / "cache")}}


def entities(*names: str) -> str:
    return json.dumps([{"name": n, "entityType": "person", "observations": ["x"]} for n in names])


async def test_a_sequence_over_stdio_creates_each_entity_once_in_one_call(world):
    async with served("serve", str(world["config"]), env=world["env"]) as client:
        names = [f"P{i}" for i in range(9)]
        command = " ; ".join(f"memory create-entities --entities '{entities(n)}'" for n in names)
        reply = await call(client, command=command)
        assert reply.ok and reply.text.count("[") >= 9 and "[9/9]" in reply.text, reply.text[:500]
        graph = json.loads(await ok(client, "memory", "read-graph"))
        assert sorted(e["name"] for e in graph["entities"]) == sorted(names)  # each once
        stopped = await call(client, command=f"memory create-entities --entities '{entities('Q')}' && memory nosuch")
        assert not stopped.ok and stopped.structured["error"] == "not_found"
        assert "Q" not in [e["name"] for e in json.loads(await ok(client, "memory", "read-graph"))["entities"]]


async def test_meta_call_tool_runs_the_commands_after_then(world):
    async with served("serve", str(world["config"]), "--surface", "meta", env=world["env"]) as client:
        result = await client.call_tool(
            "call_tool", {"name": "memory read-graph", "then": "jq '.entities | length' ; memory read-graph"}
        )
        texts = "".join(c.text for c in result.content if c.type == "text")
        assert not result.is_error and "[1/2] memory read-graph | jq" in texts and "[2/2] memory read-graph" in texts


async def test_scopes_apply_to_every_command_of_a_sequence_and_openapi_takes_one(world):
    command = [
        sys.executable,
        "-m",
        "mcp_cli",
        "serve",
        str(world["config"]),
        "--scopes",
        str(world["root"] / "scopes.toml"),
    ]
    env = environment(READER_TOKEN=READER, **world["env"])
    with server(command, "127.0.0.1", "127.0.0.1", env=env) as (url, _):
        async with connect(url, READER) as client:
            denied = await call(
                client, command=f"memory read-graph ; memory create-entities --entities '{entities('Z')}'"
            )
            assert not denied.ok and denied.structured["error"] == "not_found" and "[1/2]" not in denied.text
        twice = {"command": "memory read-graph ; memory read-graph"}
        answer = httpx2.post(
            url.removesuffix("/mcp") + "/run",
            json=twice,
            headers={"Authorization": f"Bearer {READER}"},
            timeout=budget(60),
        )
        assert answer.status_code == 200 and answer.json()["ok"] and "[2/2]" in answer.json()["output"]


def test_mcp_cli_run_and_an_exported_skill_take_a_sequence(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "mcp_cli", "run", str(DEMO), "--", "text", "upper", "a", ";", "math", "add", "2", "3"],
        capture_output=True,
        text=True,
        timeout=budget(120),
        env=environment(),
    )
    assert (done.returncode, done.stdout) == (0, "[1/2] text upper a\nA\n\n[2/2] math add 2 3\n5\n"), done.stderr
    failed = subprocess.run(
        [
            sys.executable,
            "-m",
            "mcp_cli",
            "run",
            str(DEMO),
            "--",
            "math",
            "add",
            "1",
            "1",
            "&&",
            "files",
            "head",
            "/no/such/file",
        ],
        capture_output=True,
        text=True,
        timeout=budget(120),
        env=environment(),
    )
    assert failed.returncode != 0 and "[2/2] files head /no/such/file: failed" in failed.stdout + failed.stderr
    made = subprocess.run(
        [sys.executable, "-m", "mcp_cli", "export", str(DEMO)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=budget(300),
    )
    assert made.returncode == 0, made.stderr
    script = tmp_path / "demo" / "scripts" / "demo.sh"
    done = subprocess.run(
        ["sh", "-c", f"{script} text upper a ';' math add 2 3"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=budget(300),
        env=environment(),
    )
    assert done.returncode == 0 and done.stdout.endswith("[2/2] math add 2 3\n5\n"), done.stderr
