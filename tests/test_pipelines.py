"""Pipelines in one call (`engine/pipeline.py`): real `mcp-cli serve` processes wrapping real MCP servers (npm
server-filesystem, server-memory, server-everything) and serving a skill whose script reads its standard input,
driven by a real MCP client over stdio; the meta-tools surface, streamable HTTP with scopes, OpenAPI /run and
`mcp-cli run` take pipelines too."""

import json
import subprocess
import sys

import httpx2
import pytest

from mcp_cli.engine.pipeline import split_command
from mcp_cli.testing import ainvoke, call, ok, served

from . import forked
from .conftest import NODE_BIN, ROOT, budget, text
from .skills import write_skill
from .test_http_security import environment, server
from .test_scopes import connect

pytestmark = pytest.mark.anyio

PEOPLE = ["Ada", "Alan", "Grace"]
EMIT = '''"""Print the numbers 1..N as a JSON array."""
import argparse
import json

parser = argparse.ArgumentParser(description="Print the numbers 1..N as a JSON array.")
parser.add_argument("--count", type=int, default=3, help="How many.")
print(json.dumps(list(range(1, parser.parse_args().count + 1))))
'''
TALLY = '''"""Count and sum the JSON array read on standard input."""
import argparse
import json
import sys

parser = argparse.ArgumentParser(description="Count and sum the JSON array on standard input.")
parser.add_argument("--label", default="items", help="The name of the count.")
args = parser.parse_args()
values = json.load(sys.stdin)
print(json.dumps({args.label: len(values), "sum": sum(values)}))
'''
HEAD = '''"""Print the first line of standard input, marked."""
import sys

print("first: " + (sys.stdin.readline().strip() or "(nothing)"))
'''
SCOPES = """
[[scope]]
name = "readers"
token_env = "READER_TOKEN"
paths = ["files *", "memory *"]
read_only = true
"""
READER = "pipeline reader token"


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """Files, a memory graph of three people, a config wrapping three real servers, and a skill of two scripts."""
    root = tmp_path_factory.mktemp("pipes")
    files = root / "files"
    (files / "sub").mkdir(parents=True)
    (files / "a.txt").write_text("alpha\nbeta\ngamma\ndelta\n")
    (files / "b.txt").write_text("bravo\n")
    memory = root / "memory.jsonl"
    memory.write_text(
        "".join(
            json.dumps({"type": "entity", "name": n, "entityType": "person", "observations": [f"{n} programmed"]})
            + "\n"
            for n in PEOPLE
        )
    )
    config = root / "team.json"
    config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "files": {"command": str(NODE_BIN / "mcp-server-filesystem"), "args": [str(files)]},
                    "memory": {
                        "command": str(NODE_BIN / "mcp-server-memory"),
                        "env": {"MEMORY_FILE_PATH": str(memory)},
                    },
                    "everything": {"command": str(NODE_BIN / "mcp-server-everything")},
                }
            }
        )
    )
    scripts = {"scripts/emit.py": EMIT, "scripts/tally.py": TALLY, "scripts/head.py": HEAD}  # head: like a built-in
    skill = write_skill(root / "numbers", "Make and count numbers.", scripts)
    (root / "scopes.toml").write_text(SCOPES)
    env = {"MCP_CLI_CACHE_DIR": str(root / "cache")}
    return {"root": root, "files": files, "memory": memory, "config": config, "skill": skill, "env": env}


@pytest.fixture(scope="module")
async def team(world):
    async with served("serve", str(world["config"]), cwd=world["root"], env=world["env"]) as client:
        yield client


async def failed(client, command: str, kind: str, *said: str) -> str:
    """The message of a call that must fail with `kind`, holding each of `said`."""
    reply = await call(client, command=command)
    assert not reply.ok and reply.structured["error"] == kind, reply.text
    for part in said:
        assert part in reply.text, reply.text
    return reply.text


async def test_jq_filters_a_real_tool_s_json_and_only_the_last_stage_answers(team):
    names = await ok(team, command="memory read-graph | jq -r '.entities[].name'")
    assert names == "Ada\nAlan\nGrace\n"
    assert await ok(team, command="memory read-graph | jq '.entities | length'") == "3\n"
    reply = await call(team, "memory", "read-graph", "|", "jq", ".entities | map(.name)")  # argv: a lone `|`
    assert reply.ok and json.loads(reply.text) == PEOPLE and "observations" not in reply.text


async def test_head_and_tail_take_lines_of_text_and_items_of_arrays(team, world):
    path = world["files"] / "a.txt"
    assert await ok(team, command=f"files read-text-file --path {path} | head 2") == "alpha\nbeta\n"
    assert await ok(team, command=f"files read-text-file --path {path} | tail -n 1") == "delta\n"
    last = await ok(team, command="memory read-graph | jq .entities | tail 1 | jq -r '.[0].name'")
    assert last == "Grace\n"
    assert json.loads(await ok(team, command="memory read-graph | jq '[.entities[].name]' | head 2")) == PEOPLE[:2]


async def test_each_runs_a_command_per_item_with_fields_and_reports_a_failing_item_beside_the_others(team, world):
    folder = world["files"]
    command = (
        f"files directory-tree --path {folder} | jq '[.[] | {{path: (\"{folder}/\" + .name), name}}]' "
        "| each files read-text-file --path {.path}"
    )
    reply = await call(team, command=command)
    assert reply.ok, reply.text
    rows = json.loads(reply.text.splitlines()[0])
    assert [r["item"]["name"] for r in rows] == ["a.txt", "b.txt", "sub"]  # in the items' order
    assert [r["ok"] for r in rows] == [True, True, False]
    assert rows[0]["output"] == "alpha\nbeta\ngamma\ndelta\n" and rows[1]["output"] == "bravo\n"
    assert "EISDIR" in rows[2]["error"]  # reading a folder as a file: the upstream's own error
    assert "[each: 1 of 3 items failed" in reply.text
    missing = json.loads(
        (
            await ok(team, command="memory read-graph | jq .entities | each everything echo --message {.nope}")
        ).splitlines()[0]
    )
    assert [r["error"] for r in missing] == ["the item has no field .nope"] * 3


async def test_an_upstream_tool_takes_an_object_as_its_arguments_under_the_options_given(team, world):
    folder = world["files"]
    first = f"files directory-tree --path {folder} | jq '{{path: (\"{folder}/\" + .[0].name)}}' | files read-text-file"
    assert await ok(team, command=first) == "alpha\nbeta\ngamma\ndelta\n"
    summed = await ok(
        team, command="memory read-graph | jq '{a: (.entities | length), b: 1000}' | everything get-sum --b 39"
    )
    assert "The sum of 3 and 39 is 42." in summed  # the option given wins over the object's b


async def test_an_object_s_keys_may_name_options_as_their_flags_do(team, world):
    def listed(key: str, order: str) -> str:
        fields = json.dumps({"path": str(world["files"]), key: order})
        return f"memory read-graph | jq '{fields}' | files list-directory-with-sizes"

    sized = await ok(team, command=listed("sort-by", "size"))
    named = await ok(team, command=listed("sortBy", "size"))  # the property's own name, as before
    assert sized == named and sized != await ok(team, command=listed("sort-by", "name"))


async def test_a_script_reads_the_previous_stage_on_its_standard_input(world):
    async with served("serve", str(world["skill"]), env=world["env"]) as client:
        assert json.loads(await ok(client, command="emit --count 4 | tally --label n")) == {"n": 4, "sum": 10}
        doubled = await ok(client, command="emit --count 3 | jq 'map(. * 2)' | tally")
        assert json.loads(doubled) == {"items": 3, "sum": 12}
        await failed(client, "emit --count 3 | tally --nope", "usage", "stage 2 (tally --nope)", "--nope")
        # a command named like a built-in: the tree's in the first stage, the built-in after, the tree's again
        # after the tool's name
        assert await ok(client, command="head") == "first: (nothing)\n"
        assert json.loads(await ok(client, command="emit --count 3 | head 1")) == [1]
        assert await ok(client, command="emit --count 3 | numbers head") == "first: [1, 2, 3]\n"
        dry = await ok(client, command="--dry-run emit | tally --label n")
        assert "stage 2: tally --label n" in dry and "on stdin" in dry and "nothing run" in dry


async def test_save_writes_the_whole_result_in_the_caller_s_folder_and_answers_a_summary(team, world):
    summary = await ok(team, command="memory read-graph | jq .entities | save graph.json")
    saved = world["root"] / "graph.json"
    assert [e["name"] for e in json.loads(saved.read_text())] == PEOPLE
    assert summary.startswith(f"Saved {saved.stat().st_size:,} bytes to graph.json: a JSON array of 3 items.")
    assert '"name": "Ada"' in summary and len(summary) < 1_000
    for outside in ("../graph.json", "/tmp/graph.json", "."):
        await failed(team, f"memory read-graph | save {outside}", "usage", "stage 2 (save", "caller's folder")
    await failed(team, "memory read-graph | save x.json | head 1", "usage", "make it the last stage")


async def test_a_dry_run_shows_the_planned_calls_and_runs_nothing(team, world):
    before = world["memory"].read_text()
    zed = json.dumps([{"name": "Zed", "entityType": "person", "observations": []}])
    dry = await ok(team, command=f"--dry-run memory create-entities --entities '{zed}' | jq '.[0]' | head 1")
    assert dry.startswith("Dry run: 3 stages, nothing run.")
    assert "upstream tool `create_entities` of server `memory`" in dry and '"name": "Zed"' in dry
    assert "stage 2: jq '.[0]'" in dry and "stage 3: head 1" in dry
    single = await ok(team, command="--dry-run everything get-sum --a 1 --b 2")  # one call: its arguments
    assert 'arguments {"a": 1, "b": 2}' in single
    assert world["memory"].read_text() == before


async def test_every_stage_is_checked_before_any_runs(team, world):
    before = world["memory"].read_text()
    zed = json.dumps([{"name": "Zed", "entityType": "person", "observations": []}])
    write = f"memory create-entities --entities '{zed}'"
    for bad, kind, said in [
        ("jq '.['", "usage", ["stage 2 (jq '.[')", "bad jq filter"]),
        ("nope", "not_found", ["stage 2 (nope)", "no domain `nope`"]),
        ("files read-text-file --nope 1", "usage", ["stage 2 (files read-text-file --nope 1)", "--nope"]),
        ("each memory nope {}", "not_found", ["stage 2 (each memory nope '{}')", "no command `nope`"]),
        ("each memory open-nodes --nmes {}", "usage", ["stage 2", "no option --nmes"]),
        ("head many", "usage", ["stage 2 (head many)", "whole number"]),
        ("jq . | memory --help", "usage", ["stage 3 (memory --help)", "takes no input"]),
    ]:
        await failed(team, f"{write} | {bad}", kind, *said)
    await failed(team, f"| {write}", "usage", "starts with `|`")
    await failed(team, f"{write} |", "usage", "ends with `|`")
    await failed(team, f"{write} | | head", "usage", "stage 2 is empty")
    await failed(team, f"{write}{' | head 1' * 999}", "usage", "1,000 stages", "more than the 32")
    await failed(team, "jq . | head 1", "usage", "stage 1 (jq .)", "built-in")
    await failed(team, "--dry-run", "usage", "give one after it")
    assert world["memory"].read_text() == before  # nothing ran
    assert "Ada" in await ok(team, command="memory read-graph")  # and the server keeps serving


async def test_a_stage_that_fails_stops_the_pipeline_and_is_named(team, world):
    listing = f"files list-directory --path {world['files']}"
    await failed(team, f"{listing} | jq .", "usage", "stage 2 (jq .) of 2 failed", "not JSON", "[FILE] a.txt")
    await failed(
        team,
        "memory read-graph | each everything echo --message {}",
        "usage",
        "stage 2 (each",
        "a JSON object of 2 keys (entities, relations)",
    )
    await failed(
        team,
        "memory read-graph | jq '[range(150)]' | each everything echo --message {}",
        "usage",
        "stage 3 (each",
        "at most 100 items",
        "has 150",
    )
    await failed(
        team,
        "memory read-graph | jq '{path: \"/nowhere/x.txt\"}' | files read-text-file | head 1",
        "upstream",
        "stage 3 (files read-text-file) of 4 failed",
    )
    await failed(
        team,
        "memory read-graph | jq '[1]' | files read-text-file",
        "usage",
        "stage 3 (files read-text-file) of 3 failed",
        "takes a JSON object",
        "a JSON array of 1 item",
    )
    await failed(team, "memory read-graph | jq '.entities[0].name | ltrimstr(1)'", "handler", "stage 2", "jq:")


async def test_quoted_bars_and_shell_syntax_are_data(team):
    said = await ok(team, command="everything echo --message 'a|b > c $(whoami) `id`'")
    assert "Echo: a|b > c $(whoami) `id`" in said
    assert "Echo: x|y" in await ok(team, "everything", "echo", "--message", "x|y")
    assert "Echo: |" in await ok(team, command="everything echo --message \\|")


async def test_meta_call_tool_pipes_its_output_through_then(world):
    async with served("serve", str(world["config"]), "--surface", "meta", env=world["env"]) as client:
        result = await client.call_tool(
            "call_tool", {"name": "memory read-graph", "then": "jq -r '.entities[].name' | head 2"}
        )
        assert not result.is_error and text(result) == "Ada\nAlan\n"
        bad = await client.call_tool("call_tool", {"name": "memory read-graph", "then": "jq '.['"})
        assert bad.is_error and "stage 2 (jq '.[')" in text(bad)


def test_mcp_cli_run_takes_a_pipeline_in_argv(world):
    def run(*argv: str) -> subprocess.CompletedProcess:
        return forked.mcp_cli("run", *argv, env=environment(**world["env"]), cwd=world["root"], timeout=budget(120))

    names = ["jq", "-r", ".entities[].name"]
    done = run(str(world["config"]), "--", "memory", "read-graph", "|", *names, "|", "tail", "1")
    assert (done.returncode, done.stdout) == (0, "Grace\n"), done.stderr
    done = run(str(world["skill"]), "--", "emit", "--count", "2", "|", "tally")  # the last stage's output, captured
    assert json.loads(done.stdout) == {"items": 2, "sum": 3}
    done = run(str(world["skill"]), "--", "emit", "|", "jq", ".[")
    assert done.returncode == 2 and "stage 2 (jq '.[')" in done.stderr and done.stdout == ""


def test_an_exported_skill_s_script_takes_a_pipeline(tmp_path):
    demo = ROOT / "examples" / "demo" / "demo.json"
    made = subprocess.run(
        [sys.executable, "-m", "mcp_cli", "export", str(demo)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=budget(300),
    )
    assert made.returncode == 0, made.stderr
    assert "'|' jq FILTER '|' head N" in (tmp_path / "demo" / "SKILL.md").read_text()
    script = tmp_path / "demo" / "scripts" / "demo.sh"
    done = subprocess.run(
        ["sh", "-c", f"{script} math add 2 3 '|' jq '. * 2'"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=budget(300),
        env=environment(),
    )
    assert (done.returncode, done.stdout) == (0, "10\n"), done.stderr


@pytest.fixture(scope="module")
def http(world):
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
        yield url


async def test_scopes_and_read_only_apply_to_every_stage(http, world):
    async with connect(http, READER) as reader:
        assert await ok(reader, command="memory read-graph | jq '.entities | length'") == "3\n"
        # read-only: create-entities is not in this scope's tree, in any stage, as if it did not exist
        await failed(
            reader,
            "memory read-graph | jq '{entities: []}' | memory create-entities",
            "not_found",
            "stage 3 (memory create-entities)",
            "no command `create-entities`",
        )
        await failed(
            reader,
            "memory read-graph | each everything echo --message {}",
            "not_found",
            "stage 2 (each everything echo",
            "no domain `everything`",
        )
    assert "Zed" not in world["memory"].read_text()


def test_openapi_run_takes_a_pipeline(http):
    base = http.removesuffix("/mcp")
    body = {"command": "memory read-graph | jq -r '.entities[-1].name'"}
    answer = httpx2.post(f"{base}/run", json=body, headers={"Authorization": f"Bearer {READER}"}, timeout=budget(60))
    assert answer.status_code == 200 and answer.json()["output"] == "Grace\n", answer.text
    body = {"argv": ["memory", "read-graph", "|", "save", "x.json"]}  # no caller's folder over HTTP
    answer = httpx2.post(f"{base}/run", json=body, headers={"Authorization": f"Bearer {READER}"}, timeout=budget(60))
    assert answer.json()["error"] == "usage" and "stage 2 (save x.json)" in answer.json()["message"]


async def test_the_root_help_names_the_grammar():
    root = await ainvoke(ROOT / "examples" / "demo" / "demo.json", "--help")
    assert "\nPipe with |: jq, head, tail, each, save (`each --help`); run several with ; or &&.\n" in root.output


@pytest.mark.parametrize(
    "command, pieces",
    [
        ("a | b", ["a ", " b"]),
        ("a|b|c", ["a", "b", "c"]),
        ("echo '|' | b", ["echo '|' ", " b"]),
        ('echo "x | y" | b', ['echo "x | y" ', " b"]),
        ("echo \\| | b", ["echo \\| ", " b"]),
        ('echo "it\'s | ok"', None),  # a quoted `|` only: not a pipeline
        ("echo 'open | b", None),  # a quote left open: not split here (the whole call then says what is wrong)
        ("a > b $(c)", None),
    ],
)
def test_a_command_is_cut_at_each_unquoted_bar(command, pieces):
    assert split_command(command) == pieces
