"""The MCP surface: one tool per tree, on the SDK's low-level Server, over stdio or streamable HTTP."""

from __future__ import annotations

import contextlib
import json
import logging
import signal
import warnings
import weakref
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import anyio
from mcp import types
from mcp.server.lowlevel import Server

from . import __version__, http_guard, scopes
from .children import exit_process
from .context import Context, Contexts
from .result import Result
from .runtime import Runtime
from .text import clip, named, one_line
from .tree import Group
from .types import remote_callers
from .unreadable import Answering

log = logging.getLogger("mcp_cli")

INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "argv": {
            "type": "array",
            "items": {"type": "string"},
            "description": "Tokens after the tool name.",
        },
        "command": {"type": "string", "description": "Or one string, split like a POSIX shell."},
    },
    "additionalProperties": False,
}


def malformed(arguments: Any) -> str:
    """What is wrong with tool arguments that do not fit INPUT_SCHEMA, or "" when they fit (checked by hand:
    jsonschema would cost more than the rest of a trivial call)."""
    if not isinstance(arguments, dict):
        return "the arguments must be an object"
    unknown = sorted(set(arguments) - set(INPUT_SCHEMA["properties"]))
    if unknown:
        return f"unknown field(s) {', '.join(map(repr, unknown))}; the fields are `argv` and `command`"
    argv, command = arguments.get("argv"), arguments.get("command")  # null: not given (as models send unused fields)
    if argv is not None and not (isinstance(argv, list) and all(isinstance(t, str) for t in argv)):
        return f"`argv` must be a list of strings, not {json.dumps(argv)[:80]}"
    if command is not None and not isinstance(command, str):
        return f"`command` must be a string, not {json.dumps(command)[:80]}"
    return ""


def invalid(runtime: Runtime, problem: str) -> Result:
    """The bad_request result for tool arguments that are not what INPUT_SCHEMA asks for."""
    text = (
        f"Error: invalid tool arguments: {problem}. "
        'Give {"argv": ["--help"]} (a list of strings) or {"command": "--help"} (one string).'
    )
    return Result(ok=False, path=runtime.tree.name, error="bad_request", message=text)


async def run(runtime: Runtime, arguments: Any, cwd: str | None = None, context: Context | None = None) -> Result:
    """A call of the one tool, from any surface, in a session's `context`: arguments that do not fit INPUT_SCHEMA
    are a bad_request."""
    problem = malformed(arguments)
    return invalid(runtime, problem) if problem else await runtime.call_tool(arguments, cwd, context)


NAMED = 12  # domain names in the tool description
SUMMARY_BUDGET = 1024  # characters of the root summary in the tool description (a skill's description at most)


def description(runtime: Runtime) -> str:
    """Root summary (a skill's whole description, up to SUMMARY_BUDGET), the domain names, and the instruction to
    start with --help (a domain's, when there are domains: an agent that knows its domain skips the root; a lone
    domain is named there only)."""
    root = runtime.tree.root
    search = root.child("search")
    groups = [n.name for n in root.children if isinstance(n, Group)]
    others = [n.name for n in root.children if not isinstance(n, Group) and n is not search]
    parts = [clip(root.summary, SUMMARY_BUDGET) if root.summary else f"The {root.name} command line."]
    if len(groups) > 1:  # a lone domain is named by the instruction
        parts.append(f"Domains: {named(groups, NAMED)}.")
    if others:
        parts.append("Commands: " + ", ".join(others[:NAMED]) + ".")
    domain = groups[0] if len(groups) == 1 else "DOMAIN"
    first = (f"`{domain} --help`" + (" (`--help` for all)" if len(groups) > NAMED else "")) if groups else "--help"
    first += " or `search WORDS`" if search is not None else ""
    return " ".join(parts) + f" Run {first} first."


def instructions(runtime: Runtime) -> str:
    """The server's instructions: what the tree is and where to start (the tool's description says the rest:
    clients put both in the model's context)."""
    name = runtime.tree.name
    what = one_line(runtime.tree.root.summary, 160) or f"The {name} command line."
    return f"{what} One tool, `{name}`, runs it: start with `{name} --help`."


def tool(runtime: Runtime) -> types.Tool:
    return types.Tool(name=runtime.tree.name, description=description(runtime), input_schema=INPUT_SCHEMA)


_COMPLETE = {"resultType": "complete"}  # required by the 2026 protocol; older versions' sieve drops it


def to_mcp(result: Result) -> dict[str, Any]:
    """Result envelope -> a CallToolResult in wire form: passed-through content items (as received), or the
    text; structuredContent always. A plain dict: the SDK validates it once on the way out."""
    if result.content is not None:
        content = [{"type": "text", "text": result.message}] if result.message else []
        content += result.content
    else:
        content = [{"type": "text", "text": result.text()}]
    return {**_COMPLETE, "content": content, "structuredContent": result.structured(), "isError": not result.ok}


ROOTS_TIMEOUT = 30.0  # seconds to wait for roots/list: a busy client is waited for rather than a call run elsewhere


class Roots:
    """Where each client works: its first `file://` root that is a folder, asked once per session (again after
    `notifications/roots/list_changed`). None when the client offers no roots: the server's own folder."""

    def __init__(self) -> None:
        self._known: weakref.WeakKeyDictionary[Any, str | None] = weakref.WeakKeyDictionary()

    @staticmethod
    def _connection(ctx: Any) -> Any:
        """What a session's requests share: the SDK makes a ServerSession per request, around the connection's."""
        return ctx.session._connection

    async def cwd(self, ctx: Any) -> str | None:
        """The folder for a call, asked on the back-channel of the call's own request."""
        connection = self._connection(ctx)
        if connection not in self._known:
            self._known[connection] = await self._ask(ctx)
        return self._known[connection]

    async def _ask(self, ctx: Any) -> str | None:
        from mcp.shared.message import ServerMessageMetadata

        capabilities = ctx.session.client_capabilities
        if capabilities is None or capabilities.roots is None or not ctx.session.can_send_request:
            return None  # no roots offered, or a connection that cannot ask (the 2026 per-request protocol)
        try:
            with anyio.fail_after(ROOTS_TIMEOUT):
                related = ServerMessageMetadata(related_request_id=ctx.request_id)
                listed = await ctx.session.send_request(
                    types.ListRootsRequest(), types.ListRootsResult, metadata=related
                )
        except Exception as exc:  # a client that offers roots but does not answer: work where we are
            log.warning("the client offers roots but roots/list failed (%s); working in %s", exc, Path.cwd())
            return None
        for root in listed.roots:
            url = urlparse(str(root.uri))
            if url.scheme == "file" and Path(unquote(url.path)).is_dir():
                return unquote(url.path)
        return None

    async def changed(self, ctx: Any, params: Any) -> None:
        self._known.pop(self._connection(ctx), None)


def build(runtime: Runtime, surface: str = "tool", scoped: bool = False) -> Server:
    """A low-level Server that drives `runtime` through exactly one tool, or with `surface="meta"` through the
    meta-tools (see `meta_tools`). `scoped`: each HTTP request sees its client's part of the tree
    (`scopes.runtime_for`), and remembers its context apart from other scopes'; what every client gets alike (the
    instructions) shows only what every scope has, and a skill's files are not served as resources."""
    if surface == "meta":
        from . import meta_tools
    roots = Roots()
    kept: weakref.WeakKeyDictionary[Runtime, tuple[Any, Contexts]] = weakref.WeakKeyDictionary()

    def scope_of(ctx: Any) -> tuple[Runtime, Any, Contexts]:
        """The runtime a request may use, with what is kept for it: the meta-tools' index, the sessions' contexts."""
        rt = scopes.runtime_for(getattr(ctx.request, "scope", None), runtime)
        if rt not in kept:
            kept[rt] = (meta_tools.Meta(rt) if surface == "meta" else None, Contexts())
        return rt, *kept[rt]

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        if surface == "meta":
            return types.ListToolsResult(tools=meta_tools.tools())
        return types.ListToolsResult(tools=[tool(scope_of(ctx)[0])])  # anew: servers that come back change it

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> dict[str, Any]:
        rt, meta, contexts = scope_of(ctx)
        context = contexts.of(ctx, params.meta)
        if meta is not None:
            return to_mcp(await meta.call(params.name, params.arguments, await roots.cwd(ctx), context))
        if params.name != rt.tree.name:
            text = f"Error: no tool named {params.name!r}; this server has one tool, {rt.tree.name!r}."
            return {**_COMPLETE, "content": [{"type": "text", "text": text}], "isError": True}
        return to_mcp(await run(rt, params.arguments or {}, await roots.cwd(ctx), context))

    @contextlib.asynccontextmanager
    async def lifespan(_: Server) -> AsyncIterator[dict]:
        async with runtime:
            yield {}

    shown = Runtime(scopes.prune(runtime.tree, ()), runtime.kinds) if scoped else runtime  # what every scope sees
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # roots are deprecated in the 2026 protocol; still what clients send
        server = Server(
            runtime.tree.name,
            version=__version__,
            instructions=meta_tools.instructions(shown.tree) if surface == "meta" else instructions(shown),
            lifespan=lifespan,
            on_list_tools=list_tools,
            on_call_tool=call_tool,
            on_roots_list_changed=roots.changed,
        )
    if runtime.tree.skill and not scoped:  # served from a skill folder: its files as skill resources (SEP-2640)
        from .skill_resources import SkillResources

        SkillResources(runtime.tree).install(server)
    return server


async def serve_stdio(runtime: Runtime, surface: str = "tool") -> None:
    from .stdio import stdio_streams

    server = build(runtime, surface)
    async with stdio_streams() as (read, write):
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
    bearer = guard.token is not None or bool(guard.scopes)
    if mcp:
        app = build(runtime, surface, scoped=bool(guard.scopes)).streamable_http_app(
            host=host, transport_security=guard.security(), stateless_http=stateless,
            custom_starlette_routes=openapi.routes(runtime, bearer),
        )  # fmt: skip
    else:
        app = openapi.app(runtime, bearer)
    config = uvicorn.Config(
        guard.wrap(app, runtime), host=host, port=port, log_level="warning", access_log=False, log_config=None
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


async def _until_stopped(runtime: Runtime, main: Any, *args: Any) -> None:
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
    runtime: Runtime,
    http: tuple[str, int] | None = None,
    guard: http_guard.Guard | None = None,
    stateless: bool = False,
    surface: str = "tool",
    mcp: bool = True,
) -> None:
    """Serve until the client goes away (stdio) or the process is stopped (SIGTERM, SIGHUP, SIGINT); over HTTP
    at `http`, checked by `guard`, sessionless with `stateless`, without /mcp unless `mcp` (see serve_http);
    through `surface`."""
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")  # stderr
    logging.getLogger("mcp_cli").setLevel(logging.INFO)  # where it listens, and why it stops
    if http:
        remote_callers()
        anyio.run(_until_stopped, runtime, serve_http, *http, guard, stateless, surface, mcp)
    else:
        anyio.run(_until_stopped, runtime, serve_stdio, surface)
    exit_process(0)
