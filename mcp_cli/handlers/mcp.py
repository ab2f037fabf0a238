"""Upstream MCP tools: `McpToolRef`, `{"kind": "mcp", "server": "github", "tool": "list_issues"}`.

The arguments object was built from argv and validated against the tool's schema by the runtime; here it is
sent to the upstream server, and the result's content items come back unchanged (the runtime fits their text to
the answer's budget).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import HandlerError, UpstreamError
from ..refs import HandlerRef, McpOpRef, McpToolRef
from ..result import Result
from ..tree import Tree
from .base import Call, HandlerClass, Kind, timeout_of
from .catalogue import Catalogue, OpHandler, as_text

if TYPE_CHECKING:
    from .upstream import Upstreams


class McpKind(Kind):
    """The `mcp` kind: its handlers share the pool of upstream server sessions, opened with the runtime when the
    tree has upstream servers (or may gain them: a source that could not list everything yet)."""

    def __init__(self, handler: HandlerClass, tree: Tree) -> None:
        super().__init__(handler, tree)
        self.pool: Upstreams | None = None
        self.owned = False  # whether the pool is its own (else the host's: `Tree.sessions`)
        self.catalogue = Catalogue(tree)  # the servers' resources and prompts, as one server's

    def make(self, ref: HandlerRef, tree: Tree) -> McpHandler | OpHandler:
        if isinstance(ref, McpOpRef):
            return OpHandler(ref, tree, self.pool, self.catalogue)
        if not isinstance(ref, McpToolRef):
            raise TypeError(f"an mcp handler cannot run a {type(ref).__name__}")
        return McpHandler(ref, tree, self.pool, self.catalogue)

    def adopt(self, tree: Tree) -> None:
        super().adopt(tree)
        self.catalogue.adopt(tree)
        if self.pool is not None:
            self.pool.configs = tree.upstreams

    async def start(self) -> None:
        if self.tree.sessions is None and not (self.tree.upstreams or self.tree.rediscover):
            return
        from .upstream import Upstreams  # only for trees with upstream servers: not at every start

        if isinstance(self.tree.sessions, Upstreams):  # the host's pool, where discovery left the sessions it opened
            self.pool = self.tree.sessions
            self.pool.configs = self.tree.upstreams
        else:
            self.pool, self.owned = await Upstreams(self.tree.upstreams).__aenter__(), True

    async def restart(self, servers: set[str]) -> None:
        if self.pool is not None:
            await self.pool.close(servers)

    async def stop(self) -> None:
        if self.pool is not None:
            await self.pool.close()

    async def aclose(self) -> None:
        pool, self.pool = self.pool, None
        if pool is not None and self.owned:
            await pool.__aexit__(None, None, None)
        elif pool is not None:  # the host's pool: its sessions closed, the pool left to the host
            await pool.close()


class McpHandler:
    def __init__(
        self, ref: McpToolRef, tree: Tree, pool: Upstreams | None = None, catalogue: Catalogue | None = None
    ) -> None:
        self.server, self.tool, self.pool = ref.server, ref.tool, pool
        self.catalogue = catalogue
        self.task = ref.task  # the tool runs only as a task (its `execution.taskSupport` is required)
        self.timeout = float(ref.timeout or tree.upstreams.get(self.server, {}).get("timeout") or 0) or (
            timeout_of(ref, tree)
        )

    async def run(self, call: Call) -> Result:
        if self.pool is None:
            raise HandlerError(f"`{call.path}` calls an upstream server, which needs a running server (mcp-cli serve)")
        upstream = self.pool.get(self.server)
        result = await upstream.call(self.tool, call.values, self.timeout, call.path, self.task, call.scope.relay)
        content = result.content
        if self.catalogue is not None:  # links and embedded resources as served: reading them finds this server
            self.catalogue.passed(self.server, content)
        output = "\n".join(as_text(c) for c in content)
        return Result(
            ok=not result.is_error,
            output=output,
            error=UpstreamError.kind if result.is_error else None,
            content=content,
            data=result.structured,
        )
