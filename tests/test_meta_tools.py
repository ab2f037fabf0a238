"""`serve --surface meta`: search_tools, describe_tools and call_tool, through a real MCP client over stdio (and
streamable HTTP), on the demo tree and on a wrap of a real upstream server; the same result envelope as the one
argv tool."""

import json
import subprocess
import sys

import jsonschema
import pytest

from mcp_cli.testing import envelope

from .conftest import DEMO, ROOT, budget, free_port, inspector, served, text, wait_for_port
from .fixtures.upstreams.awkward import ECHO_SCHEMA

AWKWARD = ROOT / "tests" / "fixtures" / "upstreams" / "awkward.py"
META = ("--surface", "meta")
THREE = ["search_tools", "describe_tools", "call_tool"]

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def upstream(tmp_path_factory):
    """A config of the awkward upstream, and an environment with its own tool-list cache."""
    folder = tmp_path_factory.mktemp("meta")
    config = folder / "up.json"
    config.write_text(json.dumps({"mcpServers": {"awkward": {"command": sys.executable, "args": [str(AWKWARD)]}}}))
    return str(config), {"MCP_CLI_CACHE_DIR": str(folder / "cache")}


def _besides_output(result) -> dict:
    """A meta-tool result's structuredContent without the output its text carries: what the one tool's `_meta` holds."""
    return {k: v for k, v in result.structured_content.items() if k not in ("output", "message", "stderr")}


async def meta(client, tool: str, **arguments):
    result = await client.call_tool(tool, arguments)
    return result, text(result)


async def test_lists_exactly_the_three_tools_with_valid_schemas():
    async with served("serve", str(DEMO), *META) as client:
        listed = (await client.list_tools()).tools
        assert [t.name for t in listed] == THREE
        for tool in listed:
            jsonschema.Draft202012Validator.check_schema(tool.input_schema)
            assert tool.description
        assert "search_tools" in client.instructions


async def test_demo_search_describe_and_call_like_the_argv_tool():
    async with served("serve", str(DEMO), *META) as client:
        found, shown = await meta(client, "search_tools", query="add two numbers")
        assert not found.is_error and shown.split()[:2] == ["math", "add"]
        assert len([line for line in shown.splitlines() if line.startswith("  ")]) <= 5
        _, missed = await meta(client, "search_tools", query="add a new employee to payroll")
        assert missed.startswith(
            "No command fits 'add a new employee to payroll'; none knows employee, payroll. The closest:\n  math add"
        )

        described, shown = await meta(client, "describe_tools", names=["math add"])
        [entry] = json.loads(shown)
        assert entry["name"] == "math add" and entry["inputSchema"]["required"] == ["a", "b"]
        assert entry["inputSchema"]["properties"]["a"]["type"] == "integer"
        jsonschema.Draft202012Validator.check_schema(entry["inputSchema"])

        called = await client.call_tool("call_tool", {"name": "math add", "arguments": {"a": 2, "b": 3}})
        upper = await client.call_tool(
            "call_tool", {"name": "text upper", "arguments": {"words": ["-dash", "word"], "exclaim": True}}
        )
    async with served("serve", str(DEMO)) as client:
        direct = await client.call_tool("demo", {"argv": ["math", "add", "2", "3"]})
        direct_upper = await client.call_tool("demo", {"argv": ["text", "upper", "--exclaim", "--", "-dash", "word"]})
    assert _besides_output(called) == envelope(direct) and called.structured_content["data"] == 5
    assert text(called) == text(direct) and not called.is_error
    assert _besides_output(upper) == envelope(direct_upper) and text(upper) == text(direct_upper)
    assert upper.structured_content["output"] == "-DASH WORD!"


async def test_upstream_search_describe_and_call_like_the_argv_tool(upstream):
    config, env = upstream
    arguments = {"query": "needle", "limit": 3, "tags": ["a", "b"], "filters": {"status": "open"}, "help": "-x"}
    async with served("serve", config, *META, env=env) as client:
        _, shown = await meta(client, "search_tools", query="return the arguments it got")
        assert "awkward echo-args" in shown

        _, shown = await meta(client, "describe_tools", names=["awkward echo-args"])
        [entry] = json.loads(shown)
        assert entry["inputSchema"] == ECHO_SCHEMA  # the upstream tool's own schema, as it listed it

        called = await client.call_tool("call_tool", {"name": "awkward echo-args", "arguments": arguments})
    async with served("serve", config, env=env) as client:
        direct = await client.call_tool("up", {"argv": ["awkward", "echo-args", "--json", json.dumps(arguments)]})
    assert not called.is_error, text(called)
    assert json.loads(text(called)) == arguments
    assert _besides_output(called) == envelope(direct)
    assert [c.model_dump() for c in called.content] == [c.model_dump() for c in direct.content]


async def test_bad_arguments_and_unknown_names_are_clear_errors_and_serving_goes_on(upstream):
    config, env = upstream
    async with served("serve", str(DEMO), *META) as client:
        bad, shown = await meta(client, "call_tool", name="math add", arguments={"a": "two", "b": 3})
        assert bad.is_error and shown.startswith("Error: invalid arguments of `math add`: `a`: 'two' is not of")
        assert bad.structured_content["error"] == "bad_request"

        nul, shown = await meta(client, "call_tool", name="text upper", arguments={"words": ["a\0b"]})
        assert nul.structured_content["error"] == "bad_request" and "NUL character" in shown

        missing, shown = await meta(client, "call_tool", name="math add", arguments={"a": 1})
        assert missing.is_error and "'b' is a required property" in shown

        unknown, shown = await meta(client, "call_tool", name="math ad", arguments={})
        assert unknown.is_error and "no command `math ad`" in shown and "Did you mean `math add`" in shown
        assert unknown.structured_content["error"] == "not_found"

        unknown, shown = await meta(client, "describe_tools", names=["math add", "text uper"])
        assert unknown.is_error and "Did you mean `text upper`" in shown and "Traceback" not in shown

        group, shown = await meta(client, "describe_tools", names=["math"])
        assert group.is_error and "no command `math`" in shown

        wrong, shown = await meta(client, "describe_tools", names="math add")
        assert wrong.is_error and "`names`: 'math add' is not of type 'array'" in shown

        other, shown = await meta(client, "demo", argv=["--help"])
        assert other.is_error and "the tools are search_tools, describe_tools, call_tool" in shown

        again = await client.call_tool("call_tool", {"name": "math add", "arguments": {"a": 1, "b": 1}})
        assert not again.is_error and again.structured_content["data"] == 2
    async with served("serve", config, *META, env=env) as client:
        bad, shown = await meta(client, "call_tool", name="awkward echo-args", arguments={"limit": "ten"})
        assert bad.is_error and "invalid arguments of `awkward echo-args`" in shown
        bad, shown = await meta(client, "call_tool", name="awkward echo-args", arguments={"query": "q", "limit": 0})
        assert bad.is_error and "`limit`: 0 is less than the minimum of 1" in shown
        failed, shown = await meta(client, "call_tool", name="awkward fail")
        assert failed.is_error and failed.structured_content["error"] == "upstream" and "says no" in shown


async def test_meta_tools_over_streamable_http():
    from mcp import Client

    port = free_port()
    argv = [sys.executable, "-m", "mcp_cli", "serve", str(DEMO), *META, "--http", str(port)]
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_for_port(port, proc)
        async with Client(f"http://127.0.0.1:{port}/mcp") as client:
            assert [t.name for t in (await client.list_tools()).tools] == THREE
            mean = await client.call_tool("call_tool", {"name": "math mean", "arguments": {"numbers": [1, 2, 6]}})
            assert not mean.is_error and mean.structured_content["command"] == "demo math mean"
    finally:
        proc.terminate()
        proc.wait(timeout=budget(10))


def test_inspector_strict_accepts_the_meta_tools(tmp_path):
    """The MCP Inspector CLI, an independent client, lints the three tools (--strict) and calls one."""
    server = [sys.executable, "-m", "mcp_cli", "serve", str(DEMO), *META]
    listed = inspector(server, "--method", "tools/list", home=tmp_path, strict=True)
    assert listed.returncode == 0, listed.stderr
    assert [t["name"] for t in json.loads(listed.stdout)["tools"]] == THREE
    called = inspector(
        server,
        "--method",
        "tools/call",
        "--tool-name",
        "search_tools",
        "--tool-arg",
        "query=mean of numbers",
        home=tmp_path,
    )
    assert called.returncode == 0, called.stderr
    assert '"isError": false' in called.stdout and "math mean" in called.stdout


@pytest.mark.parametrize("broken", [{"type": "strin"}, {"type": "string", "maxLength": "x"}, {"pattern": "["}])
def test_call_tool_leaves_an_upstream_s_broken_schema_to_the_upstream(broken):
    from mcp_cli.errors import BadRequest
    from mcp_cli.surfaces.meta_tools import check

    check({"type": "object", "properties": {"x": broken}}, {"x": "1"}, "arguments")  # nothing to say: no error
    with pytest.raises(BadRequest, match="^invalid arguments: `x`: 1 is not of type 'string'.$"):
        check({"type": "object", "properties": {"x": {"type": "string"}}}, {"x": 1}, "arguments")


async def test_call_tool_makes_an_upstream_tool_s_validator_once_while_its_tree_stays(monkeypatch):
    """A schema that outlives the call is made a validator once: the three tools' own, and an upstream tool's (the
    one its call through the runtime checks with); a new tree (its upstream's tools changed) makes the latter anew."""
    from mcp_cli.engine import schema
    from mcp_cli.engine.runtime import Runtime
    from mcp_cli.surfaces import meta_tools
    from mcp_cli.testing import mock_upstream, wrap

    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    made: list[object] = []
    real = schema.validator
    for module in (schema, meta_tools):
        monkeypatch.setattr(module, "validator", lambda s: made.append(s) or real(s))
    meta_tools._own_validator.cache_clear()
    tree = await wrap({"calc": mock_upstream("calc", add)})
    async with Runtime(tree) as runtime:
        meta = meta_tools.Meta(runtime)
        call = {"name": "calc add", "arguments": {"a": 2, "b": 3}}
        for _ in range(3):
            assert (await meta.call("call_tool", call)).output.strip() == "5"
        assert len(made) == 2  # call_tool's own schema, and calc add's
        refused = await meta.call("call_tool", {"name": "calc add", "arguments": {"a": "two", "b": 3}})
        assert not refused.ok and "`a`: 'two' is not of type 'integer'" in refused.message and len(made) == 2
        runtime.adopt(await wrap({"calc": mock_upstream("calc", add)}))
        assert (await meta.call("call_tool", call)).output.strip() == "5" and len(made) == 3  # calc add's anew
