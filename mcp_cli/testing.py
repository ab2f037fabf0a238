"""Drive a command tree in tests, the way click's `CliRunner` drives a CLI. Needs no pytest.

In-process, through the real Runtime (help, parsing, validation, handlers, the result envelope)::

    from mcp_cli.testing import invoke
    result = invoke("skills/pdf", ["text", "--help"])   # a Tree, or any source `mcp-cli serve` takes
    assert result.ok and "extract" in result.output

Served, through a real MCP client over stdio to `python -m mcp_cli serve SOURCE`::

    async with served("serve", "skills/pdf") as client:
        assert "extract" in await ok(client, "text", "--help")
        reply = await call(client, "text", "extract", "missing.pdf")   # Reply: ok, text, structured, content

Upstream MCP tools without a process: `mock_upstream` makes an SDK `MCPServer` from plain functions, and
`invoke(..., upstreams={"github": server})` points the tree's `mcp` handlers for that server at it, over the
SDK's in-memory transport. `wrap({"github": server})` makes the tree `mcp-cli serve` would make of it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from .engine.runtime import Runtime
from .handlers import CallScope
from .result import META, Result
from .tree import Group, Node, Tree

if TYPE_CHECKING:
    from mcp import Client
    from mcp.server import MCPServer, Server
    from mcp.types import CallToolResult, ContentBlock

    InProcess = MCPServer | Server  # an SDK server object, reached over the in-memory transport

__all__ = ["Reply", "ainvoke", "call", "invoke", "mock_upstream", "node", "ok", "served", "text", "wrap"]


def node(tree: Tree, path: str) -> Node:
    """The node at a path of names (`"text extract"`); AssertionError naming the path when there is none."""
    found: Node = tree.root
    for name in path.split():
        child = found.child(name) if isinstance(found, Group) else None
        assert child is not None, f"no {path!r} in {tree.name}"
        found = child
    return found


def invoke(
    tree: Tree | str | Path,
    argv: list[str] | str,
    cwd: str | Path | None = None,
    upstreams: dict[str, InProcess] | None = None,
) -> Result:
    """Run `argv` (a list, or one string split like a shell) against `tree` in this process and return the
    result envelope, as `mcp-cli run` would (`@FILE` arguments are read). `cwd` is where the caller works;
    `upstreams` maps server names to in-process servers."""
    return anyio.run(ainvoke, tree, argv, cwd, upstreams)


async def ainvoke(
    tree: Tree | str | Path,
    argv: list[str] | str,
    cwd: str | Path | None = None,
    upstreams: dict[str, InProcess] | None = None,
) -> Result:
    """`invoke` for async code."""
    if not isinstance(tree, Tree):
        from .sources import loader as sources

        tree = sources.load(str(tree))
    if upstreams:
        tree = replace(tree, upstreams={**tree.upstreams, **{n: {"server": s} for n, s in upstreams.items()}})
    arguments = {"command": argv} if isinstance(argv, str) else {"argv": list(argv)}
    async with Runtime(tree) as runtime:
        return await runtime.call_tool(arguments, CallScope(None if cwd is None else str(cwd), local_files=True))


@asynccontextmanager
async def served(
    *args: str, cwd: str | Path | None = None, env: dict[str, str] | None = None, command: str = "", **options: Any
) -> AsyncIterator[Client]:
    """A real MCP client session (`mcp.Client`) over stdio to `python -m mcp_cli ARGS` (or to `command ARGS`),
    started in `cwd` with `env` added to this environment; `options` go to `mcp.Client` (`list_roots_callback`)."""
    from mcp import Client, StdioServerParameters

    argv = [command, *args] if command else [sys.executable, "-m", "mcp_cli", *args]
    full_env = {**os.environ, **env} if env else None
    where = None if cwd is None else str(cwd)
    params = StdioServerParameters(command=argv[0], args=argv[1:], cwd=where, env=full_env)
    async with Client(params, **options) as client:
        yield client


def text(result: CallToolResult) -> str:
    """All text content of a CallToolResult, joined."""
    return "".join(c.text for c in result.content if c.type == "text")


@dataclass
class Reply:
    """A served call's answer: `ok` (not isError), the `text` an agent reads, the `structured` content, and the
    raw content items."""

    ok: bool
    text: str
    structured: dict[str, Any]
    content: list[ContentBlock]


async def call(client: Client, *argv: str | Path, command: str | None = None, tool: str | None = None) -> Reply:
    """Call the served tree's tool with `argv` (or one `command` string). The tool is the server's own name
    (a tree's tool is named after its root) unless `tool` is given."""
    name = tool
    if not name:
        assert client.server_info is not None  # known once the session is initialised
        name = client.server_info.name
    arguments = {"command": command} if command is not None else {"argv": [str(a) for a in argv]}
    result = await client.call_tool(name, arguments)
    return Reply(not result.is_error, text(result), envelope(result), list(result.content))


def envelope(result: CallToolResult) -> dict[str, Any]:
    """What a served call says besides its text: its structuredContent where the surface sends it (the meta-tools,
    `--structured`), else the one tool's `_meta` (see `Result.to_mcp`)."""
    return result.structured_content or dict((result.meta or {}).get(META, {}))


async def ok(client: Client, *argv: str | Path, command: str | None = None, tool: str | None = None) -> str:
    """The text of a call that must succeed; AssertionError with that text if it failed."""
    reply = await call(client, *argv, command=command, tool=tool)
    assert reply.ok, reply.text
    return reply.text


def mock_upstream(name: str, *tools: Callable[..., Any]) -> MCPServer:
    """An SDK `MCPServer` named `name` whose tools are `tools` (each function's name, docstring and typed
    parameters make a tool and its input schema)."""
    from mcp.server.mcpserver import MCPServer

    server = MCPServer(name)
    for fn in tools:
        server.add_tool(fn)
    return server


async def wrap(servers: dict[str, InProcess], name: str = "mock") -> Tree:
    """The tree `mcp-cli serve CONFIG` makes of these in-process servers (listed over the in-memory transport):
    a group per server, a command per tool, and `search`; its `mcp` handlers call the servers in-process."""
    from .sources import discovery, mcp_tools
    from .sources.mcp_config import Server

    entries = [Server(n, {"server": s}) for n, s in servers.items()]
    found = {e.name: await discovery.list_tools(e.upstream, discovery.startup_budget()) for e in entries}
    return mcp_tools.build(name, entries, found)
