"""Every upstream tool has a command of its own: tools whose names are one in kebab-case (`getUser`, `get-user`,
`get_user`) each keep a distinct, stable name, whatever order the server lists them in; accented names are
folded to ASCII, names in other scripts kept. Checked through the one tool over stdio (a real MCP client) and
through `mcp-cli run`, against an SDK MCPServer that answers with the tool's own name. Servers whose config keys
are one in kebab-case (`team_memory`, `team-memory`, `TeamMemory`), or a key named like the root's `search`, each
keep a domain of their own, checked against three real server-memory processes."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_cli.cli.doctor import name_problems, schema_problems
from mcp_cli.sources import mcp_tools, tool_names
from mcp_cli.sources.mcp_config import Server
from mcp_cli.testing import ok
from mcp_cli.text import command_name, kebab
from mcp_cli.tree import Command, Group

from . import forked
from .conftest import NODE_BIN, ROOT, budget, served

pytestmark = pytest.mark.anyio
NAMES = ROOT / "tests" / "fixtures" / "upstreams" / "names.py"
LONG = "fetch_the_complete_quarterly_revenue_report_for_every_region_and_product_line"
# command -> the tool it must call
CALLS = {
    "get-user": "get-user",
    "getUser": "getUser",
    "get_user": "get_user",
    "creer-probleme": "créer_problème",
    "获取用户": "获取用户",
    "files-read": "files.read",
    LONG.replace("_", "-"): LONG,
}


@pytest.mark.parametrize(
    "name, command, ascii_name",
    [
        ("getUser", "get-user", "get-user"),
        ("créer_problème", "creer-probleme", "creer-probleme"),
        ("Straße_öffnen", "strasse-offnen", "strasse-offnen"),
        ("获取用户", "获取用户", "command"),
        ("get_Пользователь", "get-пользователь", "get"),
        ("が_list", "が-list", "list"),  # a kana keeps its voicing mark
        ("???", "command", "command"),
    ],
)
def test_command_names_fold_accents_and_keep_other_scripts(name, command, ascii_name):
    assert (command_name(name), kebab(name)) == (command, ascii_name)


def _commands(*tools: str) -> list[Command]:
    return [Command(command_name(t), handler={"kind": "mcp", "server": "s", "tool": t}, aliases=[t]) for t in tools]


def test_names_alike_get_the_same_commands_in_any_order():
    named = {}
    for order in (["getUser", "get-user", "get_user", "get user"], ["get user", "get_user", "get-user", "getUser"]):
        children = _commands(*order)
        tool_names.distinct(children)
        named[tuple(order)] = {c.handler.tool: c.name for c in children}
    first, second = named.values()
    assert first == second
    assert first["get-user"] == "get-user" and first["getUser"] == "getUser" and first["get_user"] == "get_user"
    assert first["get user"].startswith("get-user-") and len(set(first.values())) == 4  # no argv token: a suffix


def test_a_tool_named_like_a_subgroup_gets_a_name_of_its_own():
    children = [Group("issues", children=_commands("list_issues")), *_commands("issues", "labels")]
    tool_names.distinct(children)
    assert [c.name for c in children] == ["issues", "issues-2", "labels"]
    assert Group("g", children=children).child("issues-2").handler.tool == "issues"
    assert "`issues` is a group here; this is the tool `issues`." in children[1].description


@pytest.fixture(scope="module")
def config(tmp_path_factory):
    root = tmp_path_factory.mktemp("names")
    path = root / "team.json"
    path.write_text(json.dumps({"mcpServers": {"names": {"command": sys.executable, "args": [str(NAMES)]}}}))
    return {"path": path, "env": {"MCP_CLI_CACHE_DIR": str(root / "cache")}}


async def test_each_tool_is_called_by_its_own_command_over_stdio(config):
    async with served("serve", str(config["path"]), env=config["env"]) as client:
        (tool,) = (await client.list_tools()).tools  # what `mcp-cli doctor` says is served safely
        assert (tool.name, name_problems(tool.name), schema_problems(tool.input_schema)) == ("team", [], [])
        listing = await ok(client, "names", "--help")
        for command in CALLS:
            assert f"\n  {command} " in listing, listing
        for command, tool in CALLS.items():
            assert await ok(client, "names", command, "--value", "42") == f'{tool} got "42"'
        # the same through the `command` string, and the original names still reach their tools
        assert await ok(client, command="names 获取用户 --value 你好") == '获取用户 got "你好"'
        assert await ok(client, "names", "créer_problème") == 'créer_problème got ""'
        assert await ok(client, "names", "files.read") == 'files.read got ""'
        helped = await ok(client, "names", "getUser", "--help")
        assert "Tools with the same kebab-case name: `get-user`, `get_user`; this is the tool `getUser`." in " ".join(
            helped.split()
        )


def test_each_tool_is_called_by_its_own_command_through_run(config):
    env = {**os.environ, **config["env"]}
    for command, tool in CALLS.items():
        argv = ["run", str(config["path"]), "--", "names", command, "--value", "x"]
        proc = forked.mcp_cli(*argv, env=env, cwd=Path.cwd(), timeout=budget(60))
        assert (proc.returncode, proc.stdout) == (0, f'{tool} got "x"\n'), proc.stderr


def _domains(*keys: str) -> dict[str, str]:
    """{server key: its domain's name} in a tree built from servers listed in this order."""
    servers = [Server(k, {"command": "x"}) for k in keys]
    tools = {"tools": [{"name": "ping", "inputSchema": {"type": "object"}}]}
    tree = mcp_tools.build("team", servers, dict.fromkeys(keys, tools))
    return {c.handler.server: path[0] for path, c in tree.walk() if isinstance(c, Command) and c.handler.server}


def test_servers_alike_in_kebab_case_get_the_same_domains_in_any_order():
    keys = ["team-memory", "team_memory", "TeamMemory", "team memory", "search"]
    first, second = _domains(*keys), _domains(*reversed(keys))
    assert first == second
    assert {k: first[k] for k in keys if k != "team memory"} == {
        "team-memory": "team-memory",
        "team_memory": "team_memory",
        "TeamMemory": "TeamMemory",
        "search": "search-2",
    }
    assert first["team memory"].startswith("team-memory-") and len(set(first.values())) == 5  # no argv token


@pytest.fixture(scope="module")
def alike(tmp_path_factory):
    """Three server-memory processes under keys alike in kebab-case, and a server keyed `search`."""
    root = tmp_path_factory.mktemp("alike")
    memory = str(NODE_BIN / "mcp-server-memory")
    servers = {
        k: {"command": memory, "env": {"MEMORY_FILE_PATH": str(root / f"{k}.jsonl")}}
        for k in ("team_memory", "team-memory", "TeamMemory")
    }
    servers["search"] = {"command": sys.executable, "args": [str(NAMES)]}
    path = root / "team.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    return {"path": path, "env": {"MCP_CLI_CACHE_DIR": str(root / "cache")}}


async def test_each_server_alike_in_kebab_case_is_called_through_its_own_domain(alike):
    entity = json.dumps([{"name": "Ada", "entityType": "person", "observations": ["keyed team_memory"]}])
    async with served("serve", str(alike["path"]), env=alike["env"]) as client:
        root = await ok(client, "--help")
        for domain in ("team_memory", "team-memory", "TeamMemory", "search-2"):
            assert f"\n  {domain} " in root, root
        await ok(client, "team_memory", "create-entities", "--entities", entity)
        assert "keyed team_memory" in await ok(client, "team_memory", "read-graph")
        for other in ("team-memory", "TeamMemory"):  # a process of its own, with its own file: no Ada there
            assert "Ada" not in await ok(client, other, "read-graph")
        assert await ok(client, "search-2", "get-user", "--value", "1") == 'get-user got "1"'
        assert "Find commands" in await ok(client, "search", "--help")  # the root's search is still itself
        helped = " ".join((await ok(client, "TeamMemory", "--help")).split())
        assert (
            "Servers with the same kebab-case name: `team-memory`, `team_memory`; this is the server `TeamMemory`."
        ) in helped


def test_each_server_alike_in_kebab_case_is_called_through_run(alike):
    env = {**os.environ, **alike["env"]}
    argv = [
        sys.executable,
        "-m",
        "mcp_cli",
        "run",
        str(alike["path"]),
        "--",
        "TeamMemory",
        "search-nodes",
        "--query",
        "nobody",
    ]
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=Path.cwd(), timeout=budget(90))
    assert proc.returncode == 0 and '"entities": []' in proc.stdout, proc.stdout + proc.stderr
