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
import warnings
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import TaskGroup
from mcp import types
from mcp.shared.exceptions import MCPError

from ..handlers.relay import CURRENT, Relay, need, offers, refusal

if TYPE_CHECKING:
    from mcp.server import ServerRequestContext

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
Work = Callable[[], Awaitable[dict[str, Any]]]


def _missing(request: types.InputRequest, capabilities: types.ClientCapabilities | None) -> str:
    """Why a client with these capabilities cannot answer `request`, or "" when it can."""
    wanted = need(request)
    if wanted in offers(capabilities):
        return ""
    return f"the client did not declare the `{wanted}` capability, so it cannot answer; call it from a client that can"


class BackChannel(Relay):
    """A handshake-era client: asked on its call's back-channel."""

    def __init__(self, ctx: ServerRequestContext, level: str | None) -> None:
        self.ctx, self.level = ctx, level

    async def ask(self, request: types.InputRequest) -> types.InputResponse | types.ErrorData:
        from mcp.shared.message import ServerMessageMetadata

        if why := _missing(request, self.ctx.session.client_capabilities):
            return refusal(request, why)
        related = ServerMessageMetadata(related_request_id=self.ctx.request_id)
        kind = _RESULTS[need(request)]
        if isinstance(request, types.CreateMessageRequest) and request.params.tools:
            kind = types.CreateMessageResultWithTools
        try:
            answer: Any = await self.ctx.session.send_request(request, kind, metadata=related)
            return answer  # type: ignore[no-any-return]
        except MCPError as exc:
            return exc.error

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        await self.ctx.session.report_progress(progress, total, message)

    async def log(self, params: types.LoggingMessageNotificationParams) -> None:
        if self.level is None or LEVELS.index(params.level) < LEVELS.index(self.level):
            return  # the client did not ask for log messages (logging/setLevel), or not at this level
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # logging is deprecated in the 2026 protocol; this client is older
            await self.ctx.session.send_log_message(
                params.level, params.data, params.logger, related_request_id=self.ctx.request_id
            )


class Parked(Relay):
    """A 2026-era client's call, run in the server's task group between the client's retries."""

    def __init__(self, ctx: ServerRequestContext) -> None:
        self.ctx: ServerRequestContext | None = ctx  # the request waiting for this call, if one is
        self.capabilities = ctx.session.client_capabilities
        self.result: dict[str, Any] | None = None
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
            CURRENT.set(self)  # this task's own context: the relay of its call
            try:
                self.result = await work()
            except Exception as exc:  # never lost: the client's waiting request answers it
                self.result = {"resultType": "complete", "content": [{"type": "text", "text": f"Error: {exc}"}],
                               "isError": True}  # fmt: skip
        if self.result is None:  # cancelled
            self.result = {"resultType": "complete", "content": [{"type": "text", "text": "Error: cancelled"}],
                           "isError": True}  # fmt: skip
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

    def answer(self, responses: dict[str, Any] | None) -> None:
        """The client's retry: its answers to the questions sent."""
        for key, given in (responses or {}).items():
            waiting = self.answers.get(key)
            if not isinstance(waiting, anyio.Event):
                continue
            data = (
                given.model_dump(by_alias=True, mode="json", exclude_none=True)
                if hasattr(given, "model_dump")
                else given
            )
            kind = _RESULTS[need(self.sent.pop(key))]
            try:
                self.answers[key] = kind.model_validate(data)  # type: ignore[assignment]
            except Exception as exc:
                self.answers[key] = types.ErrorData(code=types.INVALID_PARAMS, message=f"bad answer: {exc}")
            waiting.set()

    async def next(self, ctx: ServerRequestContext, token: str) -> dict[str, Any]:
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

    async def set_level(self, session: str, level: str) -> None:
        self.levels[session] = level

    async def run(self, ctx: ServerRequestContext, session: str | None, params: types.CallToolRequestParams,
                  work: Work) -> dict[str, Any]:  # fmt: skip
        """`work` (the call) for the client of `ctx`, with its relay as `CURRENT`."""
        if ctx.session.can_send_request or self.tg is None:
            token = CURRENT.set(BackChannel(ctx, self.levels.get(session or "")))
            try:
                return await work()
            finally:
                CURRENT.reset(token)
        state = params.request_state or ""
        parked = self.parked.get(state)
        if parked is None:
            if state:
                text = "Error: this call's answers came too late or to another server process; call the tool again."
                return {"resultType": "complete", "content": [{"type": "text", "text": text}], "isError": True}
            if len(self.parked) >= PARKED:
                self.parked.pop(next(iter(self.parked))).scope.cancel()
            state, parked = secrets.token_urlsafe(16), Parked(ctx)
            self.parked[state] = parked
            self.tg.start_soon(parked.run, work)
        else:
            parked.answer(params.input_responses)
        answer = await parked.next(ctx, state)
        if answer.get("resultType") != "input_required":
            self.parked.pop(state, None)
        return answer
