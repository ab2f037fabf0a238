"""Token budgets, next parts and compact forms, end to end: a real MCP client over stdio (and streamable HTTP for
stateless replicas) against `mcp-cli serve` of real servers (npm server-memory holding 600 entities), and
`mcp-cli run` in fresh processes."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import httpx2
import pytest
from mcp import Client

from mcp_cli.result import tokens
from mcp_cli.testing import call, ok, served

from .conftest import NODE_BIN, budget, free_port, wait_for_port

pytestmark = pytest.mark.anyio
ENTITIES = 600
NEXT = re.compile(r"Next part: `(graph [^`]*)`")


def graph_file(path) -> None:
    """A server-memory store of ENTITIES people, each knowing the next."""
    lines = [
        {
            "type": "entity",
            "name": f"person-{i:03}",
            "entityType": "person",
            "observations": [f"works on project {i % 37}", f"joined in {2000 + i % 25}"],
        }
        for i in range(ENTITIES)
    ]
    lines += [
        {"type": "relation", "from": f"person-{i:03}", "to": f"person-{i + 1:03}", "relationType": "knows"}
        for i in range(ENTITIES - 1)
    ]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")


@pytest.fixture
def world(tmp_path):
    store = tmp_path / "memory.jsonl"
    graph_file(store)
    config = tmp_path / "graph.json"  # the tool: `graph`, its domain `memory`
    server = {"command": str(NODE_BIN / "mcp-server-memory"), "env": {"MEMORY_FILE_PATH": str(store)}}
    config.write_text(json.dumps({"mcpServers": {"memory": server}}))
    return {"config": config, "store": store, "cache": tmp_path / "cache"}


def serving(world, *more: str):
    return served("serve", str(world["config"]), *more, env={"MCP_CLI_CACHE_DIR": str(world["cache"])})


def names(text: str) -> list[str]:
    return re.findall(r"person-\d{3}", text)


async def test_a_big_answer_is_cut_with_a_note_and_read_on_from_the_kept_answer(world):
    async with serving(world) as client:
        first = await call(client, "--format", "json", "memory", "read-graph")
        assert first.ok and tokens(first.text) <= 8_000 and len(first.text) > 15_000  # the default budget, well used
        assert "[cut to the 8,000-token budget: items 1-" in first.text and " of 1,199 (entities 1-" in first.text
        assert first.structured["part"]["next"] and "data" not in first.structured  # the whole is not sent aside
        nxt = NEXT.search(first.text).group(1)
        assert nxt.startswith("graph --format json --more ") and nxt.endswith(" memory read-graph")
        json.loads(first.text[: first.text.rindex("\n[cut to")])  # each part is valid JSON: whole items only
        # the upstream changes; the next parts still come from the answer as it was, not from calling it again
        await ok(client, "memory", "delete-entities", "--entity-names", "person-599")
        seen, parts = names(first.text), 1
        while nxt:
            part = await call(client, command=nxt)
            assert part.ok and tokens(part.text) <= 8_000, part.text[-300:]
            seen += names(part.text)
            found = NEXT.search(part.text)
            nxt, parts = found.group(1) if found else None, parts + 1
        assert ": the end.]" in part.text
        entities = [n for n in dict.fromkeys(seen)]
        assert entities[:ENTITIES] == [f"person-{i:03}" for i in range(ENTITIES)]  # person-599 too: the kept answer
        assert parts >= 3
        assert "person-599" not in await ok(client, "memory", "search-nodes", "--query", "person-599")


async def test_budgets_per_call_and_per_serving_flag(world):
    async with serving(world, "--budget", "2000") as client:
        small = await call(client, "memory", "read-graph")
        assert "[cut to the 2,000-token budget:" in small.text and tokens(small.text) <= 2_000
        bigger = await call(client, "--budget", "5000", "memory", "read-graph")
        assert "[cut to the 5,000-token budget:" in bigger.text and 2_000 < tokens(bigger.text) <= 5_000
        after = await call(client, "memory", "read-graph", "--budget=3000")  # read-graph has no --budget
        assert "[cut to the 3,000-token budget:" in after.text
        assert "graph --budget 3000 --more " in after.text  # the next part keeps the call's budget
        bad = await call(client, "--budget", "ten", "memory", "read-graph")
        assert not bad.ok and "--budget takes a number of tokens, at least 500, not 'ten'; give a whole" in bad.text
        fits = await ok(client, "memory", "open-nodes", "--names", "person-001")  # small answers pass as they came
        assert "[" not in fits.splitlines()[-1] and json.loads(fits)["entities"][0]["name"] == "person-001"


async def test_an_unknown_or_expired_id_says_which_call_to_run_again(world):
    async with serving(world) as client:
        missing = await call(client, "--more", "Zz9Zz9:41", "memory", "read-graph")
        assert not missing.ok and missing.structured["error"] == "not_found"
        assert "no kept answer `Zz9Zz9` here" in missing.text and "expired" in missing.text
        assert "run the call again (`graph memory read-graph`)" in missing.text
        badly = await call(client, "--more", "41")
        assert not badly.ok and "--more takes ID:FROM" in badly.text
        first = await call(client, "memory", "read-graph")
        key = first.structured["part"]["id"]
        beyond = await call(client, "--more", f"{key}:5000", "memory", "read-graph")
        assert not beyond.ok and f"--more takes {key}:1 to {key}:1199" in beyond.text
        assert (
            (await call(client, "--more", f"{key}:1199", "memory", "read-graph")).text.rstrip().endswith("gives JSON.]")
        )


async def test_compact_forms(world):
    async with serving(world) as client:
        whole = await call(client, "--budget", "200000", "--format", "json", "memory", "read-graph")
        graph = json.loads(whole.text)
        assert len(graph["entities"]) == ENTITIES and "[" not in whole.text.splitlines()[-1][:1]
        toon = await ok(client, "--budget", "200000", "--format", "toon", "memory", "read-graph")
        assert (
            toon.startswith(f"entities[{ENTITIES}]:") and f"relations[{ENTITIES - 1}]{{from,to,relationType}}:" in toon
        )
        assert tokens(toon) < tokens(whole.text)
        auto = await ok(client, "--budget", "200000", "memory", "read-graph")  # big and list-shaped: TOON by default
        assert auto.startswith("entities[") and auto.rstrip().endswith("`--format json` gives JSON.]")
        table = await ok(client, "--budget", "200000", "--format", "table", "memory", "read-graph")
        assert f"relations ({ENTITIES - 1}):\nfrom | to | relationType\nperson-000 | person-001 | knows" in table
        bad = await call(client, "--format", "xml", "memory", "read-graph")
        assert not bad.ok and "--format takes one of json, toon, table, not 'xml'." in bad.text


# A command with its own --budget option keeps it; before the path, --budget is the runtime's.
OWN = {
    "format": "mcp-cli/tree",
    "version": 1,
    "root": {
        "kind": "group",
        "name": "lines",
        "children": [
            {
                "kind": "command",
                "name": "many",
                "summary": "Many numbered lines.",
                "params": [{"name": "budget", "flags": ["--budget"], "type": "integer", "default": 0}],
                "handler": {
                    "kind": "subprocess",
                    "command": [
                        "{python}",
                        "-c",
                        "import sys; print('own budget', sys.argv[-1]); [print(f'line {i}') for i in range(20000)]",
                    ],
                },
            },
        ],
    },
}


@pytest.fixture
def lines_tree(tmp_path):
    tree = tmp_path / "lines.json"
    tree.write_text(json.dumps(OWN))
    return tree


async def test_a_command_keeps_its_own_option_of_the_same_name(lines_tree):
    async with served("serve", str(lines_tree)) as client:
        own = await ok(client, "many", "--budget", "7")
        assert own.startswith("own budget 7\n") and "[cut to the 8,000-token budget: lines 1-" in own
        ours = await ok(client, "--budget", "1000", "many", "--budget", "7")
        assert ours.startswith("own budget 7\n") and "[cut to the 1,000-token budget: lines 1-" in ours


def replica(tree, port: int) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcp_cli", "serve", str(tree), "--http", f"127.0.0.1:{port}", "--stateless"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    wait_for_port(port, proc)
    return proc


async def test_stateless_replicas_read_on_where_the_answer_is_kept_and_say_so_elsewhere(lines_tree):
    ports = [free_port()]
    procs = [replica(lines_tree, ports[0])]
    ports.append(free_port())
    procs.append(replica(lines_tree, ports[1]))
    try:
        urls = [f"http://127.0.0.1:{p}/mcp" for p in ports]
        async with Client(urls[0]) as one, Client(urls[1]) as other:
            first = await call(one, "many", tool="lines")
            nxt = re.search(r"Next part: `([^`]*)`", first.text).group(1)
            elsewhere = await call(other, command=nxt, tool="lines")
            assert not elsewhere.ok and "kept by another replica of a --stateless server" in elsewhere.text
            assert "run the call again (`lines many`)" in elsewhere.text
            here = await call(one, command=nxt, tool="lines")  # the same replica has it (no session: by its id)
            assert here.ok and "lines 1-" not in here.text and re.search(r"\[cut to the .*: lines \d", here.text)
            # OpenAPI /run on the same replica honours the budget too
            run = httpx2.post(
                f"http://127.0.0.1:{ports[0]}/run", json={"argv": ["--budget", "800", "many"]}, timeout=budget(30)
            )
            assert "[cut to the 800-token budget: lines 1-" in run.json()["output"]
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(timeout=budget(10))


def run(tree, *argv: str, cache) -> str:
    env = {**os.environ, "MCP_CLI_CACHE_DIR": str(cache)}
    done = subprocess.run(
        [sys.executable, "-m", "mcp_cli", "run", *argv[:2], str(tree), *argv[2:]],
        capture_output=True,
        text=True,
        env=env,
        timeout=budget(60),
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_mcp_cli_run_honours_budgets_and_reads_on_in_the_next_process(world, tmp_path):
    first = run(world["config"], "--budget", "1000", "memory", "read-graph", cache=world["cache"])
    assert tokens(first) <= 1000 and "[cut to the 1,000-token budget: items 1-" in first
    nxt = re.search(r"Next part: `(\S+) run (\S+) -- --budget 1000 --more (\S+) memory read-graph`", first)
    assert nxt.group(1).endswith("mcp-cli") and nxt.group(2) == str(world["config"])  # as a shell runs it
    path = f"{Path(sys.executable).parent}:/usr/bin:/bin"  # where `mcp-cli` is installed
    env = {**os.environ, "MCP_CLI_CACHE_DIR": str(world["cache"]), "PATH": path}
    printed = nxt.group(0).removeprefix("Next part: `").removesuffix("`")
    second = subprocess.run(
        printed, shell=True, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=budget(60)
    )
    assert second.returncode == 0, second.stderr
    assert names(second.stdout) and names(second.stdout)[0] > names(first)[-1]  # read on where the first stopped


async def test_the_meta_surface_reads_on_through_call_tool(world):
    async with serving(world, "--surface", "meta") as client:
        first = await client.call_tool("call_tool", {"name": "memory read-graph"})
        text = first.content[0].text
        nxt = NEXT.search(text).group(1)
        second = await client.call_tool("call_tool", {"name": nxt})
        assert not second.is_error and names(second.content[0].text)[0] > names(text)[-1]


async def test_call_tool_takes_a_budget_and_a_format(world):
    async with serving(world, "--surface", "meta") as client:
        schema = {t.name: t for t in (await client.list_tools()).tools}["call_tool"].input_schema["properties"]
        assert schema["budget"]["minimum"] == 500 and schema["format"]["enum"] == ["json", "toon", "table"]
        first = await client.call_tool("call_tool", {"name": "memory read-graph", "budget": 1000, "format": "json"})
        text = first.content[0].text
        assert not first.is_error and tokens(text) <= 1000 and "[cut to the 1,000-token budget: items 1-" in text
        json.loads(text[: text.rindex("\n[cut to")])  # JSON as asked, not the TOON big answers get by default
        nxt = NEXT.search(text).group(1)
        assert nxt.startswith("graph --budget 1000 --format json --more ") and nxt.endswith(" memory read-graph")
        second = (await client.call_tool("call_tool", {"name": nxt, "budget": 2000})).content[0].text
        assert "[cut to the 2,000-token budget: items " in second and names(second)[0] > names(text)[-1]
        table = await client.call_tool(
            "call_tool",
            {"name": "memory open-nodes", "format": "table", "arguments": {"names": ["person-001", "person-002"]}},
        )
        assert "relations (3):\nfrom | to | relationType\n" in table.content[0].text
        piped = (
            (await client.call_tool("call_tool", {"name": "memory read-graph", "then": "jq .entities", "budget": 1000}))
            .content[0]
            .text
        )
        nxt = NEXT.search(piped).group(1)  # a pipeline's next part names its stages
        assert "[cut to the 1,000-token budget: items 1-" in piped and nxt.endswith(" memory read-graph | jq .entities")
        more = (await client.call_tool("call_tool", {"name": nxt})).content[0].text
        assert names(more)[0] > names(piped)[-1]
        bad = await client.call_tool("call_tool", {"name": "memory read-graph", "budget": 10})
        assert bad.is_error and "`budget`: 10 is less than the minimum of 500" in bad.content[0].text


def test_an_exported_skill_honours_budgets_and_reads_on(world, tmp_path):
    env = {**os.environ, "MCP_CLI_CACHE_DIR": str(world["cache"])}
    made = subprocess.run(
        [sys.executable, "-m", "mcp_cli", "export", str(world["config"]), "-o", "skills/graph"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=budget(300),
        env=env,
    )
    assert made.returncode == 0, made.stderr
    script = tmp_path / "skills" / "graph" / "scripts" / "graph.sh"

    def shell(*argv: str) -> str:
        done = subprocess.run([str(script), *argv], capture_output=True, text=True, timeout=budget(120), env=env)
        assert done.returncode == 0, done.stderr
        return done.stdout

    first = shell("--budget", "1000", "memory", "read-graph")
    assert tokens(first) <= 1000 and "[cut to the 1,000-token budget: items 1-" in first
    nxt = re.search(r"Next part: `([^`]*)`", first).group(1)
    assert nxt.startswith(f"{script} --budget 1000 --more ")  # the script as it was run
    second = subprocess.run(nxt, shell=True, capture_output=True, text=True, timeout=budget(120), env=env)  # printed
    assert second.returncode == 0, second.stderr
    assert names(second.stdout)[0] > names(first)[-1]
