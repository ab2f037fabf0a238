"""The MCP surface: one tool per tree, on the SDK's low-level Server, over stdio or streamable HTTP."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import warnings
import weakref
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

import anyio
from mcp import types
from mcp.server.caching import CacheableMethod, CacheHint
from mcp.server.lowlevel import Server
from mcp.server.subscriptions import ListenHandler
from mcp.shared.exceptions import MCPError

from .. import __version__
from ..engine.command import internal
from ..engine.runtime import Runtime
from ..entities import KEYED, Contexts
from ..errors import NotFound
from ..handlers import CallScope, upstream_kind
from ..handlers.processes import exit_process
from ..handlers.relay import Relay
from ..result import Result
from ..text import clip
from . import http_guard, scopes
from .relay import Changes, InputRequired, Relays, Unanswered
from .stdio import Front
from .tool import INPUT_SCHEMA, description, instructions, run
from .unreadable import Answering, IdCheck

if TYPE_CHECKING:
    from mcp.server import ServerRequestContext
    from starlette.types import ASGIApp

    from ..handlers.upstream import Upstreams
    from .meta_tools import Meta

log = logging.getLogger("mcp_cli")


ALWAYS_LOAD = {"anthropic/alwaysLoad": True}  # hosts that defer MCP tools behind a search keep this one loaded


def tool(runtime: Runtime) -> types.Tool:
    """The one tool: the same for the same tree, byte for byte (hosts cache the prompt that holds it)."""
    return types.Tool(
        name=runtime.tree.name, description=description(runtime), input_schema=INPUT_SCHEMA, _meta=tool_meta(runtime)
    )


def tool_meta(runtime: Runtime) -> dict[str, Any] | None:
    """The `_meta` of the served tools: ALWAYS_LOAD unless the tree's settings turn it off."""
    return ALWAYS_LOAD if runtime.tree.settings.always_load else None


ROOTS_TIMEOUT = 30.0  # seconds to wait for roots/list: a busy client is waited for rather than a call run elsewhere
HOST_FOLDERS = ("CLAUDE_PROJECT_DIR",)  # what hosts tell the stdio servers they start about the user's folder


def host_folder() -> str | None:
    """The user's folder as the host that started this server names it (Claude Code: CLAUDE_PROJECT_DIR), if it
    is a folder; None: the server's own folder."""
    for name in HOST_FOLDERS:
        folder = os.environ.get(name)
        if folder and Path(folder).is_dir():
            return folder
    return None


class Roots:
    """Where each client works: its first `file://` root that is a folder, asked once per session (again after
    `notifications/roots/list_changed`), on the call's back-channel or, from a 2026-era client, as `input_required`.
    Without roots: the folder the host names (`host_folder`), else None: the server's own folder."""

    def __init__(self) -> None:
        self._known: OrderedDict[str, str | None] = OrderedDict()  # by session, the least recently asked first

    @staticmethod
    def session(ctx: ServerRequestContext) -> str | None:
        """What a session's requests share: stdio's one client, an HTTP session's id; None for a request on its own
        (stateless HTTP), which is asked each time."""
        return "stdio" if ctx.request is None else ctx.request.headers.get("mcp-session-id")

    async def cwd(self, ctx: ServerRequestContext, relay: Relay) -> str | None:
        """The folder for a call, asked on the back-channel of the call's own request, or of a 2026-era client through
        the call's `relay`."""
        return await self.kept(self.session(ctx), lambda: self._ask(ctx, relay))

    async def kept(self, session: str | None, ask: Callable[[], Awaitable[str | None]]) -> str | None:
        """The folder of `session`, asked (`ask`) once; for a request on its own (None), each time."""
        if session is None:
            return await ask()
        if session not in self._known:
            self._known[session] = await ask()
            if len(self._known) > KEYED:
                self._known.popitem(last=False)
        return self._known[session]

    @staticmethod
    async def unasked() -> str | None:
        """The folder of a client that offers no roots."""
        return host_folder()

    async def _ask(self, ctx: ServerRequestContext, relay: Relay) -> str | None:
        from mcp.shared.message import ServerMessageMetadata

        capabilities = ctx.session.client_capabilities
        if capabilities is None or capabilities.roots is None:
            return await self.unasked()
        try:
            with anyio.fail_after(ROOTS_TIMEOUT):
                if not ctx.session.can_send_request:  # the 2026 protocol: asked as `input_required` (`relay.py`)
                    listed = await relay.ask(types.ListRootsRequest())
                    if isinstance(listed, types.ErrorData):
                        raise MCPError.from_error_data(listed)
                else:
                    related = ServerMessageMetadata(related_request_id=ctx.request_id)
                    listed = await ctx.session.send_request(
                        types.ListRootsRequest(), types.ListRootsResult, metadata=related
                    )
        except Exception as exc:  # a client that offers roots but does not answer: work where we are
            log.warning("the client offers roots but roots/list failed (%s); working in %s", exc, Path.cwd())
            return host_folder()
        for root in listed.roots if isinstance(listed, types.ListRootsResult) else []:
            url = urlparse(str(root.uri))
            if url.scheme == "file" and Path(unquote(url.path)).is_dir():
                return unquote(url.path)
        return host_folder()

    async def changed(self, ctx: ServerRequestContext, params: types.NotificationParams | None) -> None:
        self._known.pop(self.session(ctx) or "", None)


LISTED: tuple[CacheableMethod, ...] = (
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "server/discover",
)
STATIC_TTL_MS, LIVE_TTL_MS = 3_600_000, 60_000  # a tree of its own; one whose upstreams may change their lists


def cache_hint(runtime: Runtime, public: bool) -> CacheHint:
    """How long a 2026-07-28 client may keep the lists (SEP-2549): an hour for a tree that cannot change while
    served, a minute where upstream servers may change theirs (they are told as list changes too); shared caches
    may keep them (`public`) only where every caller sees the same lists without a token."""
    ttl = LIVE_TTL_MS if runtime.tree.upstreams else STATIC_TTL_MS
    return CacheHint(ttl_ms=ttl, scope="public" if public else "private")


def build(
    runtime: Runtime, surface: str = "tool", scoped: bool = False, local_files: bool = False, public: bool = True
) -> Server:
    """A low-level Server that drives `runtime` through exactly one tool, or with `surface="meta"` through the
    meta-tools (see `meta_tools`). `local_files`: its clients are on this machine (stdio), so `@FILE` arguments are
    read; never for HTTP clients, whose paths would name the server's files. `scoped`: each HTTP request sees its
    client's part of the tree (`scopes.runtime_for`), and remembers its context apart from other scopes'; what every
    client gets alike (the instructions) shows only what every scope has, and a skill's files are not served as
    resources."""
    return served(runtime, surface, scoped, local_files, public)[0]


def served(
    runtime: Runtime, surface: str = "tool", scoped: bool = False, local_files: bool = False, public: bool = True
) -> tuple[Server, Front | None]:
    """The Server of `build`, and for the one tool on stdio the `Front` that answers its plain calls off the wire
    (`stdio.py`), in the same way (`plain_call`)."""
    if surface == "meta":
        from . import meta_tools
    roots, relays, changes = Roots(), Relays(), Changes(runtime)
    kept: weakref.WeakKeyDictionary[Runtime, tuple[Meta | None, Contexts]] = weakref.WeakKeyDictionary()

    def scope_of(ctx: ServerRequestContext) -> tuple[Runtime, Meta | None, Contexts]:
        """The runtime a request may use, with what is kept for it: the meta-tools' index, the sessions' contexts."""
        return scope_for(ctx.request)

    def scope_for(request: Any) -> tuple[Runtime, Meta | None, Contexts]:
        rt = scopes.runtime_for(getattr(request, "scope", None), runtime)
        if rt not in kept:
            kept[rt] = (meta_tools.Meta(rt) if surface == "meta" else None, Contexts())
        return rt, *kept[rt]

    async def list_tools(
        ctx: ServerRequestContext, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        if surface == "meta":
            return types.ListToolsResult(tools=meta_tools.tools(tool_meta(runtime)))
        return types.ListToolsResult(tools=[tool(scope_of(ctx)[0])])  # anew: servers that come back change it

    async def call_tool(ctx: ServerRequestContext, params: types.CallToolRequestParams) -> dict[str, Any]:
        """A tool call's answer: every one, a failure too, is a `Result` in wire form (`Result.to_mcp`), here."""
        rt, meta, contexts = scope_of(ctx)
        structured = meta is not None or rt.tree.settings.structured  # the meta-tools keep their envelope
        answer = await answering(ctx, params, rt, meta, contexts)
        return answer if isinstance(answer, dict) else answer.to_mcp(structured=structured)

    async def answering(
        ctx: ServerRequestContext,
        params: types.CallToolRequestParams,
        rt: Runtime,
        meta: Meta | None,
        contexts: Contexts,
    ) -> Result | InputRequired:
        context = contexts.of(ctx.request, params.meta)
        unknown = not_ours(rt, meta, params.name)
        if unknown is not None:
            return unknown
        changes.heard(ctx, roots.session(ctx))

        async def work(relay: Relay) -> Result:  # the client's relay (`relay.py`): it may be asked, told progress
            scope = CallScope(await roots.cwd(ctx, relay), context, local_files, relay=relay)
            return await calling(rt, meta, params.name, params.arguments, scope)

        return await relays.run(ctx, roots.session(ctx), params, work)

    def not_ours(rt: Runtime, meta: Meta | None, name: str) -> Result | None:
        """The not_found answer (in the envelope, as every failure) for a tool this server does not have."""
        if meta is None and name != rt.tree.name:
            unknown = NotFound(f"no tool named {clip(name, 100)!r}; this server has one tool, {rt.tree.name!r}.")
            return rt.commands.failure(unknown, None)
        return None

    async def calling(rt: Runtime, meta: Meta | None, name: str, arguments: Any, scope: CallScope) -> Result:
        try:
            if meta is not None:
                return await meta.call(name, arguments, scope)
            return await run(rt, arguments or {}, scope)
        except Exception as exc:  # a bug outside the runtime (which answers its own): in the envelope too
            log.exception("internal error answering a call of %s", rt.tree.name)
            return rt.commands.failure(internal(exc, rt.tree.name), None)

    async def plain_call(params: dict[str, Any]) -> dict[str, Any]:
        """A plain call of the stdio client (`stdio.Front`: a 2026-era one that declared nothing it could answer and
        asks for no progress or log messages), as `call_tool` answers it: its relay answers nothing, as `Direct`
        would refuse its questions, and it works in the folder a client without roots gets."""
        rt, _, contexts = scope_for(None)
        name, arguments = params["name"], params.get("arguments")
        answer = not_ours(rt, None, name)
        if answer is None:
            cwd, context = await roots.kept("stdio", roots.unasked), contexts.of(None, params.get("_meta"))
            scope = CallScope(cwd, context, local_files, relay=Unanswered())
            answer = await calling(rt, None, name, arguments, scope)
        return answer.to_mcp(structured=rt.tree.settings.structured)

    async def set_level(ctx: ServerRequestContext, params: types.SetLevelRequestParams) -> types.EmptyResult:
        relays.levels[roots.session(ctx) or ""] = params.level
        if len(relays.levels) > KEYED:  # HTTP sessions come and go: the oldest forgotten
            relays.levels.pop(next(iter(relays.levels)))
        return types.EmptyResult()

    front = Front(plain_call, lambda: server.server_info_stamp) if surface == "tool" and not scoped else None

    @contextlib.asynccontextmanager
    async def lifespan(_: Server) -> AsyncIterator[dict[str, Any]]:
        async with runtime, anyio.create_task_group() as tg:
            relays.tg = tg
            changes.install()
            if front is not None:
                front.ready = True
            yield {}
            if front is not None:
                await front.stop()
            tg.cancel_scope.cancel()

    shown = Runtime(scopes.prune(runtime.tree, ()), runtime.kinds) if scoped else runtime  # what every scope sees
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # roots are deprecated in the 2026 protocol; still what clients send
        server = Server(
            runtime.tree.name,
            version=__version__,
            instructions=meta_tools.instructions(shown.tree) if surface == "meta" else instructions(shown),
            lifespan=lifespan,
            on_list_tools=list_tools,
            # a wire-form dict, which the SDK's runner takes as it takes a result model; its annotation names models
            on_call_tool=call_tool,  # type: ignore[arg-type]
            on_roots_list_changed=roots.changed,
            on_set_logging_level=set_level,
            on_subscriptions_listen=ListenHandler(changes.bus),
            cache_hints=dict.fromkeys(LISTED, cache_hint(runtime, public and not scoped)),
        )
    if runtime.tree.skill and not scoped:  # served from a skill folder: its files as skill resources (SEP-2640)
        from ..sources.skill.resources import SkillResources

        SkillResources(runtime.tree).install(server)
    elif upstream_kind(runtime.kinds) is not None:  # wrapped servers: their resources and prompts, as a part has
        from . import gateway

        if gateway.offers(runtime):
            gateway.install(server, runtime, lambda ctx: scope_of(ctx)[0])
    return server, front


async def serve_stdio(runtime: Runtime, surface: str = "tool") -> None:
    from .stdio import stdio_streams

    server, front = served(runtime, surface, local_files=True)
    async with stdio_streams(front) as (read, write):
        await server.run(Answering(read, write, runtime.tree.name), write, server.create_initialization_options())


async def serve_http(
    runtime: Runtime,
    host: str = "127.0.0.1",
    port: int = 8000,
    guard: http_guard.Guard | None = None,
    stateless: bool = False,
    surface: str = "tool",
    mcp: bool = True,
) -> None:
    """Streamable HTTP at http://HOST:PORT/mcp and the OpenAPI surface beside it (`mcp` False: that alone), checked
    by `guard` (default: the one for the address with no options, which refuses a non-loopback address without a
    token); `stateless`: no sessions, each request on its own (the SDK's stateless mode), for replicas behind a load
    balancer. Logs (uvicorn's too) go to stderr."""
    import uvicorn

    from . import openapi

    guard = guard or http_guard.guard((host, port))
    assert guard is not None  # None is stdio's guard
    bearer = guard.token is not None or bool(guard.scopes)
    app: ASGIApp
    if mcp:
        app = IdCheck(
            build(runtime, surface, scoped=bool(guard.scopes), public=not bearer).streamable_http_app(
                host=host,
                transport_security=guard.security(),
                stateless_http=stateless,
                custom_starlette_routes=openapi.routes(runtime, bearer),
            )
        )
    else:
        app = openapi.app(runtime, bearer)
    views = scopes.views(guard.scopes, runtime) if guard.scopes else None  # each scope's token -> its view
    config = uvicorn.Config(
        guard.wrap(app, views), host=host, port=port, log_level="warning", access_log=False, log_config=None
    )
    base = f"http://{http_guard.bracketed(host)}:{port}"
    where = (f"streamable HTTP at {base}/mcp and " if mcp else "") + f"OpenAPI at {base}{openapi.DOCUMENT}"
    access = "a bearer token required" if guard.token else "no token required"
    if guard.scopes:
        access = f"{len(guard.scopes)} scoped token{'s' * (len(guard.scopes) != 1)}"
    mode = ", stateless" if stateless else ""
    log.info("serving %s over %s (%s%s)", runtime.tree.name, where, access, mode)
    await uvicorn.Server(config).serve()


STOP_SIGNALS = tuple(getattr(signal, n) for n in ("SIGTERM", "SIGHUP", "SIGINT") if hasattr(signal, n))


async def _until_stopped(runtime: Runtime, main: Callable[..., Awaitable[None]], *args: object) -> None:
    """Serve until `main` returns (stdin closed) or a stop signal arrives. A signal stops every upstream server
    and running process, then the process exits: waiting for the tasks to unwind could wait forever on a
    thread blocked reading stdin."""
    async with anyio.create_task_group() as tg:

        async def watch() -> None:
            with anyio.open_signal_receiver(*STOP_SIGNALS) as received:
                async for signum in received:
                    log.info("stopping on %s", signal.Signals(signum).name)
                    await runtime.stop()
                    exit_process(0)

        tg.start_soon(watch)
        await main(runtime, *args)
        await runtime.stop()
        tg.cancel_scope.cancel()


def serve(
    runtime: Runtime | Callable[[Upstreams], Runtime],
    http: tuple[str, int] | None = None,
    guard: http_guard.Guard | None = None,
    stateless: bool = False,
    surface: str = "tool",
    mcp: bool = True,
) -> None:
    """Serve until the client goes away (stdio) or the process is stopped (SIGTERM, SIGHUP, SIGINT); over HTTP
    at `http`, checked by `guard`, sessionless with `stateless`, without /mcp unless `mcp` (see serve_http);
    through `surface`. `runtime` may be made here (a function of the pool of upstream sessions, run on a worker
    thread of the serving loop): the sessions its source's discovery opens are then the ones its calls use."""
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")  # stderr
    logging.getLogger("mcp_cli").setLevel(logging.INFO)  # where it listens, and why it stops

    async def main() -> None:
        from ..handlers.upstream import Upstreams

        async with Upstreams() as pool:
            made = runtime if isinstance(runtime, Runtime) else await anyio.to_thread.run_sync(runtime, pool)
            if http:
                await _until_stopped(made, serve_http, *http, guard, stateless, surface, mcp)
            else:
                await _until_stopped(made, serve_stdio, surface)

    anyio.run(main)
    exit_process(0)
