"""Context-driven disclosure: entity types of commands, each session's entities, the root help line and search
ranking, over a real server of two real upstreams (`listed.py`, whose tools take a `repo`) and real MCP clients."""

import os
import subprocess
import sys

import pytest
from mcp import Client

from mcp_cli import entities
from mcp_cli.entities import KEPT, META_KEY, Context
from mcp_cli.sources import mcp_tools
from mcp_cli.sources.mcp_config import read
from mcp_cli.tree import Tree

from .conftest import ROOT, budget, free_port, served, text, wait_for_port
from .listed import config, entry

pytestmark = pytest.mark.anyio
TOOLS = ("add_comment", "list_items")  # the same tools on both servers: only context tells them apart


@pytest.fixture
def two(tmp_path):
    """A config of two servers with the same tools (`forge` ranks first on a tie), and a cache of its own."""
    path = config(tmp_path / "work.json", {"tracker": entry(*TOOLS), "forge": entry(*TOOLS)})
    return path, {"MCP_CLI_CACHE_DIR": str(tmp_path / "cache")}


async def first_hit(client, meta=None) -> list[str]:
    """The path of the first command `search add a comment` gives."""
    found = await client.call_tool("work", {"argv": ["search", "add", "a", "comment"]}, meta=meta)
    return text(found).splitlines()[0].split()[:2]


async def test_a_call_naming_an_entity_puts_its_domain_in_root_help_and_first_in_search(two):
    path, env = two
    async with served("serve", str(path), env=env) as client:
        assert "In context" not in text(await client.call_tool("work", {"argv": ["--help"]}))
        assert await first_hit(client) == ["forge", "add-comment"]
        for failing in (["tracker", "list-itemz", "--repo", "acme/web"], ["tracker", "list-items", "--rep", "x/y"]):
            assert (await client.call_tool("work", {"argv": failing})).is_error  # not_found, usage: nothing recorded
        assert "In context" not in text(await client.call_tool("work", {"argv": ["--help"]}))
        called = await client.call_tool("work", {"argv": ["tracker", "list-items", "--repo", "acme/api"]})
        assert not called.is_error and '"repo": "acme/api"' in text(called)  # the upstream really ran
        root = text(await client.call_tool("work", {"argv": ["--help"]}))
        assert root.endswith("\nIn context: acme/api (tracker).\n")
        assert await first_hit(client) == ["tracker", "add-comment"]
        await client.call_tool("work", {"argv": ["forge", "list-items", "--repo", "acme/api"]})
        help_text = text(await client.call_tool("work", {"argv": ["--help"]}))
        assert help_text.endswith("\nIn context: acme/api (forge, tracker).\n")  # the most recent domain first


async def test_the_meta_tools_surface_keeps_context_too(two):
    path, env = two
    async with served("serve", str(path), "--surface", "meta", env=env) as client:
        query = {"query": "add a comment"}
        assert text(await client.call_tool("search_tools", query)).split()[:2] == ["forge", "add-comment"]
        called = await client.call_tool("call_tool", {"name": "tracker list-items", "arguments": {"repo": "acme/api"}})
        assert not called.is_error, text(called)
        assert text(await client.call_tool("search_tools", query)).split()[:2] == ["tracker", "add-comment"]


async def test_sessions_over_http_keep_their_own_context_and_stateless_clients_give_theirs(two):
    path, env = two
    for mode in ((), ("--stateless",)):
        port = free_port()
        proc = subprocess.Popen(
            [sys.executable, "-m", "mcp_cli", "serve", str(path), "--http", f"127.0.0.1:{port}", *mode],
            cwd=ROOT,
            env={**os.environ, **env},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            wait_for_port(port, proc)
            url = f"http://127.0.0.1:{port}/mcp"
            if not mode:  # stateful: one context per MCP session
                async with Client(url, mode="legacy") as one, Client(url, mode="legacy") as other:
                    await one.call_tool("work", {"argv": ["tracker", "list-items", "--repo", "acme/api"]})
                    assert await first_hit(one) == ["tracker", "add-comment"]
                    assert await first_hit(other) == ["forge", "add-comment"]
                    assert "In context" not in text(await other.call_tool("work", {"argv": ["--help"]}))
                continue
            mine, theirs = {META_KEY: "conversation-1"}, {META_KEY: "conversation-2"}
            async with Client(url) as client:
                call = {"argv": ["tracker", "list-items", "--repo", "acme/api"]}
                await client.call_tool("work", call, meta=mine)
                await client.call_tool("work", call)  # no key: a stateless request's context ends with it
                assert await first_hit(client, meta=mine) == ["tracker", "add-comment"]
                assert await first_hit(client, meta=theirs) == ["forge", "add-comment"]
                assert await first_hit(client) == ["forge", "add-comment"]
                assert await first_hit(client, meta={META_KEY: 42}) == ["forge", "add-comment"]  # not a key: none
                shown = text(await client.call_tool("work", {"argv": ["--help"]}, meta=mine))
                assert "In context: acme/api (tracker)." in shown
        finally:
            proc.terminate()
            proc.wait(timeout=budget(10))


def test_entity_types_are_inferred_from_parameter_names():
    assert entities.infer(["owner", "repo", "state"]) == {"repository": ["owner", "repo"]}
    assert entities.infer(["owner", "name", "body"]) == {"repository": ["owner", "name"]}
    assert entities.infer(["name", "body"]) == {}  # a `name` alone names nothing known
    assert entities.infer(["fullPath", "issue_key", "namespace"]) == {
        "repository": ["fullPath"],
        "issue": ["issue_key"],
        "namespace": ["namespace"],
    }
    assert entities.infer(["ref", "issue_key"], {"ref": "issue"}) == {"issue": ["issue_key", "ref"]}
    assert entities.infer(["channel"], {"channel": "room"}) == {"room": ["channel"]}  # a declaration overrides


def test_only_values_of_an_entitys_form_count():
    acts_on = {"issue": ["issue_key"], "repository": ["owner", "repo"], "channel": ["channel"]}
    assert entities.found(acts_on, {"issue_key": "ENG-423", "owner": "acme", "repo": "api", "channel": "ops"}) == [
        ("issue", "ENG-423"),
        ("repository", "acme/api"),
        ("channel", "ops"),
    ]
    odd = {"issue_key": "utf-8", "owner": "acme", "repo": ["api"], "channel": "two words"}
    assert entities.found(acts_on, odd) == []


def test_a_session_keeps_its_most_recent_entities_first():
    context = Context()
    context.record("jira", [("issue", "ENG-1")])
    context.record("github", [("repository", "acme/api")])
    context.record("linear", [("issue", "ENG-1")])
    assert [(e.value, e.domains) for e in context.entities] == [("ENG-1", ["linear", "jira"]), ("acme/api", ["github"])]
    assert context.domains() == ["linear", "jira", "github"]
    for i in range(KEPT + 3):
        context.record("k8s", [("namespace", f"ns-{i}")])
    assert len(context.entities) == KEPT and context.entities[0].value == f"ns-{KEPT + 2}"


def test_declared_entities_come_from_config_and_survive_json(tmp_path):
    options = {"mcp-cli": {"entities": {"repo": "project"}}}
    path = config(
        tmp_path / "c.json",
        {"a": entry("list_items", **options), "b": entry("x", **{"mcp-cli": {"entities": ["repo"]}})},
    )
    servers, warnings = read(path)
    assert any("`entities` must map parameter names to entity types" in w for w in warnings)
    found = {
        s.name: {"server": {}, "tools": [{"name": "list_items", "inputSchema": {"properties": {"repo": {}}}}]}
        for s in servers
    }
    tree = mcp_tools.build("t", servers, found)
    commands = {p[0]: n for p, n in tree.walk() if len(p) == 2}
    assert commands["a"].entities == {"project": ["repo"]}
    assert commands["b"].entities == {"repository": ["repo"]}  # the bad declaration ignored: inferred
    assert Tree.from_dict(tree.to_dict()) == tree
    assert "entities" not in tree.to_dict()["root"]["children"][0]  # `search`: the default is left out


def test_a_tree_with_bad_entities_is_refused():
    bad = {
        "format": "mcp-cli/tree",
        "version": 1,
        "root": {
            "kind": "group",
            "name": "t",
            "children": [
                {
                    "kind": "command",
                    "name": "c",
                    "entities": {"issue": "key"},
                    "handler": {"kind": "python", "target": "m:f"},
                }
            ],
        },
    }
    with pytest.raises(ValueError, match="entities"):
        Tree.from_dict(bad)


def crowded_tree() -> Tree:
    """A tree of 32 servers, past the count where servers are grouped by what their tools do: `tracker` and `forge`
    (the same issue tools) share a group; `server1`, a key that says nothing, is renamed after what its tools do."""
    from mcp_cli.sources.mcp_config import Server

    tools = [
        {"name": n, "inputSchema": {"properties": {"issue_key": {"type": "string"}}}}
        for n in ("list_issues", "add_issue_comment")
    ]
    others = (
        "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa "
        "quebec romeo sierra tango uniform victor whiskey xray yankee zulu amber cobalt denim".split()
    )
    found = {"tracker": tools, "forge": tools, "server1": [{"name": "list_embers"}, {"name": "get_ember"}]}
    found |= {o: [{"name": f"list_{o}s"}, {"name": f"get_{o}"}] for o in others}
    servers = [Server(name, {"command": "unused"}) for name in found]
    return mcp_tools.build("t", servers, {n: {"server": {"name": n}, "tools": t} for n, t in found.items()})


def walk_to(tree: Tree, path: list[str]) -> list:
    """The nodes from the root along `path`."""
    walked = [tree.root]
    for name in path:
        walked.append(walked[-1].child(name))
    return walked


def test_in_a_crowded_tree_the_domain_is_the_server():
    """Look-alike servers each keep their level (`tracker`, `jira-work`); what acts on an entity is the server, so
    the context names `tracker` and search prefers the tracker's commands."""
    from mcp_cli.entities import domain
    from mcp_cli.search.ranking import Index

    tree = crowded_tree()
    path = next(p for p, n in tree.walk() if "tracker" in p and p[-1] == "add-issue-comment")
    assert len(path) == 2 and path[0] == "tracker"  # a level of its own, at the root
    assert domain(walk_to(tree, path)) == "tracker"
    hits = Index(tree).search("add a comment", 2, prefer=[domain(walk_to(tree, path))])
    assert [h[1] for h in hits][0] == " ".join(path)
