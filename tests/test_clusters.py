"""Servers grouped at a crowded root (`clusters.cluster`): by how alike their tools' things are, named plural when
the tools count them, members never named like their group, and lone servers' rows kept short."""

import pytest

from mcp_cli.sources import clusters, grouping, summaries
from mcp_cli.sources.mcp_config import Server
from mcp_cli.sources.mcp_tools import command, server_group
from mcp_cli.tree import Node


def servers(**tools: str) -> list[Node]:
    """One server group per keyword: its tool names, space-separated."""
    return [server_group(Server(key.replace("_", "-"), {"command": "x"}), {}, [{"name": n} for n in names.split()], 15)
            for key, names in tools.items()]  # fmt: skip


@pytest.mark.parametrize(("word", "many"), [("event", "events"), ("policy", "policies"), ("day", "days"),
                                            ("box", "boxes"), ("branch", "branches"), ("dns-record", "dns-records"),
                                            ("status", "status"), ("s3", "s3")])  # fmt: skip
def test_plural(word, many):
    assert grouping.plural(word) == many


def test_a_thing_the_tools_count_is_named_plural_even_when_they_spell_it_singular():
    assert grouping.topics(["list_event", "get_event", "search_web", "fetch_web"]) == ["events", "web"]
    # what a name lists is its last noun: alerts about the weather, not weathers
    assert grouping.topics(["list_weather_alert", "get_weather", "get_alert"]) == ["weather", "alerts"]
    assert grouping.topics(["get_event", "query_event"]) == ["event"]  # nothing counts it


def test_an_agent_noun_after_a_thing_is_what_the_tool_does_not_a_thing():
    found = grouping.topics(["trial_getter", "trial_searcher", "variant_getter", "doc_editor"])
    assert found == ["trial", "variant", "doc"]
    assert grouping.topics(["list_followers", "get_follower", "get_runner"]) == ["followers", "runner"]  # verb first
    assert grouping.agent_verb("merger") == "merge" and grouping.agent_verb("user") == ""


def test_a_first_word_that_only_says_whose_a_tool_is_is_no_thing():
    names = ["github_create_pull_request", "create_pull_request", "github_get_pull_request", "list_issues", "get_issue"]
    assert grouping.topics(names) == ["pull-requests", "issues"]  # not `github`, nor `create` and `get` as things
    groups, _ = grouping.split(names)
    assert groups["pull-requests"] == [
        ("github_create_pull_request", "github-create-pull-request"),
        ("create_pull_request", "create"),
        ("github_get_pull_request", "get"),
    ]
    assert grouping.topics(["actions_list", "actions_get", "list_issues", "get_issue"]) == ["actions", "issues"]


CROWD = {
    "calendar": "list_event get_event create_event update_event delete_event list_calendar",
    "analytics": "query_event get_funnel list_cohort",
    "local": "query_event get_funnel list_cohort",
    "converter": "clean_html render_html split_html merge_pdf",
    "reader": "read_pdf",
    "discord": "send_message list_message list_channel",
    "teams": "send_message list_message list_channel create_channel",
    "srv": "send_email search_email create_draft",
    "cloud": "list_instance get_instance list_bucket list_function invoke_function list_alarm",
    "my_mcp": "postgres_list_table postgres_run_query postgres_list_schema",
    "server1": "get_weather get_forecast",
}


def test_servers_cluster_when_their_tools_act_mostly_on_the_same_things_not_on_one_shared_noun():
    rows = {g.name: g for g in clusters.cluster(servers(**CROWD))}
    assert list(rows) == "calendar event converter reader messages email cloud postgres weather".split()
    # calendar events and analytics events share a word, not a kind: apart; a pdf tool among html ones neither
    assert [m.name for m in rows["event"].children] == ["analytics", "funnel"]
    assert [m.name for m in rows["messages"].children] == ["discord", "teams"]
    assert rows["messages"].summary == "discord, teams."  # the servers by name: an agent goes straight to one


def test_a_server_whose_key_says_nothing_is_named_by_a_thing_other_than_its_clusters():
    rows = {g.name: g for g in clusters.cluster(servers(**CROWD))}
    local = rows["event"].children[1]
    assert (local.name, local.aliases) == ("funnel", ["local"])  # its first thing, `event`, names its cluster
    assert rows["email"].aliases == ["srv"]  # a lone one: its first thing
    assert rows["postgres"].aliases == ["my-mcp"]  # the word its tools' names start with, before any thing
    assert rows["weather"].aliases == ["server1"]  # ... unless that word is a verb (get_weather, get_forecast)


def test_a_lone_servers_row_says_its_main_things_beyond_its_name_or_their_verbs_or_a_small_ones_commands():
    rows = {g.name: g.summary for g in clusters.cluster(servers(**CROWD))}
    assert rows["converter"] == "Html, pdf."  # the two things its tools act on most
    assert rows["cloud"] == "Instances, functions."
    assert rows["calendar"] == "List, get, create events."  # its name says calendar: what it does to its one other
    assert rows["email"] == "Create drafts."
    assert rows["weather"] == "Get forecast."  # named `weather` by `rename`: what is left is its forecast
    assert rows["reader"] == "read-pdf."  # one tool: its command, so an agent can skip the server's help
    assert all(summaries.says_something(summary, name) for name, summary in rows.items())


def test_a_lone_servers_own_words_come_first_cut_short():
    said = {"name": "acme", "description": "Tracks shipments and deliveries for online shops, worldwide."}
    group = server_group(Server("acme", {"command": "x"}), {"server": said}, [{"name": "get_thing"}], 15)
    assert group.summary == group.description == "Tracks shipments and deliveries for online shops, worldwide."
    row = {g.name: g.summary for g in clusters.cluster([group, *servers(**CROWD)])}["acme"]
    assert row == "Tracks shipments and deliveries..."  # five words at most, not ending on `for`


def test_a_crowded_root_merges_loosely_alike_servers_until_it_has_rows_rows_at_most(monkeypatch):
    crowd = servers(**CROWD)
    assert len(clusters.cluster(crowd)) == 9  # under ROWS: only servers SIMILAR alike merge
    monkeypatch.setattr(clusters, "ROWS", 7)
    rows = {g.name: g for g in clusters.cluster(servers(**CROWD))}
    assert len(rows) == 7  # the most alike of the rest merged, down to ROWS: events of both kinds, pdf tools
    assert [m.name for m in rows["events"].children] == ["calendar", "analytics", "funnel"]
    assert [m.name for m in rows["pdf"].children] == ["converter", "reader"]
    assert "cloud" in rows and "weather" in rows  # alike to nothing: apart still


def test_servers_whose_config_keys_start_alike_are_grouped_under_those_words_when_none_is_called_so():
    rows = {g.name: g for g in clusters.cluster(servers(github_work=CROWD["teams"], github_personal=CROWD["teams"],
                                                        aws=CROWD["cloud"], aws_2=CROWD["cloud"]))}  # fmt: skip
    assert [m.name for m in rows["github"].children] == ["github-work", "github-personal"]
    assert "aws" not in rows  # `aws aws` would be a path: named by their thing instead
    assert [m.name for m in rows["instances"].children] == ["aws", "aws-2"]


def test_a_tool_without_a_description_is_described_by_its_name_and_parameters():
    schema = {"type": "object", "properties": {p: {"type": "string"} for p in ("limit", "cursor", "q", "sort")}}
    made = command("srv", {"name": "listCalendarEvents", "inputSchema": schema})
    assert made.description == "List calendar events (limit, cursor, q, ...)."
    assert command("srv", {"name": "ping"}).summary == "Ping."
    assert command("srv", {"name": "get_x", "description": "Gets X."}).description == "Gets X."  # its own first


@pytest.mark.parametrize(
    ("text", "name", "says"),
    [("Ticker.", "ticker", False), ("Ticker.", "stocks", False), ("Quotes, news.", "ticker", True),
     ("get-story.", "hackernews", True), ("", "x", False), ("Ticker prices.", "ticker", False)],
)  # fmt: skip
def test_a_summary_says_something_with_two_words_besides_the_name(text, name, says):
    assert summaries.says_something(text, name) is says
