"""The OpenAPI surface, for clients that take their tools from an OpenAPI document (Open WebUI's tool servers): an
OpenAPI 3.1 document at GET /openapi.json with one operation, `run` (POST /run), whose body and description are the
MCP tool's (`argv` or `command`; start with --help), answered with the result envelope as JSON.

Statuses: 200 for every call that was run, a failed command included (`ok: false`, with `error` and `message`: tool
servers read the body of a 200); 400, with a `bad_request` envelope, for a body that is not JSON or not `argv` or
`command`; 413 for a body over MAX_BODY. A bug is an `internal` envelope too (never a plain 500, after which the
connection would close). Who may call (401, 403, 421) is `http_guard`'s."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE, RequestBodyLimitMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, request_response

from .. import __version__
from ..engine.command import internal
from ..engine.runtime import Runtime
from ..result import SCHEMA, Result
from ..text import one_line
from . import scopes, tool

if TYPE_CHECKING:
    from starlette.applications import Starlette

log = logging.getLogger("mcp_cli")

DOCUMENT, RUN = "/openapi.json", "/run"
MAX_BODY = DEFAULT_MAX_REQUEST_BODY_SIZE  # bytes of a /run body, as the SDK allows a message to /mcp


def document(runtime: Runtime, url: str, bearer: bool = False) -> dict[str, Any]:
    """The OpenAPI 3.1 document of `runtime`'s tree served at `url`; `bearer`: calls need a bearer token."""
    tree = runtime.tree
    envelope = {"application/json": {"schema": {"$ref": "#/components/schemas/Result"}}}
    responses: dict[str, Any] = {
        "200": {
            "description": "The command's result; a command that failed has `ok: false`, `error` and `message`.",
            "content": envelope,
        },
        "400": {
            "description": "The body is not JSON, or not one of `argv` and `command` (`error: bad_request`).",
            "content": envelope,
        },
        "413": {"description": f"The body is over {MAX_BODY:,} bytes."},
    }
    components: dict[str, Any] = {"schemas": {"Result": SCHEMA}}
    doc: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": {"title": tree.name, "version": __version__, "description": one_line(tree.root.summary, 200)},
        "servers": [{"url": url}],
        "paths": {
            RUN: {
                "post": {
                    "operationId": "run",
                    "summary": f"Run a {tree.name} command (argv or command); start with --help.",
                    "description": tool.description(runtime),
                    "requestBody": {"required": True, "content": {"application/json": {"schema": tool.INPUT_SCHEMA}}},
                    "responses": responses,
                }
            }
        },
        "components": components,
    }
    if bearer:
        components["securitySchemes"] = {"bearer": {"type": "http", "scheme": "bearer"}}
        doc["security"] = [{"bearer": []}]
        responses["401"] = {"description": "No bearer token, or a wrong one."}
    return doc


def routes(runtime: Runtime, bearer: bool = False) -> list[Route]:
    """GET /openapi.json and POST /run over `runtime`; `bearer`: the document says calls need a bearer token."""

    def runtime_for(request: Request) -> Runtime:
        """The runtime that answers a request: with scopes, its client's part of the tree."""
        return scopes.runtime_for(request.scope, runtime)

    async def spec(request: Request) -> Response:
        try:
            return JSONResponse(document(runtime_for(request), str(request.base_url).rstrip("/"), bearer))
        except Exception as exc:  # a bug: answered in the envelope (a plain 500 would close the connection)
            log.exception("internal error answering %s", DOCUMENT)
            return answer(
                Result(ok=False, path=runtime.tree.name, error="internal", message=internal(exc, DOCUMENT).render()),
                500,
            )

    async def run(request: Request) -> Response:
        try:
            chosen = runtime_for(request)
            try:
                arguments = json.loads(await request.body())
            except (ValueError, RecursionError) as exc:  # not UTF-8, not JSON, or nested past the parser's depth
                result = tool.invalid(chosen, f"the request body is not JSON ({exc})")
            else:
                result = await tool.run(chosen, arguments)
        except Exception as exc:  # a bug: in the envelope, as on MCP (a plain 500 would close the connection)
            log.exception("internal error answering %s", RUN)
            result = Result(ok=False, path=runtime.tree.name, error="internal", message=internal(exc, RUN).render())
        return answer(result, 400 if result.error == "bad_request" else 200)

    return [
        Route(DOCUMENT, spec, methods=["GET"]),
        Route(RUN, RequestBodyLimitMiddleware(request_response(run), MAX_BODY), methods=["POST"]),
    ]


def answer(result: Result, status: int) -> Response:
    """`result`'s envelope as a JSON response; its `data` left out when JSON cannot carry it (NaN, nested past
    the encoder's depth): the output holds the answer as text."""
    envelope = result.structured()
    try:
        body = json.dumps(envelope, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except (ValueError, TypeError, RecursionError):
        body = json.dumps({k: v for k, v in envelope.items() if k != "data"}, ensure_ascii=False)
    return Response(body, status, media_type="application/json")


def app(runtime: Runtime, bearer: bool = False) -> Starlette:
    """The OpenAPI surface alone: a Starlette app that holds `runtime` open while it serves."""
    from contextlib import asynccontextmanager

    from starlette.applications import Starlette

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        async with runtime:
            yield

    return Starlette(routes=routes(runtime, bearer), lifespan=lifespan)
