"""How upstream tools are arranged, through a served tree of real upstream servers: each server a level of the path
named by its config key, however many; a server's tools flat under their own names while their usage lines fit its
listing, else split into subgroups by the things they act on (or by toolset, or by preset groups), a tool's own name
still reaching it from the server's level; and tool filters applied before any of it."""

import json
import re

import pytest

from mcp_cli.testing import call, ok

from .conftest import budget, served
from .listed import config, entry

pytestmark = pytest.mark.anyio

GITHUB = (
    "list_issues create_issue get_issue update_issue list_pull_requests create_pull_request "
    "merge_pull_request get_pull_request list_branches create_branch delete_branch list_tags create_tag "
    "search_code get_me fork_repository"
).split()
NATO = (
    "alfa bravo charlie delta echo foxtrot golf hotel india juliett kilo lima mike november oscar papa "
    "quebec romeo sierra tango uniform victor whiskey xray yankee zulu"
).split()


@pytest.fixture
def cache(tmp_path):
    return {"MCP_CLI_CACHE_DIR": str(tmp_path / "cache")}


def listed(help_text: str) -> dict[str, str]:
    """{name: one-line summary} of the names a help text lists."""
    return dict(re.findall(r"^  (\S+)(?:  +(.*))?$", help_text, re.M))


def called(out: str) -> tuple[str, dict]:
    """(tool, arguments) the upstream received, from its answer."""
    got = json.loads(out)
    return got["tool"], got["arguments"]


async def test_a_server_with_many_tools_is_split_into_subgroups_by_what_they_act_on(tmp_path, cache):
    team = config(tmp_path / "team.json", {"gh": entry(*GITHUB)})
    async with served("serve", str(team), env=cache) as client:
        gh = await ok(client, "gh", "--help")  # 16 tools whose usage lines fit the listing: flat, each callable
        assert "Groups:" not in gh and re.search(r"\n  list-issues  .*\n    \[--repo TEXT\]\n", gh)
    async with served("serve", str(team), "--threshold", "10", env=cache) as client:
        root = await ok(client, "--help")
        assert listed(root)["gh"] == "Pull-requests, issues, branches, tags."
        gh = listed(await ok(client, "gh", "--help"))
        assert {name: gh[name] for name in ("pull-requests", "issues", "branches", "tags")} == {
            "pull-requests": "list, create, merge, get.",
            "issues": "list, create, get, update.",
            "branches": "list, create, delete.",
            "tags": "list, create.",
        }
        assert {"search-code", "get-me", "fork-repository"} <= gh.keys()  # they share a noun with no other tool
        assert called(await ok(client, "gh", "issues", "list", "--repo", "o/r")) == (
            "list_issues",
            {"repo": "o/r"},
        )
        assert called(await ok(client, "gh", "pull-requests", "merge"))[0] == "merge_pull_request"
        assert called(await ok(client, "gh", "search-code"))[0] == "search_code"
        for name in ("list_issues", "list-issues", "merge_pull_request"):  # a tool's own name finds it in its group
            assert called(await ok(client, "gh", name))[0] == name.replace("-", "_")
    async with served("serve", str(team), "--threshold", str(len(GITHUB)), env=cache) as client:
        gh = listed(await ok(client, "gh", "--help"))  # no more tools than the threshold: one flat group
        assert "list-issues" in gh and "issues" not in gh
        assert called(await ok(client, "gh", "list-issues"))[0] == "list_issues"


async def test_a_tool_goes_to_the_noun_it_acts_on_when_two_groups_could_take_it(tmp_path, cache):
    tools = "list_releases get_latest_release get_release_by_tag list_tags get_tag search_code get_me".split()
    team = config(tmp_path / "team.json", {"gh": entry(*tools)})
    async with served("serve", str(team), "--threshold", "5", env=cache) as client:
        gh = listed(await ok(client, "gh", "--help"))  # releases and tags are named by three tools each
        assert gh["releases"] == "list, get-latest, get-by-tag." and gh["tags"] == "list, get."
        assert called(await ok(client, "gh", "releases", "get-by-tag"))[0] == "get_release_by_tag"


async def test_preset_groups_and_toolsets_name_the_subgroups(tmp_path, cache):
    toolsets = [f"{name}@{'work' if 'issue' in name or 'pull' in name else 'code'}" for name in GITHUB]
    preset = entry(*GITHUB, **{"mcp-cli": {"groups": {"tickets": ["*issue*"], "reviews": ["*pull_request*"]}}})
    team = config(tmp_path / "team.json", {"gh": entry(*toolsets), "preset": preset})
    async with served("serve", str(team), "--threshold", "10", env=cache) as client:
        gh = listed(await ok(client, "gh", "--help"))
        assert {"work", "code"} <= gh.keys() and "issues" not in gh
        assert called(await ok(client, "gh", "work", "list-issues"))[0] == "list_issues"
        assert called(await ok(client, "gh", "code", "search"))[0] == "search_code"  # the group word dropped
        shown = list(listed(await ok(client, "preset", "--help")))  # preset groups first, then nouns
        assert shown.index("tickets") < shown.index("reviews") < shown.index("branches")
        assert called(await ok(client, "preset", "tickets", "list-issues"))[0] == "list_issues"
        assert called(await ok(client, "preset", "reviews", "merge-pull-request"))[0] == "merge_pull_request"


async def test_every_server_is_a_row_of_the_root_named_by_its_key_however_many(tmp_path, cache):
    start = budget(10)  # 31 servers starting at once
    servers = {name: entry("ping", startup_timeout_sec=start) for name in NATO}
    servers |= {
        name: entry("list_issues", "get_issue", startup_timeout_sec=start)
        for name in ("github", "jira-work", "tracker")
    }
    servers |= {name: entry("list_events", startup_timeout_sec=start) for name in ("google-calendar", "tools-prod")}
    team = config(tmp_path / "team.json", servers)  # 31 servers
    async with served("serve", str(team), env=cache) as client:
        root = listed(await ok(client, "--help"))
        assert [*root][:-1] == [*servers] and root["search"]  # in the config's order, then search
        assert root["github"] == "list-issues, get-issue."  # a small server's row names its commands
        assert root["tools-prod"] == "list-events."  # a key that says nothing is kept: its row says what it does
        assert called(await ok(client, "jira-work", "get-issue"))[0] == "get_issue"
        assert called(await ok(client, "tools-prod", "list_events"))[0] == "list_events"
        (tool,) = (await client.list_tools()).tools  # the description names 12 servers and says where the rest are
        named = re.search(r"Domains: (.*) and 19 more\. Run `DOMAIN --help` \(`--help` for all\)", tool.description)
        assert named and named[1].split(", ") == [*root][:12]


async def test_a_key_that_says_nothing_is_told_by_the_name_its_server_gives(tmp_path, cache):
    named = {"env": {"LISTED_NAME": "pipedrive-mcp-server"}}
    team = config(
        tmp_path / "team.json",
        {"mcp": entry("list_deals", "get_deal", **named), "pipedrive": entry("list_deals", "get_deal", **named)},
    )
    async with served("serve", str(team), env=cache) as client:
        root = listed(await ok(client, "--help"))
        assert root["mcp"] == "Pipedrive: list-deals, get-deal."
        assert root["pipedrive"] == "list-deals, get-deal."  # its key says it already


async def test_tool_filters_apply_before_the_tree_is_built(tmp_path, cache):
    gh = entry(*GITHUB, **{"mcp-cli": {"exclude_tools": ["delete_*"]}})
    team = config(tmp_path / "team.json", {"gh": gh, "other": entry("list_issues")})
    filters = ["--tool", "*issue*", "--tool", "gh/*branch*", "--exclude-tool", "update_*"]
    async with served("serve", str(team), *filters, env=cache) as client:
        root = await ok(client, "--help")
        assert "6 tools from 2 MCP servers." in root  # gh: 3 issue and 2 branch tools; other: list_issues
        shown = listed(await ok(client, "gh", "--help"))  # 5 tools: under the threshold, no subgroups
        assert list(shown)[:5] == ["list-issues", "create-issue", "get-issue", "list-branches", "create-branch"]
        assert called(await ok(client, "gh", "create-branch", "--repo", "o/r")) == (
            "create_branch",
            {"repo": "o/r"},
        )
        for excluded in ("update-issue", "delete-branch", "get-me"):
            reply = await call(client, "gh", excluded)
            assert not reply.ok and f"`team gh` has no command `{excluded}`" in reply.text, reply.text
