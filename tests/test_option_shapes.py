"""Issue 28's targets over the bench corpora: every option's help shows a type, choices or a shape (bench/shapes.py),
and a scripted agent that sees only the surface gets from the tool definition to a correct call in a few calls
(bench/turns.py)."""

import pytest

from bench import corpora, shapes, turns
from bench.corpora import Corpus
from mcp_cli.engine import help
from mcp_cli.engine import schema as s
from mcp_cli.tree import Command, Param


@pytest.mark.parametrize("corpus", [corpora.boundary, corpora.github, corpora.progressive])
def test_only_options_whose_schema_says_nothing_show_a_bare_json_placeholder(corpus):
    found = shapes.run(corpus())
    assert found["rows"] > 250 and found["bare"] == found["empty"], found["examples"]
    assert found["hidden"] == 0  # every choice a schema lists shows


def tool(name: str, description: str, **properties) -> dict:
    required = [k for k, v in properties.items() if v.pop("required", False)]
    return {
        "name": name,
        "description": description,
        "inputSchema": {"type": "object", "properties": properties, "required": required},
    }


def test_the_check_counts_bare_placeholders_and_tells_those_of_schemas_that_say_nothing():
    odd = {"anyOf": [{"type": "string"}, {"not": {}}], "description": "Says something."}
    corpus = Corpus("t", [("s", [tool("a", "A.", free={"description": "Anything."}, odd=odd, n={"type": "integer"})])])
    found = shapes.run(corpus)
    assert (found["rows"], found["bare"], found["empty"], found["examples"]) == (3, 2, 1, ["s/a --odd"])
    schema = {"type": "object", "properties": {"m": {"anyOf": [{"const": "fast"}, {"const": "slow"}]}}}
    unshown = Command(
        "c", params=[Param("m", flags=["--m"])], schema=schema, handler={"kind": "mcp", "server": "s", "tool": "c"}
    )
    shown = Command("c", params=s.params(schema), schema=schema, handler={"kind": "mcp", "server": "s", "tool": "c"})
    assert shapes.hidden_choices(unshown, unshown.params[0], help.command_help("t c", unshown))
    assert not shapes.hidden_choices(shown, shown.params[0], help.command_help("t c", shown))


FORECAST = tool(
    "get_forecast",
    "Get the weather forecast for a city.",
    city={"type": "string", "required": True},
    units={"anyOf": [{"const": "metric", "description": "Celsius."}, {"const": "imperial"}], "required": True},
)
UPLOAD = tool(
    "upload_files",
    "Upload files to a bucket.",
    files={"type": "array", "items": {"$ref": "#/$defs/file"}, "required": True},
)
UPLOAD["inputSchema"]["$defs"] = {
    "file": {
        "type": "object",
        "properties": {"path": {"type": "string"}, "mode": {"type": "integer"}},
        "required": ["path", "mode"],
    }
}
SMALL = Corpus(
    "small",
    [
        ("weather", [FORECAST, tool("list_alerts", "List weather alerts.")]),
        ("storage", [UPLOAD, tool("delete_bucket", "Delete a storage bucket.")]),
    ],
    [
        ("get the weather forecast for 'Paris' in imperial units", [("weather", "get_forecast")]),
        ("upload files to the storage bucket", [("storage", "upload_files")]),
    ],
)


def test_a_scripted_agent_calls_a_small_group_s_command_from_its_listing_and_fills_what_help_shows():
    found = turns.run(SMALL)
    # via the root: the tool's description names both domains, and the tasks name them: the domain's help (with usage
    # lines), the call; a JSON value's fields are not on the usage line: the first call is refused, and the error,
    # which shows them, teaches the second
    assert found["root"] == {"done": 2, "median": 2.5, "within3": 2}
    assert found["search"] == {"done": 2, "median": 2.5, "within3": 2}  # search (the usage line under its row), call
    sent = turns._Recorder.calls[-4:]
    assert ("weather", "get_forecast", {"city": "Paris", "units": "imperial"}) in sent  # the choice the task names
    assert ("storage", "upload_files", {"files": [{"path": "x", "mode": 1}]}) in sent  # the fields help showed
