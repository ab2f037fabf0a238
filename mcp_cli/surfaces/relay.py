"""The calling MCP client as upstreams see it (`handlers.relay.Relay`), in either protocol era.

A handshake-era client is asked on the back-channel of its call (`elicitation/create`, `sampling/createMessage`,
`roots/list` with the call's id as related request), and hears progress and log messages there. A 2026-07-28 client
has no back-channel: its call runs on in the server's task group while the request answers `input_required` with the
questions, and the client's retry (its `inputResponses`, the `requestState` naming the call) answers them and waits
for the result or the next questions. A client that lacks what a question needs gets a refusal naming it.
"""

from __future__ import annotations

import logging
import secrets
import sys
import warnings
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TextIO

import anyio
import anyio.to_thread
from anyio.abc import TaskGroup
from mcp import types
from mcp.server.subscriptions import InMemorySubscriptionBus
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import PromptsListChanged, ResourcesListChanged, ServerEvent, ToolsListChanged

from ..engine.command import internal
from ..engine.runtime import Runtime
from ..entities import KEYED
from ..errors import BadRequest, CallError, HandlerError
from ..handlers import upstream_kind
from ..handlers.relay import Relay, listing, need, offers, refusal
from ..result import Result
from ..tree import Tree
from ..types import number, whole

if TYPE_CHECKING:
    from mcp.server import ServerRequestContext
    from mcp.server.session import ServerSession

    from ..handlers.upstream import Upstream

log = logging.getLogger("mcp_cli")
ASK_TIMEOUT = 600.0  # seconds a 2026-era call waits for its client's retry with the answers
PARKED = 1_000  # calls of 2026-era clients waiting for answers, at most
LEVELS: list[str] = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
_RESULTS: dict[str, type[types.Result]] = {
    "elicitation.form": types.ElicitResult,
    "elicitation.url": types.ElicitResult,
    "sampling": types.CreateMessageResult,
    "roots": types.ListRootsResult,
}
Work = Callable[[Relay], Awaitable[Result]]  # a call, given its client's relay
InputRequired = dict[str, Any]  # a 2026-era call's questions for its client, in wire form


def _result_type(request: types.InputRequest) -> type[types.Result]:
    """What answers `request`."""
    if isinstance(request, types.CreateMessageRequest) and request.params.tools:
        return types.CreateMessageResultWithTools
    return _RESULTS[need(request)]


def _missing(request: types.InputRequest, capabilities: types.ClientCapabilities | None) -> str:
    """Why a client with these capabilities cannot answer `request`, or "" when it can."""
    wanted = need(request)
    if wanted in offers(capabilities):
        return ""
    return f"the client did not declare the `{wanted}` capability, so it cannot answer; call it from a client that can"


def _asked_progress(ctx: ServerRequestContext) -> bool:
    """Whether the client's request carries a progress token (it wants progress notifications)."""
    return (ctx.meta or {}).get("progress_token") is not None


class Direct(Relay):
    """A client served within its request: a handshake-era one, asked on the call's back-channel; or a 2026-era one
    that declared nothing it could answer, which needs no `input_required` round (its questions are refused)."""

    def __init__(self, ctx: ServerRequestContext, level: str | None) -> None:
        self.ctx, self.level = ctx, level
        self.listens = _asked_progress(ctx)

    async def ask(self, request: types.InputRequest) -> types.InputResponse | types.ErrorData:
        from mcp.shared.message import ServerMessageMetadata

        if why := _missing(request, self.ctx.session.client_capabilities):
            return refusal(request, why)
        related = ServerMessageMetadata(related_request_id=self.ctx.request_id)
        try:
            answer: Any = await self.ctx.session.send_request(request, _result_type(request), metadata=related)
            return answer  # type: ignore[no-any-return]
        except MCPError as exc:
            return exc.error

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        await self.ctx.session.report_progress(progress, total, message)

    async def log(self, params: types.LoggingMessageNotificationParams) -> None:
        handshake = self.ctx.session.can_send_request  # a 2026 request's own log level is checked by the SDK
        if handshake and (self.level is None or LEVELS.index(params.level) < LEVELS.index(self.level)):
            return  # the client did not ask for log messages (logging/setLevel), or not at this level
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # logging is deprecated in the 2026 protocol; this client is older
            await self.ctx.session.send_log_message(
                params.level, params.data, params.logger, related_request_id=self.ctx.request_id
            )


class Unanswered(Relay):
    """A 2026-era client's call that declared nothing it could answer and asked for neither progress nor log messages
    (a plain call, `stdio.Front`): as `Direct` serves it, its questions are refused, naming what they need, and
    nothing else reaches it."""

    async def ask(self, request: types.InputRequest) -> types.InputResponse | types.ErrorData:
        return refusal(request, _missing(request, None))


class Parked(Relay):
    """A 2026-era client's call, run in the server's task group between the client's retries."""

    listens = True  # each retry may carry its own progress token

    def __init__(self, ctx: ServerRequestContext, tool: str) -> None:
        self.ctx: ServerRequestContext | None = ctx  # the request waiting for this call, if one is
        self.tool = tool  # the tool called
        self.capabilities = ctx.session.client_capabilities
        self.result: Result | None = None
        self.questions: dict[str, types.InputRequest] = {}  # asked, not yet sent to the client
        self.sent: dict[str, types.InputRequest] = {}  # sent, not yet answered
        self.answers: dict[str, anyio.Event | types.InputResponse | types.ErrorData] = {}
        self.changed = anyio.Event()
        self.scope = anyio.CancelScope()

    def _tell(self) -> None:
        self.changed.set()
        self.changed = anyio.Event()

    async def run(self, work: Work) -> None:
        with self.scope:
            try:
                self.result = await work(self)
            except Exception as exc:  # never lost: the client's waiting request answers it
                log.exception("internal error in a parked call")
                self.result = failed(internal(exc, self.tool), self.tool)
        if self.result is None:
            self.result = failed(
                HandlerError("the call was cancelled before it ended; call the tool again."), self.tool
            )
        self._tell()

    async def ask(self, request: types.InputRequest) -> types.InputResponse | types.ErrorData:
        if why := _missing(request, self.capabilities):
            return refusal(request, why)
        key = secrets.token_hex(4)
        waiting = anyio.Event()
        self.questions[key], self.answers[key] = request, waiting
        self._tell()
        with anyio.move_on_after(ASK_TIMEOUT):
            await waiting.wait()
        answer = self.answers.pop(key)
        if isinstance(answer, anyio.Event):
            return refusal(request, f"the client did not answer within {ASK_TIMEOUT:g} s")
        return answer

    def answer(self, responses: types.InputResponses | None) -> None:
        """The client's retry: its answers to the questions sent; a question it left unanswered is asked again."""
        for key, given in (responses or {}).items():
            waiting, request = self.answers.get(key), self.sent.pop(key, None)
            if not isinstance(waiting, anyio.Event) or request is None:
                continue
            try:  # as the type the question asks for: a union of answers may have been read as another
                data = given.model_dump(by_alias=True, mode="json", exclude_none=True)
                self.answers[key] = _result_type(request).model_validate(data)  # type: ignore[assignment]
            except Exception as exc:
                self.answers[key] = types.ErrorData(code=types.INVALID_PARAMS, message=f"bad answer: {exc}")
            waiting.set()
        self.questions.update(self.sent)
        self.sent = {}

    async def next(self, ctx: ServerRequestContext, token: str) -> Result | InputRequired:
        """Wait, for the client's request `ctx`, until the call ends (its result) or asks (`input_required`)."""
        self.ctx = ctx
        try:
            while True:
                if self.result is not None:
                    return self.result
                if self.questions:
                    sent, self.questions = self.questions, {}
                    self.sent.update(sent)
                    requests = {k: r.model_dump(by_alias=True, mode="json", exclude_none=True) for k, r in sent.items()}
                    return {"resultType": "input_required", "inputRequests": requests, "requestState": token}
                await self.changed.wait()
        except anyio.get_cancelled_exc_class():
            self.scope.cancel()  # the client cancelled its request: the call ends with it
            raise
        finally:
            self.ctx = None

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        if self.ctx is not None:
            await self.ctx.session.report_progress(progress, total, message)

    async def log(self, params: types.LoggingMessageNotificationParams) -> None:
        if self.ctx is not None:  # sent only when the request opted in (its `_meta` log level): the SDK checks
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                await self.ctx.session.send_log_message(params.level, params.data, params.logger)


class Relays:
    """Each call's relay, for one served MCP server: its 2026-era calls parked between retries, and the log level
    each handshake-era session asked for."""

    def __init__(self) -> None:
        self.tg: TaskGroup | None = None
        self.parked: dict[str, Parked] = {}
        self.levels: dict[str, str] = {}

    async def run(
        self, ctx: ServerRequestContext, session: str | None, params: types.CallToolRequestParams, work: Work
    ) -> Result | InputRequired:
        """`work` (the call) for the client of `ctx`, given its relay: run in the request, or for a 2026-era client that
        may be asked something, parked in the server's task group between its retries. Its result, or the questions it
        asks now (`input_required`)."""
        if ctx.session.can_send_request or not offers(ctx.session.client_capabilities) or self.tg is None:
            return await work(Direct(ctx, self.levels.get(session or "")))  # no task: the cheap path
        state = params.request_state or ""
        parked = self.parked.get(state)
        if parked is None:
            if state:
                return failed(
                    BadRequest("this call's answers came too late or to another server process; call the tool again."),
                    params.name,
                )
            if len(self.parked) >= PARKED:
                self.parked.pop(next(iter(self.parked))).scope.cancel()
            state, parked = secrets.token_urlsafe(16), Parked(ctx, params.name)
            self.parked[state] = parked
            self.tg.start_soon(parked.run, work)
        else:
            parked.answer(params.input_responses)
        answer = await parked.next(ctx, state)
        if isinstance(answer, Result):
            self.parked.pop(state, None)
        return answer


def failed(exc: CallError, tool: str) -> Result:
    """The result of a call of `tool` that failed outside the runtime (it answers its own failures)."""
    return Result(ok=False, path=tool, error=exc.kind, message=exc.render())


_CHANGED: dict[str, tuple[Callable[[], types.ServerNotification], Callable[[], ServerEvent]]] = {
    "tools": (types.ToolListChangedNotification, ToolsListChanged),
    "resources": (types.ResourceListChangedNotification, ResourcesListChanged),
    "prompts": (types.PromptListChangedNotification, PromptsListChanged),
}


class Changes:
    """An upstream's list changes, passed on: its tools read again on its live session and the tree rebuilt (calls
    under way finish on the old one); handshake-era clients told `notifications/.../list_changed`, 2026-era ones on
    their `subscriptions/listen` streams (`bus`)."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        # handshake-era clients that called, by session (stdio's one client, an HTTP session's id): the session of
        # their latest request, whose connection's channel the notifications take; the least recently heard first
        self.listening: OrderedDict[str, ServerSession] = OrderedDict()
        self.bus = InMemorySubscriptionBus()
        self.rereading: dict[str, bool] = {}  # servers whose tools are being read again: changed once more since?

    def heard(self, ctx: ServerRequestContext, session: str | None) -> None:
        """A call from the client of `ctx`, in `session` (None: a request on its own, which has no channel after it):
        a handshake-era one is told of changes from now on."""
        if ctx.session.can_send_request and session is not None:
            self.listening.pop(session, None)
            self.listening[session] = ctx.session
            if len(self.listening) > KEYED:
                self.listening.popitem(last=False)

    def install(self) -> None:
        """Hear the runtime's upstream servers (once it is entered)."""
        pool = getattr(upstream_kind(self.runtime.kinds), "pool", None)
        if pool is not None:
            pool.changed = self.changed

    async def changed(self, server: Upstream, kind: str) -> None:
        reload = self.runtime.tree.reload
        if kind == "tools" and reload is not None and not await self._reread(server, reload):
            return
        notification, event = _CHANGED[kind]
        for key, session in list(self.listening.items()):
            try:
                await session.send_notification(notification())
            except Exception:  # a client gone meanwhile
                self.listening.pop(key, None)
        await self.bus.publish(event())

    async def _reread(self, server: Upstream, reload: Callable[[str, Any], Awaitable[Tree]]) -> bool:
        """Read `server`'s tools again and rebuild the tree; True when that is done and its clients are to be told.
        Changes heard while a read is under way (a server that adds its tools one by one says so each time) are
        taken by one more read when it ends, not one read each; a read cut short by the server's own stop (the
        client left) is dropped without a word."""
        if server.name in self.rereading:
            self.rereading[server.name] = True
            return False
        self.rereading[server.name] = False
        try:
            while True:
                client = server.client
                if client is None:
                    return False
                try:
                    tree = await reload(server.name, await listing(client))
                except Exception as exc:
                    if not server.stopping:
                        log.warning(
                            "upstream server %s changed its tools, but reading them failed: %s", server.name, exc
                        )
                    return False
                self.runtime.adopt(tree)
                if not self.rereading[server.name]:
                    return True
                self.rereading[server.name] = False
        finally:
            del self.rereading[server.name]


class Terminal(Relay):
    """`mcp-cli run`'s caller: a person at a terminal, asked a form's fields on stderr and stdin (refused when stdin is
    not a terminal), shown progress as lines on stderr; sampling is refused (there is no model here)."""

    def __init__(self, stdin: TextIO | None = None, stderr: TextIO | None = None) -> None:
        self.stdin, self.stderr = stdin or sys.stdin, stderr or sys.stderr
        self.listens = self.stderr.isatty()

    async def ask(self, request: types.InputRequest) -> types.InputResponse | types.ErrorData:
        if not isinstance(request, types.ElicitRequest):
            return refusal(request, "`mcp-cli run` has no model to sample with; call it from an MCP client that can")
        if not self.stdin.isatty():
            return refusal(request, "stdin is not a terminal, so `mcp-cli run` cannot ask; run it in a terminal")
        return await anyio.to_thread.run_sync(self._elicit, request.params)

    def _line(self, prompt: str) -> str | None:
        self.stderr.write(prompt)
        self.stderr.flush()
        line = self.stdin.readline()
        return None if not line else line.strip()

    def _elicit(self, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.stderr.write(f"{params.message}\n")
        if isinstance(params, types.ElicitRequestURLParams):
            said = self._line(f"Open {params.url} and finish there, then press Enter (n: decline): ")
            return types.ElicitResult(action="cancel" if said is None else "decline" if said == "n" else "accept")
        schema = params.requested_schema
        required, content = set(schema.get("required") or []), {}
        self.stderr.write("(an empty answer skips a field; to a required one it declines; Ctrl-D cancels)\n")
        for name, field in (schema.get("properties") or {}).items():
            while True:
                said = self._line(_prompt(name, field, name in required))
                if said is None:
                    return types.ElicitResult(action="cancel")
                if not said:
                    if name in required:
                        return types.ElicitResult(action="decline")
                    break
                try:
                    content[name] = _value(said, field)
                    break
                except ValueError as exc:
                    self.stderr.write(f"  {exc}\n")
        return types.ElicitResult(action="accept", content=content)

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        if self.stderr.isatty():
            done = f"{progress:g}/{total:g}" if total else f"{progress:g}"
            self.stderr.write(f"progress {done}" + (f": {message}" if message else "") + "\n")
            self.stderr.flush()


def _choices(field: dict[str, Any]) -> list[str]:
    """A field's allowed values: `enum`, `oneOf`/`anyOf` consts, or an array's item choices."""
    items = field.get("items") if field.get("type") == "array" else field
    items = items if isinstance(items, dict) else {}
    options = items.get("enum") or [o.get("const") for o in items.get("oneOf") or items.get("anyOf") or []]
    return [str(o) for o in options if o is not None]


def _prompt(name: str, field: dict[str, Any], required: bool) -> str:
    what = field.get("title") or name
    kind = field.get("type", "string")
    choices = _choices(field)
    hint = f"one of {', '.join(choices)}" if choices else "y/n" if kind == "boolean" else kind
    hint += ", several comma-separated" if kind == "array" else ""
    default = f", default {field['default']}" if "default" in field else ""
    return f"{what} ({hint}{default}){' *' if required else ''}: "


def _value(said: str, field: dict[str, Any]) -> Any:
    """What a person typed, as the field's type; ValueError saying what is expected."""
    kind, choices = field.get("type", "string"), _choices(field)
    if kind == "array":
        values = [v.strip() for v in said.split(",") if v.strip()]
        if choices and (bad := [v for v in values if v not in choices]):
            raise ValueError(f"not among the choices: {', '.join(bad)}")
        return values
    if choices and said not in choices:
        raise ValueError(f"give one of {', '.join(choices)}")
    if kind == "boolean":
        if said.lower() not in ("y", "yes", "n", "no", "true", "false"):
            raise ValueError("give y or n")
        return said.lower() in ("y", "yes", "true")
    if kind in ("integer", "number"):
        return whole(said) if kind == "integer" else number(said)  # ValueError saying what to give
    return said
