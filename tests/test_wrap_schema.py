"""JSON Schema -> argv -> JSON: every case, checked against what a real upstream server receives."""

import json
import sys

import pytest

from mcp_cli.testing import envelope

from .conftest import ROOT, served, text

pytestmark = pytest.mark.anyio
AWKWARD = ROOT / "tests" / "fixtures" / "upstreams" / "awkward.py"


@pytest.fixture(scope="module")
def config(tmp_path_factory):
    folder = tmp_path_factory.mktemp("wrap")
    path = folder / "awk.json"
    path.write_text(json.dumps({"mcpServers": {"awkward": {"command": sys.executable, "args": [str(AWKWARD)]}}}))
    return path


@pytest.fixture(scope="module")
async def awk(config, tmp_path_factory):
    cache = tmp_path_factory.mktemp("cache")
    async with served("serve", str(config), env={"MCP_CLI_CACHE_DIR": str(cache)}) as client:
        yield client


CASES = [
    (["--query", "q"], {"query": "q"}),
    (["--query", "q", "--limit", "5", "--ratio", "0.5"], {"query": "q", "limit": 5, "ratio": 0.5}),
    (["--query", "q", "--verbose"], {"query": "q", "verbose": True}),
    (["--query", "q", "--no-verbose"], {"query": "q", "verbose": False}),
    (["--query", "q", "--mode", "slow"], {"query": "q", "mode": "slow"}),
    (["--query", "q", "--tags", "a", "--tags", "b"], {"query": "q", "tags": ["a", "b"]}),
    (["--query", "q", "--tags", '["a", "b"]', "--tags", "c"], {"query": "q", "tags": ["a", "b", "c"]}),
    (["--query", "q", "--ids", "1", "--ids", "[2, 3]"], {"query": "q", "ids": [1, 2, 3]}),
    (
        ["--query", "q", "--filters.status", "open", "--filters.labels", "x", "--filters.since", "3"],
        {"query": "q", "filters": {"status": "open", "labels": ["x"], "since": 3}},
    ),
    (
        ["--query", "q", "--filters", '{"status": "closed", "since": 1}', "--filters.since", "2"],
        {"query": "q", "filters": {"status": "closed", "since": 2}},
    ),
    (["--query", "q", "--extra", '{"any": {"thing": [1]}}'], {"query": "q", "extra": {"any": {"thing": [1]}}}),
    (["--query", "q", "--maybe", "m"], {"query": "q", "maybe": "m"}),
    (["--query", "q", "--either", "7"], {"query": "q", "either": "7"}),  # text where text is allowed
    (["--json", '{"query": "q", "either": 7}'], {"query": "q", "either": 7}),  # another type: inside --json
    (["--query", "q", "--either", "seven"], {"query": "q", "either": "seven"}),
    (["--query", "q", "--nullable-int", "4"], {"query": "q", "nullable_int": 4}),
    (
        ["--query", "q", "--arg-help", "H", "--arg-h", "2", "--arg-json", "J"],
        {"query": "q", "help": "H", "h": 2, "json": "J"},
    ),
    (["--query", "q", "--dry-run"], {"query": "q", "dry-run": True}),
    (["--query", "q", "--max-results", "4"], {"query": "q", "max_results": 4}),
    (["--query", "q", "--max_results", "5"], {"query": "q", "max_results": 5}),
    (["--query", "q", "--full-path", "/a"], {"query": "q", "fullPath": "/a"}),
    (["--query", "q", "--fullPath", "/a"], {"query": "q", "fullPath": "/a"}),
    (["--query", "q", "--full_path", "/b", "--full-path", "/a"], {"query": "q", "full_path": "/b", "fullPath": "/a"}),
    (["--query", "q", "--page-size", "1.5"], {"query": "q", "pageSize": 1.5}),
    (["--query", "q", "--include-archived"], {"query": "q", "includeArchived": True}),
    (["--query", "q", "--no-includeArchived"], {"query": "q", "includeArchived": False}),
    (["--query", "q", "--año-nuevo", "x", "--año_nuevo", "y"], {"query": "q", "año_nuevo": "y"}),
    (
        ["--query", "q", "--people", '{"name": "ann"}', "--people", '[{"name": "bo"}]'],
        {"query": "q", "people": [{"name": "ann"}, {"name": "bo"}]},
    ),
    (["--json", '{"query": "z", "limit": 3}'], {"query": "z", "limit": 3}),
    (["--json", '{"query": "z", "limit": 3}', "--limit", "4"], {"query": "z", "limit": 4}),
]


@pytest.mark.parametrize("argv, expected", CASES)
async def test_argv_becomes_exactly_this_json(awk, argv, expected):
    result = await awk.call_tool("awk", {"argv": ["awkward", "echo-args", *argv]})
    assert not result.is_error, text(result)
    assert json.loads(text(result)) == expected
    assert envelope(result)["data"] == expected  # the upstream's structuredContent, unchanged


@pytest.mark.parametrize(
    "argv", [["--page-size", "100"], ["--pageSize", "1e2"], ["--ratio", "100.0"], ["--ids", "1e2"], ["--ids", "100.0"]]
)
async def test_an_integral_number_reaches_the_upstream_as_an_integer(awk, argv):
    result = await awk.call_tool("awk", {"argv": ["awkward", "echo-args", "--query", "q", *argv]})
    (value,) = [v for k, v in json.loads(text(result)).items() if k != "query"]
    value = value[0] if isinstance(value, list) else value
    assert value == 100 and type(value) is int, text(result)


@pytest.mark.parametrize(
    "argv",
    [
        ["--ratio", "nan"],
        ["--ratio", "inf"],
        ["--page-size", "1e400"],
        ["--ids", "-Infinity"],
        ["--json", '{"query": "q", "ratio": NaN}'],
    ],
)
async def test_a_number_json_cannot_carry_is_refused_not_sent_as_null(awk, argv):
    result = await awk.call_tool("awk", {"argv": ["awkward", "echo-args", "--query", "q", *argv]})
    assert result.is_error and envelope(result)["error"] == "usage", text(result)


async def test_json_from_a_file(awk, tmp_path):
    (tmp_path / "args.json").write_text('{"query": "from file", "tags": ["t"]}')
    result = await awk.call_tool("awk", {"argv": ["awkward", "echo-args", "--json", f"@{tmp_path / 'args.json'}"]})
    assert json.loads(text(result)) == {"query": "from file", "tags": ["t"]}


@pytest.mark.parametrize(
    "source, words",
    [
        ("/dev/zero", "@/dev/zero is not a regular file"),
        (".", "is not a regular file"),
        ("big", "holds 1,000,013 bytes, more than the 1,000,000 allowed"),
        ("missing", "cannot read @"),
    ],
)
async def test_json_files_are_regular_and_capped(awk, tmp_path, source, words):
    if source == "big":
        (tmp_path / "big").write_text('{"query": "' + "x" * 1_000_000 + '"}')
    path = source if source.startswith("/") else str(tmp_path / source)
    result = await awk.call_tool("awk", {"argv": ["awkward", "echo-args", "--json", f"@{path}"]})
    assert result.is_error and envelope(result)["error"] == "usage"
    assert words in text(result), text(result)
    after = await awk.call_tool("awk", {"argv": ["awkward", "echo-args", "--query", "still here"]})
    assert json.loads(text(after)) == {"query": "still here"}


async def test_original_tool_name_is_an_alias(awk):
    result = await awk.call_tool("awk", {"argv": ["awkward", "echo_args", "--query", "q"]})
    assert json.loads(text(result)) == {"query": "q"}


ERRORS = [
    (["--limit", "2"], "missing required option --query (or give it inside --json)"),
    (["--query", "q", "--limit", "500"], "--limit: 500 is greater than the maximum of 100"),
    (["--query", "q", "--limit", "many"], "argument --limit: invalid integer value: 'many'"),
    (["--query", "q", "--limit", "²"], "argument --limit: invalid integer value: '²'; give a whole number"),
    (["--query", "q", "--limit", "1" * 5000], "it has 5,000 digits, more than the 4,300 a number may have"),
    (["--query", "q", "--ids", "1" * 5000], "--ids: expected integer, got '111111111111111111111111'..."),
    (["--query", "q", "--mode", "medium"], "invalid choice: 'medium'"),
    (["--query", "q", "--filters", '{"status": "x"}'], "--filters.status: 'x' is not one of ['open', 'closed']"),
    (["--query", "q", "--ids", "two"], "--ids: expected integer, got 'two'"),
    (["--query", "q", "--extra", "{nope"], "--extra: not valid JSON"),
    (["--json", "[1]"], "--json: expected a JSON object"),
    (["--json", '{"query": "q", "bogus": 1}'], "'bogus' was unexpected"),
    (["--query", "q", "--colour", "red"], "unknown option --colour"),
    (["--json", '{"query": "q", "either": 1.5}'], "--either: got 1.5; expected string|integer."),
]


@pytest.mark.parametrize("argv, words", ERRORS)
async def test_schema_errors_are_told_in_argv_terms(awk, argv, words):
    result = await awk.call_tool("awk", {"argv": ["awkward", "echo-args", *argv]})
    assert result.is_error
    assert words in text(result), text(result)
    assert "awk awkward echo-args --query TEXT" in text(result)  # the usage comes with it


async def test_help_shows_types_ranges_shapes_and_hints(awk):
    out = text(await awk.call_tool("awk", {"argv": ["awkward", "echo-args", "--help"]}))
    assert "--limit INT                 [1..100] (default: 10)" in out
    assert "--verbose/--no-verbose" in out and "--mode {fast,slow}" in out
    assert "--filters JSON              [JSON {status: open|closed, labels: [string], since: integer}]" in out
    assert "--people JSON               [each a JSON object, fields below] (repeatable)\n      name*: string\n" in out
    assert "--either TEXT|INT" in out
    assert "--arg-help TEXT             A property named help." in out
    assert "Hints: read-only, idempotent." in out


async def test_help_shows_options_in_kebab_case_and_says_which_flag_a_clash_left(awk):
    out = text(await awk.call_tool("awk", {"argv": ["awkward", "echo-args", "--help"]}))
    assert "--full-path TEXT" in out and "--page-size NUM" in out and "--max-results INT" in out
    assert "--fullPath" not in out and "--pageSize" not in out and "--max_results" not in out  # accepted, not shown
    assert "--full_path TEXT" in out and "not --full-path, which sets fullPath" in out
    wrong = await awk.call_tool("awk", {"argv": ["awkward", "echo-args", "--query", "q", "--page-sise", "2"]})
    assert "Did you mean `--page-size`?" in text(wrong)


async def test_a_long_summary_is_cut_between_words_outside_brackets(awk):
    listing = text(await awk.call_tool("awk", {"argv": ["awkward", "--help"]}))
    (row,) = [line for line in listing.splitlines() if line.strip().startswith("echo-args ")]
    summary = row.strip().removeprefix("echo-args").strip()
    assert summary.endswith("...") and summary.count("(") == summary.count(")")
    whole = " ".join(text(await awk.call_tool("awk", {"argv": ["awkward", "echo-args", "--help"]})).split())
    assert summary[:-3] + " " in whole  # the description there is whole; the cut fell between two words
