"""mcp_cli.testing: `invoke` through the real runtime, `call`/`ok` on a served tree, and `mcp` handlers against a
mock upstream on the SDK's in-memory transport (no process)."""

import anyio
import pytest
from mcp.server.mcpserver.exceptions import ToolError

from mcp_cli.testing import ainvoke, call, invoke, mock_upstream, ok, wrap
from mcp_cli.tree import Command, Group, Param, Tree

from .conftest import DEMO, served

seen: list[dict] = []


def list_issues(repo: str, limit: int = 10) -> str:
    """List the issues of a repository."""
    seen.append({"repo": repo, "limit": limit})
    return f"{limit} issues of {repo}"


def close_issue(number: int) -> str:
    """Close an issue."""
    raise ToolError(f"issue {number} is locked")


GITHUB = mock_upstream("github", list_issues, close_issue)


def test_invoke_takes_a_source_or_a_tree_and_argv_or_one_string():
    assert invoke(DEMO, ["math", "add", "2", "40"]).output.strip() == "42"
    assert invoke(str(DEMO), "math add 2 40").output.strip() == "42"
    missing = invoke(DEMO, ["math", "ad"])
    assert (missing.ok, missing.error) == (False, "not_found") and "Did you mean `add`?" in missing.message


def test_a_trees_mcp_handlers_call_the_mock_upstream():
    params = [Param("repo", flags=["--repo"], required=True), Param("limit", flags=["--limit"], type="integer")]
    schema = {"type": "object", "properties": {"repo": {"type": "string"}, "limit": {"type": "integer"}}}
    cmd = Command(
        "issues", params=params, handler={"kind": "mcp", "server": "github", "tool": "list_issues"}, schema=schema
    )
    tree = Tree(Group("gh", children=[cmd]))
    seen.clear()
    result = invoke(tree, ["issues", "--repo", "o/r", "--limit", "3"], upstreams={"github": GITHUB})
    assert (result.ok, result.output) == (True, "3 issues of o/r")
    assert seen == [{"repo": "o/r", "limit": 3}]
    assert tree.upstreams == {}  # the tree given is left as it was


def test_a_wrapped_mock_upstream_is_a_group_with_typed_options():
    async def main():
        tree = await wrap({"github": GITHUB})
        seen.clear()
        listed = await ainvoke(tree, ["github", "list-issues", "--repo", "o/r"])
        assert (listed.ok, listed.output, seen) == (True, "10 issues of o/r", [{"repo": "o/r", "limit": 10}])
        typed = await ainvoke(tree, ["github", "list-issues", "--repo", "o/r", "--limit", "x"])
        assert typed.error == "usage" and len(seen) == 1  # refused before the upstream
        closed = await ainvoke(tree, "github close-issue --number 7")
        assert (closed.ok, closed.error) == (False, "upstream") and closed.output.endswith(": issue 7 is locked")

    anyio.run(main)


@pytest.mark.anyio
async def test_call_and_ok_on_a_served_tree():
    async with served("serve", str(DEMO)) as client:
        assert (await ok(client, "math", "add", "2", "40")).strip() == "42"
        reply = await call(client, command="math ad")
        assert not reply.ok and reply.structured["error"] == "not_found" and "Did you mean `add`?" in reply.text
        with pytest.raises(AssertionError, match="has no domain `nope`"):
            await ok(client, "nope")
