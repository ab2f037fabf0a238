"""What hosts that defer and cache tools rely on, at the MCP level: the tool marked to stay loaded (or not), its
description and the instructions within 2 KB for any tree, `tools/list` the same bytes on every start, and the
2026-07-28 list results' cache hints."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from bench import corpora, crowded, economy
from mcp_cli.engine.runtime import Runtime
from mcp_cli.surfaces import meta_tools, tool
from mcp_cli.tree import Command, Group, Tree

from .conftest import DEMO, NODE_BIN, ROOT, budget, served

PDF = str(ROOT / "skills" / "pdf")


def _awkward() -> Tree:
    """A tree made to overflow: a long non-ASCII summary, 100 domains and 100 commands with long names."""
    summary = "Ünïcödé sümmäry wörds, 日本語の説明文も含む。" * 200
    domains = [Group(f"domain-{i:03d}-" + "x" * 50, summary=summary) for i in range(100)]
    for d in domains:
        d.children = [Command("run", summary="Run.", handler={"kind": "python", "target": "os:getcwd"})]
    commands = [
        Command(f"command-{i:03d}-" + "y" * 50, summary=summary, handler={"kind": "python", "target": "os:getcwd"})
        for i in range(100)
    ]
    return Tree(Group("awkward", summary=summary, children=[*domains, *commands]))


@pytest.mark.parametrize(
    "tree",
    [economy.tree_of(crowded.crowded()), economy.tree_of(corpora.synthetic(1000)), _awkward()],
    ids=["crowded-500", "synthetic-1000", "awkward"],
)
def test_description_and_instructions_fit_2_kb_for_any_tree(tree):
    runtime = Runtime(tree)
    described, instructed = tool.description(runtime), tool.instructions(runtime)
    assert len(described.encode()) <= tool.BUDGET and len(instructed.encode()) <= tool.BUDGET
    assert len(meta_tools.instructions(tree).encode()) <= tool.BUDGET
    assert described.endswith("`A | jq FILTER`.") and "--help" in described  # where to start survives the cut
    if len(tree.root.children) > 2:
        assert "Domains: " in described or " domains." in described


def test_the_description_names_every_domain_of_a_tree_of_twenty_or_fewer():
    servers = economy.tree_of(corpora.boundary())  # 16 servers
    domains = [n.name for n in servers.root.children if isinstance(n, Group)]
    described = tool.description(Runtime(servers))
    assert f"Domains: {', '.join(domains)}. Run `DOMAIN --help` or `search WORDS` first" in described
    crowded_500 = tool.description(Runtime(economy.tree_of(crowded.crowded())))  # 70: twelve, and where the rest are
    assert re.search(r"Domains: (\S+, ){11}\S+ and 58 more\. Run `DOMAIN --help` \(`--help` for all\)", crowded_500)


def _listed_bytes(*args: str) -> bytes:
    """The raw `tools/list` reply line of a fresh `mcp-cli serve ARGS`."""
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}},
    ]
    with subprocess.Popen(
        [sys.executable, "-m", "mcp_cli", "serve", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=ROOT,
    ) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in lines))
        proc.stdin.flush()
        for line in proc.stdout:
            if json.loads(line).get("id") == 2:
                proc.stdin.close()
                proc.wait(budget(30))
                return line
    raise AssertionError("no tools/list reply")


@pytest.mark.parametrize("args", [[PDF], [str(DEMO)], [PDF, "--surface", "meta"]], ids=["pdf", "demo", "meta"])
def test_tools_list_is_the_same_bytes_on_every_start(args):
    first, second = _listed_bytes(*args), _listed_bytes(*args)
    assert first == second
    tools = json.loads(first)["result"]["tools"]
    assert all(t["_meta"] == {"anthropic/alwaysLoad": True} for t in tools)


def test_a_wrapped_config_lists_the_same_bytes_on_every_start(tmp_path):
    config = tmp_path / "team.json"
    servers = {
        "memory": {"command": str(NODE_BIN / "mcp-server-memory")},
        "everything": {"command": str(NODE_BIN / "mcp-server-everything")},
    }
    config.write_text(json.dumps({"mcpServers": servers}))
    assert _listed_bytes(str(config)) == _listed_bytes(str(config), "--refresh")  # listed anew, not from the cache


@pytest.mark.anyio
async def test_the_hint_can_be_turned_off():
    async with served("serve", PDF, "--no-always-load") as client:
        (listed,) = (await client.list_tools()).tools
    assert listed.meta is None


@pytest.mark.anyio
async def test_answers_are_text_with_the_envelope_in_meta_or_structured_on_request():
    async with served("serve", str(DEMO)) as client:
        plain = await client.call_tool("demo", {"command": "math add 40 2"})
    async with served("serve", str(DEMO), "--structured") as client:
        structured = await client.call_tool("demo", {"command": "math add 40 2"})
    assert plain.structured_content is None and plain.meta["mcp-cli/result"]["data"] == 42
    assert [c.text for c in plain.content] == [c.text for c in structured.content] == ["42\n"]
    assert structured.structured_content["data"] == 42 and structured.structured_content["output"] == "42"


@pytest.mark.parametrize("wrapped, ttl", [(False, 3_600_000), (True, 60_000)], ids=["skill", "wrapped"])
@pytest.mark.anyio
async def test_2026_list_results_carry_cache_hints(tmp_path, wrapped, ttl):
    """A tree that cannot change is fresh for an hour; one whose upstreams may change theirs, a minute."""
    config = tmp_path / "memory.json"
    config.write_text(json.dumps({"mcpServers": {"memory": {"command": str(NODE_BIN / "mcp-server-memory")}}}))
    async with served("serve", str(config) if wrapped else PDF, mode="auto") as client:
        assert client.protocol_version == "2026-07-28"
        listed = await client.list_tools()
    assert (listed.ttl_ms, listed.cache_scope) == (ttl, "public")  # stdio: no token, every caller sees the same


@pytest.mark.parametrize(
    "public, scoped, scope", [(True, False, "public"), (False, False, "private"), (True, True, "private")]
)
def test_lists_behind_a_token_or_scopes_are_private(public, scoped, scope):
    """Shared caches may keep the lists only where every caller gets the same ones without a token."""
    from mcp_cli.sources.loader import load
    from mcp_cli.surfaces import mcp_server

    server = mcp_server.build(Runtime(load(PDF)), public=public, scoped=scoped)
    assert set(server.cache_hints) == set(mcp_server.LISTED)
    assert {h.scope for h in server.cache_hints.values()} == {scope}


def test_a_tree_s_settings_turn_the_hint_off_and_the_structure_on():
    from mcp_cli.surfaces import mcp_server

    data = json.loads(DEMO.read_text())
    data["settings"] = {**data.get("settings", {}), "always_load": False, "structured": True}
    tree = Tree.from_dict(data, base_dir=DEMO.parent)
    assert Tree.from_dict(tree.to_dict(), base_dir=DEMO.parent).settings == tree.settings  # kept in a tree's JSON
    assert mcp_server.tool(Runtime(tree)).meta is None
    assert mcp_server.tool(Runtime(Tree.from_dict(json.loads(DEMO.read_text())))).meta == mcp_server.ALWAYS_LOAD
