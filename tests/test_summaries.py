"""A server's row says what it is where its key does not: the name its tools' descriptions call it by, else its
serverInfo name; never a word its key already says, an acronym, or a name only one tool in three uses."""

import pytest

from mcp_cli.sources.summaries import brand

CRM = ["List contacts in Pipedrive (CRM).", "Create deals in Pipedrive (CRM).", "Get a company."]


@pytest.mark.parametrize(
    ("descriptions", "key", "info", "said"),
    [
        (CRM, "mcp", None, "Pipedrive"),
        (CRM, "pipedrive", None, ""),  # the key says it
        (["Send emails in Outlook Mail.", "Search emails in Outlook Mail."], "srv", None, "Outlook Mail"),
        (["Send emails in Outlook Mail.", "Search emails in Outlook Mail."], "outlook-mail", None, ""),
        (["Get a story from HackerNews.", "Search HackerNews."], "hackernews", None, ""),  # spelt inside the key
        (["Create a new Word document.", "Copy a Word document.", "Add a paragraph."], "remote-2", None, "Word"),
        (["Read a page by URL.", "Fetch a URL as JSON."], "web", None, ""),  # acronyms say no brand
        (["List events in Mixpanel.", "Query a funnel.", "List cohorts."], "local", None, ""),  # one in three
        (["List events.", "Get a funnel."], "local", {"name": "mixpanel-mcp"}, "Mixpanel"),
        (["List events.", "Get a funnel."], "mixpanel", {"name": "mixpanel-mcp"}, ""),
        (["List events.", "Get a funnel."], "local", {"name": "mcp-server"}, ""),
        (["List events.", "Get a funnel."], "local", {"name": "FastMCP"}, ""),  # a framework's default
        (["List events.", "Get a funnel."], "local", {"name": "events"}, ""),  # names no MCP server
    ],
)
def test_a_brand_is_what_a_servers_tools_call_it_where_its_key_does_not_say(descriptions, key, info, said):
    assert brand(descriptions, key, info) == said
