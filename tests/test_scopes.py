"""Per-client scopes (`serve --http --scopes FILE`): real server processes wrapping two real MCP servers (filesystem
and memory, whose tools carry read-only hints), three bearer tokens (two from environment variables, one given as a
SHA-256 hash) seeing different trees through a real MCP client over streamable HTTP, on the one-tool surface
(sessions) and the meta-tools surface (stateless)."""

import hashlib
import json
import subprocess
import sys
from contextlib import asynccontextmanager

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from mcp_cli.engine.runtime import Runtime
from mcp_cli.surfaces.scopes import View, load, prune
from mcp_cli.testing import call, envelope, ok
from mcp_cli.tree import Command, Tree

from .conftest import DEMO, NODE_BIN, ROOT, budget, text
from .test_http_security import LAUNCHER, environment, post, server

pytestmark = pytest.mark.anyio

FILES, READER, WRITER = "files team token", "memory reader token", "memory writer token"
SCOPES = f"""
[[scope]]
name = "files-team"
token_env = "FILES_TOKEN"
paths = ["files *"]

[[scope]]
name = "memory-readers"
token_env = "READER_TOKEN"
paths = ["memory *", "jira *"]
read_only = true

[[scope]]
name = "memory-writers"
token_sha256 = "{hashlib.sha256(WRITER.encode()).hexdigest()}"
paths = ["memory"]
"""
READS = ["open-nodes", "read-graph", "search-nodes"]  # the memory server's tools with readOnlyHint: true
RESOURCES = "resources"  # the memory server's resources group (memory://knowledge-graph): read-only commands
MODES = pytest.mark.parametrize("mode", ["legacy", "auto"])  # the initialize handshake (sessions), the 2026 protocol


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """A config wrapping server-filesystem and server-memory, a scopes file, and the environment to serve them."""
    root = tmp_path_factory.mktemp("scopes")
    (root / "files").mkdir()
    (root / "team.json").write_text(
        json.dumps(
            {
                "mcpServers": {
                    "files": {"command": str(NODE_BIN / "mcp-server-filesystem"), "args": [str(root / "files")]},
                    "memory": {
                        "command": str(NODE_BIN / "mcp-server-memory"),
                        "env": {"MEMORY_FILE_PATH": str(root / "memory.jsonl")},
                    },
                }
            }
        )
    )
    (root / "scopes.toml").write_text(SCOPES)
    env = environment(FILES_TOKEN=FILES, READER_TOKEN=READER, MCP_CLI_CACHE_DIR=str(root / "cache"))
    return {"root": root, "env": env}


def serving(world, *args: str):
    command = [sys.executable, "-m", "mcp_cli", "serve", str(world["root"] / "team.json")]
    scopes = ["--scopes", str(world["root"] / "scopes.toml")]
    return server(command, "127.0.0.1", "127.0.0.1", *scopes, *args, env=world["env"])


@pytest.fixture(scope="module")
def tool_server(world):
    with serving(world) as (url, proc):
        yield url, proc


@pytest.fixture(scope="module")
def meta_server(world):
    with serving(world, "--surface", "meta", "--stateless") as (url, _):
        yield url


@asynccontextmanager
async def connect(url: str, token: str, mode: str = "auto"):
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=budget(60)) as http:
        async with Client(streamable_http_client(url, http_client=http), mode=mode) as client:
            yield client


def listed(help_text: str) -> list[str]:
    """The names a listing shows: the rows under its headings (`Domains:`, `Commands:`), not its usage nor the
    usage lines a small group shows under its rows."""
    names, heading = [], ""
    for line in help_text.splitlines():
        if line.endswith(":") and not line.startswith(" "):
            heading = line
        elif line.startswith("  ") and line[2:3] != " " and heading != "Usage:":
            names.append(line.split()[0])
    return sorted(names)


@MODES
async def test_each_token_sees_its_own_tree(tool_server, mode):
    url, _ = tool_server
    async with connect(url, FILES, mode) as files, connect(url, READER, mode) as reader:
        [files_tool] = (await files.list_tools()).tools
        [reader_tool] = (await reader.list_tools()).tools
        assert files_tool.name == reader_tool.name == "team"
        assert "Run `files --help`" in files_tool.description and "memory" not in files_tool.description
        assert "Run `memory --help`" in reader_tool.description and "files" not in reader_tool.description
        assert "memory" not in files.instructions and "files" not in files.instructions

        assert listed(await ok(files, "--help")) == ["files", "search"]
        assert listed(await ok(reader, "--help")) == ["memory", "search"]
        assert "write-file" in await ok(files, "files", "--help")
        assert listed(await ok(reader, "memory", "--help")) == sorted([*READS, RESOURCES])


async def test_a_denied_path_answers_as_an_unknown_one(tool_server):
    url, _ = tool_server
    async with connect(url, FILES) as files, connect(url, READER) as reader:
        for client, denied, unknown, argv in [
            (files, "memory", "qqqqqq", ["{}", "read-graph"]),
            (files, "memory", "qqqqqq", ["{}", "--help"]),
            (reader, "files", "qqqqq", ["{}", "list-directory", "--path", "."]),
            (reader, "create-entities", "qqqqqq-qqqqqqq", ["memory", "{}", "--help"]),
            (reader, "delete-entities", "qqqqqq-qqqqqqq", ["memory", "{}"]),
        ]:
            no = await call(client, *[a.format(denied) for a in argv])
            unheard = await call(client, *[a.format(unknown) for a in argv])
            assert not no.ok and no.structured["error"] == "not_found"
            assert no.text.replace(denied, "?") == unheard.text.replace(unknown, "?")
            structured = json.dumps(no.structured), json.dumps(unheard.structured)
            assert structured[0].replace(denied, "?") == structured[1].replace(unknown, "?")


async def test_search_finds_only_the_scope_s_commands(tool_server):
    url, _ = tool_server
    async with connect(url, FILES) as files, connect(url, READER) as reader:
        found = await ok(files, "search", "read", "the", "knowledge", "graph")
        assert "memory" not in found and "files " in found
        assert "files write-file" in await ok(files, "search", "write", "a", "file")
        found = await ok(reader, "search", "create", "entities", "in", "the", "knowledge", "graph")
        assert "create-entities" not in found and "files" not in found
        assert found.split()[0].startswith("memory")


async def test_allowed_calls_work_and_read_only_hides_writes(tool_server, world):
    url, _ = tool_server
    async with connect(url, FILES) as files, connect(url, READER) as reader, connect(url, WRITER) as writer:
        target = world["root"] / "files" / "note.txt"
        await ok(files, "files", "write-file", "--path", str(target), "--content", "scoped hello")
        assert target.read_text() == "scoped hello"

        assert listed(await ok(writer, "memory", "--help")) == sorted(
            [
                "add-observations",
                "create-entities",
                "create-relations",
                "delete-entities",
                "delete-observations",
                "delete-relations",
                *READS,
                RESOURCES,
            ]
        )
        entity = json.dumps([{"name": "Ada", "entityType": "person", "observations": ["wrote the first program"]}])
        await ok(writer, "memory", "create-entities", "--entities", entity)
        assert "first program" in await ok(reader, "memory", "search-nodes", "--query", "Ada")
        refused = await call(reader, "memory", "create-entities", "--entities", entity)
        assert refused.structured["error"] == "not_found"


@MODES
async def test_the_meta_surface_is_scoped_too(meta_server, mode):
    async with connect(meta_server, FILES, mode) as files, connect(meta_server, READER, mode) as reader:
        assert [t.name for t in (await reader.list_tools()).tools] == ["search_tools", "describe_tools", "call_tool"]
        found = text(await reader.call_tool("search_tools", {"query": "create entities", "limit": 20}))
        assert "create-entities" not in found and "memory open-nodes" in found
        assert "memory read-graph" in text(await reader.call_tool("search_tools", {"query": "read the graph"}))
        found = text(await files.call_tool("search_tools", {"query": "knowledge graph entities", "limit": 20}))
        assert "memory" not in found

        denied = await files.call_tool("describe_tools", {"names": ["memory read-graph"]})
        unknown = await files.call_tool("describe_tools", {"names": ["qqqqqq read-graph"]})
        assert denied.is_error and envelope(denied)["error"] == "not_found"
        assert text(denied).replace("memory", "?") == text(unknown).replace("qqqqqq", "?")
        denied = await reader.call_tool("call_tool", {"name": "memory delete-entities", "arguments": {}})
        unknown = await reader.call_tool("call_tool", {"name": "memory qqqqqq-qqqqqqq", "arguments": {}})
        assert text(denied).replace("delete-entities", "?") == text(unknown).replace("qqqqqq-qqqqqqq", "?")

        graph = await reader.call_tool("call_tool", {"name": "memory read-graph", "arguments": {}})
        assert not graph.is_error and "entities" in text(graph)
        listing = await files.call_tool("call_tool", {"name": "files list-allowed-directories", "arguments": {}})
        assert not listing.is_error and "files" in text(listing)


def test_tokens_not_in_the_file_get_401(tool_server):
    url, proc = tool_server
    for headers, reason in [
        ({}, "Authorization: Bearer <token>"),
        ({"Authorization": "Bearer not a scope's token"}, "wrong bearer token"),
        ({"Authorization": f"Bearer {hashlib.sha256(WRITER.encode()).hexdigest()}"}, "wrong bearer token"),
    ]:
        response = post(url, **headers)
        assert response.status_code == 401 and response.json()["error"] == "invalid_token"
        assert reason in response.json()["error_description"]
    assert post(url, Authorization=f"Bearer {WRITER}").status_code == 200
    assert proc.poll() is None


@pytest.mark.parametrize(
    "scopes, args, says",
    [
        ('[[scope]]\ntoken_env = "FILES_TOKEN"\npath = ["files *"]\n', [], ["scope 1", "'path'", "'paths'"]),
        ('[[scope]]\ntoken_env = "NOT_SET_HERE"\npaths = ["x"]\n', [], ["scope 1", "NOT_SET_HERE", "not set"]),
        ('[[scope]]\nname = "a"\ntoken_sha256 = "abc"\npaths = ["x"]\n', [], ["scope 1 (a)", "64 hex digits"]),
        ('[[scope]]\ntoken_env = "FILES_TOKEN"\npaths = []\n', [], ["paths", "non-empty list"]),
        ('[[scope]]\npaths = ["x"]\n', [], ["token_env", "token_sha256"]),
        ("[[scope]\n", [], ["not a TOML file"]),
        (
            '[[scope]]\ntoken_env = "FILES_TOKEN"\npaths = ["x"]\n[[scope]]\nname = "b"\ntoken_sha256 = '
            f'"{hashlib.sha256(FILES.encode()).hexdigest()}"\npaths = ["y"]\n',
            [],
            ["'scope 1' and 'b'", "same token"],
        ),
        ('[[scope]]\ntoken_env = "FILES_TOKEN"\npaths = ["x"]\n', ["--token-env", "FILES_TOKEN"], ["drop --token-env"]),
        ('[[scope]]\ntoken_env = "FILES_TOKEN"\npaths = ["x"]\n', ["stdio"], ["--scopes goes with --http"]),
    ],
    ids=[
        "unknown-key",
        "unset-env",
        "bad-hash",
        "no-paths",
        "no-token",
        "not-toml",
        "same-token",
        "with-token-env",
        "stdio",
    ],
)
@pytest.mark.parametrize("command", ["serve", "launcher"])
def test_a_broken_scopes_file_stops_serving(tmp_path, command, scopes, args, says):
    file = tmp_path / "scopes.toml"
    file.write_text(scopes)
    where = [] if args == ["stdio"] else ["--http", "127.0.0.1:8000", *args]
    start = [sys.executable, "-m", "mcp_cli", "serve"] if command == "serve" else LAUNCHER
    done = subprocess.run(
        [*start, str(DEMO), *where, "--scopes", str(file)],
        cwd=ROOT,
        env=environment(FILES_TOKEN=FILES),
        capture_output=True,
        text=True,
    )
    line = done.stderr.strip()
    assert done.returncode == 2 and "\n" not in line and "Traceback" not in line, line
    assert all(s in line for s in says), line


def test_a_pattern_that_matches_nothing_is_a_warning(tmp_path):
    file = tmp_path / "scopes.toml"
    file.write_text('[[scope]]\nname = "typo"\ntoken_env = "FILES_TOKEN"\npaths = ["math *", "maths *", "demo text"]\n')
    command = [sys.executable, "-m", "mcp_cli", "serve", str(DEMO), "--scopes", str(file)]
    with server(command, "127.0.0.1", "127.0.0.1", env=environment(FILES_TOKEN=FILES)) as (_, proc):
        pass
    warnings = [line for line in proc.stderr.read().splitlines() if line.startswith("warning:")]
    assert warnings == [
        "warning: scope 'typo': 'maths *' matches no path of demo (yet)",
        "warning: scope 'typo': 'demo text' matches no path of demo (yet) (patterns leave out the tool's name, demo)",
    ]


def test_patterns_are_globs_over_paths_and_groups_cover_what_they_hold():
    tree = Tree.load(DEMO)

    def paths(*patterns: str, read_only: bool = False) -> list[str]:
        part = prune(tree, patterns, read_only)
        return [" ".join(p) for p, node in part.walk() if isinstance(node, Command)]

    assert paths("math") == paths("math *") == ["math add", "math mean"]
    assert paths("* head", "text up*") == ["text upper", "files head"]  # `*` matches across words too
    assert paths("MATH") == []  # case counts
    tree.root.child("math").child("add").annotations = {"readOnlyHint": True}
    assert paths("*", read_only=True) == ["math add"]
    summary = prune(tree, ["text upper", "text stats"]).root.child("text").summary
    assert summary == "upper, stats."  # a group's own summary may name what the scope does not see


def test_patterns_may_name_a_server_by_its_config_key():
    """However many servers, each is a root level named by its config key (`server1` too): a pattern written with
    the config's key covers the server's commands, and no other server's."""
    from .test_context import crowded_tree

    tree = crowded_tree()
    shown = {" ".join(p) for p, n in tree.walk() if isinstance(n, Command)}
    tracker = {p for p in shown if p.startswith("tracker ")}
    assert tracker  # at the root, under its own key
    part = {" ".join(p) for p, n in prune(tree, ["tracker *"]).walk() if isinstance(n, Command)}
    assert part == tracker | {"search"}
    kept = {" ".join(p) for p, n in prune(tree, ["server1"]).walk() if isinstance(n, Command)}
    assert kept == {"search", "server1 list-embers", "server1 get-ember"}  # a key that says nothing, kept


async def test_a_view_follows_the_serving_tree(tmp_path):
    """A source that comes back with more (`Runtime.adopt`): each scope's view is pruned again from the new tree."""
    before = Tree.load(DEMO)
    after = Tree.load(DEMO)
    after.root.child("math").children.append(
        Command("double", "Twice a number.", handler={"kind": "python", "target": "operator:add"})
    )
    serving = Runtime(before)
    (tmp_path / "scopes.toml").write_text('[[scope]]\ntoken_env = "T"\npaths = ["math *"]\n')
    [scope] = load(tmp_path / "scopes.toml", {"T": "a token"})
    view = View(scope, serving)
    assert "double" not in (await view.runtime.call(["math", "--help"])).output
    serving.adopt(after)
    assert "double" in (await view.runtime.call(["math", "--help"])).output
    assert view.runtime.kinds is serving.kinds


async def test_a_skill_served_with_scopes_keeps_its_files_to_itself(tmp_path):
    """Doc topics are paths like commands; the skill's files, which no path covers, are not served as resources."""
    file = tmp_path / "scopes.toml"
    file.write_text('[[scope]]\ntoken_env = "FILES_TOKEN"\npaths = ["text *", "docs text-and-tables"]\n')
    command = [sys.executable, "-m", "mcp_cli", "serve", str(ROOT / "skills" / "pdf"), "--scopes", str(file)]
    with server(command, "127.0.0.1", "127.0.0.1", env=environment(FILES_TOKEN=FILES)) as (url, _):
        async with connect(url, FILES) as client:
            assert client.server_capabilities.resources is None
            assert listed(await ok(client, "--help")) == ["docs", "text"]
            assert listed(await ok(client, "docs", "--help")) == ["text-and-tables"]
            assert "Text and tables" in await ok(client, "docs", "text-and-tables")
            assert (await call(client, "docs", "forms")).structured["error"] == "not_found"


def test_openapi_beside_mcp_is_scoped_too(tool_server):
    """The document and /run of the server's OpenAPI surface answer each token with its scope's tree; a denied path
    answers as an unknown one there too."""
    url, _ = tool_server
    base = url.removesuffix("/mcp")

    def run(token: str, *argv: str) -> dict:
        answer = httpx2.post(
            f"{base}/run", json={"argv": list(argv)}, headers={"Authorization": f"Bearer {token}"}, timeout=budget(60)
        )
        assert answer.status_code == 200
        return answer.json()

    assert httpx2.get(f"{base}/openapi.json", timeout=budget(30)).status_code == 401
    for token, mine, other in [(FILES, "files", "memory"), (READER, "memory", "files")]:
        bearer = {"Authorization": f"Bearer {token}"}
        doc = httpx2.get(f"{base}/openapi.json", headers=bearer, timeout=budget(30)).json()
        described = doc["paths"]["/run"]["post"]["description"]
        assert f"Run `{mine} --help`" in described and other not in described
        assert listed(run(token, "--help")["output"]) == [mine, "search"]
        denied, unknown = run(token, other, "--help"), run(token, "qqqqqq", "--help")
        assert denied["error"] == "not_found"
        assert json.dumps(denied).replace(other, "?") == json.dumps(unknown).replace("qqqqqq", "?")
    assert not run(READER, "memory", "create-entities", "--entities", "[]")["ok"]


async def test_a_context_key_is_kept_apart_per_scope(world):
    """Two scopes' clients giving the same `_meta` context key share nothing: each sees only its own entities."""
    config = json.loads((world["root"] / "team.json").read_text())
    config["mcpServers"]["memory"]["mcp-cli"] = {"entities": {"query": "topic"}}  # search-nodes acts on a topic
    declared = world["root"] / "declared" / "team.json"
    declared.parent.mkdir(exist_ok=True)
    declared.write_text(json.dumps(config))
    command = [sys.executable, "-m", "mcp_cli", "serve", str(declared)]
    scopes = ["--scopes", str(world["root"] / "scopes.toml"), "--stateless"]
    with server(command, "127.0.0.1", "127.0.0.1", *scopes, env=world["env"]) as (url, _):
        async with connect(url, WRITER) as writer, connect(url, READER) as reader:
            meta = {"mcp-cli/context": "same conversation"}
            answer = await writer.call_tool("team", {"argv": ["memory", "search-nodes", "--query", "Ada"]}, meta=meta)
            assert not answer.is_error
            for client, shown in [(writer, True), (reader, False)]:
                root = text(await client.call_tool("team", {"argv": ["--help"]}, meta=meta))
                assert ("In context: Ada (memory)" in root) is shown, root
