"""Resources and prompts through the wrap: the real npm server-everything and a notes server (an MCPServer script whose
prompt `simple-prompt` and resource `demo://.../architecture.md` clash with server-everything's, and whose tool
`resources` pushes its resources group to `mcp-resources`) behind `mcp-cli serve`, read by real MCP clients of both
eras over stdio (the one-tool and the meta surfaces), over streamable HTTP with scopes, through OpenAPI, and under
`mcp-cli run`."""

import json
import sys
from contextlib import asynccontextmanager

import httpx2
import pytest
from mcp import Client, StdioServerParameters, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from mcp_cli.testing import call, ok

from . import forked
from .conftest import NODE_BIN, ROOT, budget, served
from .test_http_security import environment, server

pytestmark = pytest.mark.anyio

ARCH = "demo://resource/static/document/architecture.md"
ALL, NARROW = "all resources token", "narrow token"
SCOPES = """
[[scope]]
name = "all"
token_env = "ALL_TOKEN"
paths = ["*"]

[[scope]]
name = "narrow"
token_env = "NARROW_TOKEN"
paths = ["everything echo", "notes prompts get *"]
"""
ERAS = ["legacy", "auto"]  # the initialize handshake; the 2026-07-28 protocol (discover), which auto picks


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("resources")
    config = root / "team.json"
    config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "everything": {"command": str(NODE_BIN / "mcp-server-everything")},
                    "notes": {
                        "command": sys.executable,
                        "args": [str(ROOT / "tests" / "fixtures" / "upstreams" / "notes.py")],
                    },
                }
            }
        )
    )
    (root / "scopes.toml").write_text(SCOPES)
    return {"root": root, "config": config, "env": {"MCP_CLI_CACHE_DIR": str(root / "cache")}}


async def decline(context, params) -> types.ElicitResult:
    return types.ElicitResult(action="decline")


async def answer(context, params) -> types.CreateMessageResult:
    return types.CreateMessageResult(role="assistant", content=types.TextContent(type="text", text="hi"), model="m")


@pytest.fixture(scope="module", params=ERAS)
async def direct(request):
    """A client of either era straight to server-everything (the baseline: what works direct), one that can answer
    elicitation and sampling. server-everything speaks only the handshake era: a 2026 client falls back to it."""
    params = StdioServerParameters(command=str(NODE_BIN / "mcp-server-everything"))
    async with Client(params, mode=request.param, elicitation_callback=decline, sampling_callback=answer) as client:
        assert client.protocol_version == "2025-11-25"
        yield client


async def test_direct_tools(direct):
    tools = {t.name for t in (await direct.list_tools()).tools}
    assert len(tools) == 16 and {"trigger-elicitation-request", "trigger-sampling-request"} <= tools  # gated ones
    assert "Echo: hi" in (await direct.call_tool("echo", {"message": "hi"})).content[0].text


async def test_direct_resources_templates_and_links(direct):
    assert len((await direct.list_resources()).resources) == 7
    assert "Features" in (await direct.read_resource("demo://resource/static/document/features.md")).contents[0].text
    assert len((await direct.list_resource_templates()).resource_templates) == 2
    assert "Resource 7" in (await direct.read_resource("demo://resource/dynamic/text/7")).contents[0].text
    result = await direct.call_tool("get-resource-links", {"count": 2})
    links = [c for c in result.content if c.type == "resource_link"]
    assert len(links) == 2
    for link in links:
        assert (await direct.read_resource(str(link.uri))).contents


async def test_direct_prompts(direct):
    assert len((await direct.list_prompts()).prompts) == 4
    assert "Paris" in (await direct.get_prompt("args-prompt", {"city": "Paris"})).messages[0].content.text


@pytest.fixture(scope="module", params=ERAS)
async def team(world, request):
    async with served("serve", str(world["config"]), env=world["env"], mode=request.param) as client:
        assert (client.protocol_version == "2026-07-28") == (request.param == "auto")
        yield client


async def test_tools_through_the_one_tool(team):
    assert [t.name for t in (await team.list_tools()).tools] == ["team"]
    assert "Echo: hi" in await ok(team, "everything", "echo", "--message", "hi")
    gated = await call(team, "everything", "trigger-sampling-request", "--help")  # the upstream client declares
    assert gated.ok  # elicitation and sampling, so the server lists the tools that need them (and they group)


async def test_resources_of_every_server_listed_with_clashing_uris_prefixed(team):
    uris = [str(r.uri) for r in (await team.list_resources()).resources]
    assert f"everything+{ARCH}" in uris and f"notes+{ARCH}" in uris and ARCH not in uris  # both list it
    assert "demo://resource/static/document/features.md" in uris and "notes://readme" in uris  # no clash: as they are
    assert len(uris) == 7 + 2
    templates = {t.uri_template for t in (await team.list_resource_templates()).resource_templates}
    assert templates == {
        "demo://resource/dynamic/text/{resourceId}",
        "demo://resource/dynamic/blob/{resourceId}",
        "notes://note/{id}",
    }


async def test_static_templated_and_clashing_resources_read_from_the_right_server(team):
    features = (await team.read_resource("demo://resource/static/document/features.md")).contents[0]
    assert features.uri == "demo://resource/static/document/features.md" and "Features" in features.text
    everything = (await team.read_resource(f"everything+{ARCH}")).contents[0]
    notes = (await team.read_resource(f"notes+{ARCH}")).contents[0]
    assert "Everything Server" in everything.text and notes.text.startswith("# Notes architecture")
    assert everything.uri == f"everything+{ARCH}"  # as the client named it
    assert "Resource 7" in (await team.read_resource("demo://resource/dynamic/text/7")).contents[0].text
    assert (await team.read_resource("notes://note/5")).contents[0].text == "note number 5"
    with pytest.raises(MCPError, match="several wrapped servers"):
        await team.read_resource(ARCH)


async def test_prompts_listed_with_clashing_names_prefixed_and_got_with_arguments(team):
    prompts = {p.name: p for p in (await team.list_prompts()).prompts}
    assert set(prompts) == {
        "everything_simple-prompt",
        "notes_simple-prompt",
        "args-prompt",
        "completable-prompt",
        "resource-prompt",
        "summarize",
    }
    assert [(a.name, a.required) for a in prompts["args-prompt"].arguments] == [("city", True), ("state", False)]
    got = await team.get_prompt("args-prompt", {"city": "Paris"})
    assert "Paris" in got.messages[0].content.text
    assert (await team.get_prompt("notes_simple-prompt")).messages[0].content.text == "notes simple prompt text"
    assert "notes" not in (await team.get_prompt("everything_simple-prompt")).messages[0].content.text
    assert (
        "Summarize maps in a long way."
        in (await team.get_prompt("summarize", {"topic": "maps", "style": "long"})).messages[0].content.text
    )
    with pytest.raises(MCPError, match="no prompt named 'simple-prompt'"):
        await team.get_prompt("simple-prompt")


async def test_resource_links_a_tool_returns_are_readable(team):
    reply = await call(team, "everything", "get-resource-links", "--count", "4")
    links = [c for c in reply.content if c.type == "resource_link"]
    assert len(links) == 4
    for link in links:
        contents = (await team.read_resource(str(link.uri))).contents
        assert contents and contents[0].uri == str(link.uri)
    reference = ("get-resource-reference", "--resource-type", "Text", "--resource-id", "3")
    embedded = await call(team, "everything", *reference)
    [resource] = [c.resource for c in embedded.content if c.type == "resource"]
    assert "Resource 3" in (await team.read_resource(str(resource.uri))).contents[0].text


async def test_the_tree_carries_resources_and_prompts(team):
    listing = await ok(team, "everything", "resources", "list")
    assert "demo://resource/static/document/features.md (text/markdown)" in listing
    assert "{resourceId}" in await ok(team, "everything", "resources", "templates")
    assert "Resource 2" in await ok(team, "everything", "resources", "read", "demo://resource/dynamic/text/2")
    assert "Paris" in await ok(team, command="everything prompts get args-prompt --city Paris")
    assert "args-prompt --city --state (optional)" in await ok(team, "everything", "prompts", "list")
    missing = await call(team, "everything", "prompts", "get", "args-prompt")
    assert not missing.ok and "--city" in missing.text
    # the notes server's tool `resources` keeps its name; its resources group is `mcp-resources`
    assert await ok(team, "notes", "resources") == "the resources tool ran"
    assert "notes readme text" in await ok(team, "notes", "mcp-resources", "read", "notes://readme")
    assert "Notes architecture" in await ok(team, "notes", "mcp-resources", "read", f"notes+{ARCH}")  # as served
    help_text = await ok(team, "notes", "--help")
    assert "mcp-resources  The server's resources (2 listed, 1 template)" in help_text


def test_mcp_cli_run_reads_resources_and_gets_prompts(world):
    def run(*argv: str) -> str:
        env = environment(**world["env"])
        done = forked.mcp_cli("run", str(world["config"]), "--", *argv, env=env, cwd=ROOT, timeout=budget(120))
        assert done.returncode == 0, done.stderr
        return done.stdout

    assert "What's weather in Lyon?" in run("everything", "prompts", "get", "args-prompt", "--city", "Lyon")
    assert "Resource 9" in run("everything", "resources", "read", "demo://resource/dynamic/text/9")
    assert "notes://readme" in run("notes", "mcp-resources", "list")


@pytest.mark.parametrize("mode", ERAS)
async def test_the_meta_surface_reaches_them_as_commands(world, mode):
    async with served("serve", str(world["config"]), "--surface", "meta", env=world["env"], mode=mode) as client:

        async def run(name: str, **arguments: str) -> str:
            answer = await client.call_tool("call_tool", {"name": name, "arguments": arguments})
            assert not answer.is_error, answer.content
            return "".join(getattr(c, "text", "") for c in answer.content)

        assert "Echo: hi" in await run("everything echo", message="hi")
        assert "Oslo" in await run("everything prompts get args-prompt", city="Oslo")
        assert "features.md" in await run("everything resources list")
        assert "Resource 5" in await run("everything resources read", uri="demo://resource/dynamic/text/5")
        links = await client.call_tool(
            "call_tool", {"name": "everything get-resource-links", "arguments": {"count": 2}}
        )
        for link in [c for c in links.content if c.type == "resource_link"]:
            assert (await client.read_resource(str(link.uri))).contents
        assert "args-prompt" in [p.name for p in (await client.list_prompts()).prompts]


@asynccontextmanager
async def connect(url: str, token: str, mode: str):
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=budget(60)) as http:
        async with Client(streamable_http_client(url, http_client=http), mode=mode) as client:
            yield client


@pytest.fixture(scope="module")
def scoped(world):
    command = [sys.executable, "-m", "mcp_cli", "serve", str(world["config"])]
    env = environment(ALL_TOKEN=ALL, NARROW_TOKEN=NARROW, **world["env"])
    with server(command, "127.0.0.1", "127.0.0.1", "--scopes", str(world["root"] / "scopes.toml"), env=env) as found:
        yield found[0]


@pytest.mark.parametrize("mode", ERAS)
async def test_a_scope_sees_only_the_resources_and_prompts_its_paths_cover(scoped, mode):
    async with connect(scoped, NARROW, mode) as narrow:
        assert (await narrow.list_resources()).resources == []
        assert (await narrow.list_resource_templates()).resource_templates == []
        with pytest.raises(MCPError):
            await narrow.read_resource("notes://readme")
        assert sorted(p.name for p in (await narrow.list_prompts()).prompts) == ["notes_simple-prompt", "summarize"]
        with pytest.raises(MCPError, match="no prompt named"):
            await narrow.get_prompt("args-prompt", {"city": "Paris"})
        assert (
            "Paris" not in (await call(narrow, "everything", "prompts", "get", "args-prompt", "--city", "Paris")).text
        )
    async with connect(scoped, ALL, mode) as everyone:
        assert len((await everyone.list_resources()).resources) == 9
        assert "Paris" in (await everyone.get_prompt("args-prompt", {"city": "Paris"})).messages[0].content.text


def test_openapi_runs_them_as_commands(scoped):
    def run(*argv: str) -> str:
        answer = httpx2.post(
            scoped.removesuffix("/mcp") + "/run",
            headers={"Authorization": f"Bearer {ALL}"},
            json={"argv": list(argv)},
            timeout=budget(60),
        )
        assert answer.status_code == 200 and answer.json()["ok"], answer.text
        return answer.json()["output"]

    assert "Echo: hi" in run("everything", "echo", "--message", "hi")
    assert "features.md" in run("everything", "resources", "list")
    assert "Features" in run("everything", "resources", "read", "demo://resource/static/document/features.md")
    assert "Resource 6" in run("everything", "resources", "read", "demo://resource/dynamic/text/6")
    link = run("everything", "get-resource-links", "--count", "2").splitlines()[-1]  # [resource_link TYPE URI]
    assert "Resource 2" in run("everything", "resources", "read", link.rstrip("]").split()[-1])
    assert "Paris" in run("everything", "prompts", "get", "args-prompt", "--city", "Paris")


def test_discovery_caches_resources_templates_and_prompts_beside_the_tools(world):
    from mcp_cli.sources import discovery, mcp_config

    servers, _ = mcp_config.read(world["config"])
    found, failed = discovery.listings_now(servers, refresh=True, budget=budget(discovery.STARTUP_BUDGET))
    assert not failed
    cached = [json.loads(p.read_text()) for p in discovery.cache_dir().glob("tools-*.json")]
    assert found["everything"] in cached and found["notes"] in cached
    everything = found["everything"]
    assert len(everything["resources"]) == 7 and len(everything["resourceTemplates"]) == 2
    assert [p["name"] for p in everything["prompts"]][:2] == ["simple-prompt", "args-prompt"]
    assert [p["name"] for p in found["notes"]["prompts"]] == ["simple-prompt", "summarize"]


def test_names_are_unique_across_servers_and_groups_never_shadow_a_tool():
    from mcp_cli.handlers.catalogue import unique
    from mcp_cli.sources.mcp_extras import free_name
    from mcp_cli.tree import Command, Group

    named = unique([("a", "x"), ("b", "x"), ("a", "b_y"), ("z", "b_y"), ("a_b", "y"), ("q", "y"), ("c", "only")], "_")
    assert named[("a", "x")] == "a_x" and named[("b", "x")] == "b_x" and named[("c", "only")] == "only"
    assert (named[("a", "b_y")], named[("a_b", "y")]) == ("a_b_y", "a_b_y-2")  # unique even then
    tools = [Command("resources"), Group("mcp-resources"), Command("list-prompts", aliases=["prompts"])]
    assert free_name("resources", tools) == "mcp-resources-2" and free_name("prompts", tools) == "mcp-prompts"
