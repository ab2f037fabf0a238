"""Wrapped servers' resources and prompts on the MCP surface: `resources/list`, `resources/templates/list`,
`resources/read`, `prompts/list` and `prompts/get`, answered from every upstream server whose `resources` or
`prompts` commands the client's part of the tree holds (so scopes apply as to commands), under the names and URIs
of `handlers.catalogue`. Lists are whole (every page of every server) in one page."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

from mcp import types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

from ..engine.runtime import Runtime
from ..errors import CallError, NotFound
from ..handlers import upstream_kind
from ..handlers.catalogue import Catalogue, offered

if TYPE_CHECKING:
    from mcp.server import ServerRequestContext

    from ..handlers.upstream import Upstreams

T = TypeVar("T")
RESOURCE_NOT_FOUND = -32002  # the code the protocol gives an unknown resource


def offers(runtime: Runtime) -> bool:
    """Whether a runtime's tree has upstream servers (or may gain them) whose resources or prompts could be served."""
    tree = runtime.tree
    readers, _, prompts = offered(tree)
    return bool(readers or prompts or tree.rediscover)


def install(server: Server, serving: Runtime, runtime_of: Callable[[ServerRequestContext], Runtime]) -> None:
    """Answer the resource and prompt methods on `server` from `serving`'s upstream servers, each request through
    the runtime `runtime_of` gives it (its client's scope)."""
    kind = upstream_kind(serving.kinds)
    assert kind is not None  # `offers` said it has upstream servers
    catalogue: Catalogue = kind.catalogue

    def pool() -> Upstreams:
        if kind.pool is None:
            raise MCPError(types.INTERNAL_ERROR, "upstream servers are not available outside a running server")
        return kind.pool

    async def answer(asked: Awaitable[T], not_found: int = types.INVALID_PARAMS) -> T:
        """What was asked, with a call error as a protocol error that says what was wrong."""
        try:
            return await asked
        except NotFound as exc:
            raise MCPError(not_found, exc.render()) from None
        except CallError as exc:
            raise MCPError(types.INTERNAL_ERROR, exc.render()) from None

    async def list_resources(
        ctx: ServerRequestContext, params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        readers = offered(runtime_of(ctx).tree)[0]
        items = await answer(catalogue.resources(pool(), readers))
        return types.ListResourcesResult(resources=[types.Resource.model_validate(r) for r in items])

    async def list_templates(
        ctx: ServerRequestContext, params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        readers = offered(runtime_of(ctx).tree)[0]
        items = await answer(catalogue.templates_of(pool(), readers))
        return types.ListResourceTemplatesResult(
            resource_templates=[types.ResourceTemplate.model_validate(t) for t in items]
        )

    async def read_resource(
        ctx: ServerRequestContext, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        readers = offered(runtime_of(ctx).tree)[0]
        data = await answer(catalogue.read(pool(), params.uri, readers), RESOURCE_NOT_FOUND)
        return types.ReadResourceResult.model_validate(data)

    async def list_prompts(
        ctx: ServerRequestContext, params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        prompts = offered(runtime_of(ctx).tree)[2]
        items = await answer(catalogue.prompts(pool(), prompts))
        return types.ListPromptsResult(prompts=[types.Prompt.model_validate(p) for p in items])

    async def get_prompt(ctx: ServerRequestContext, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        prompts = offered(runtime_of(ctx).tree)[2]
        data = await answer(catalogue.prompt(pool(), params.name, params.arguments, prompts))
        return types.GetPromptResult.model_validate(data)

    server.add_request_handler("resources/list", types.PaginatedRequestParams, list_resources)
    server.add_request_handler("resources/templates/list", types.PaginatedRequestParams, list_templates)
    server.add_request_handler("resources/read", types.ReadResourceRequestParams, read_resource)
    server.add_request_handler("prompts/list", types.PaginatedRequestParams, list_prompts)
    server.add_request_handler("prompts/get", types.GetPromptRequestParams, get_prompt)
