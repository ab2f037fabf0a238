"""What an upstream asks of the client while it runs a call, and what it tells it: the relay between the two.

A surface puts the calling client's `Relay` on the call (`CallScope.relay`), and the handler hands it to the upstream
call; an upstream's questions (elicitation in form or URL mode, sampling), its progress and its log messages reach
that relay. The upstream session declares that it can
answer elicitation and sampling whoever calls (its session and its tool list are shared by every client), so the
tools that need them are always listed; a client that cannot answer gets a refusal that names what the tool asked.

Routing: a 2026-era upstream's questions come back inside the call (`input_required`), in the calling task; a
handshake-era upstream sends them on its back-channel, linked to no call over stdio: they go to the most recent call
in flight on that upstream (`Calls`).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
from mcp import types

from .pages import every_page, listed

if TYPE_CHECKING:
    from mcp import Client
    from mcp.client.session import ClientRequestContext

    from .stdio_client import DirectLine

log = logging.getLogger("mcp_cli")
TASK_TTL_MS = 3_600_000  # how long an upstream keeps a task's result for us
POLL_DEFAULT = 1.0  # seconds between polls of a task's status when the upstream suggests none


def asked(request: types.InputRequest) -> str:
    """What an input request asks for, in one line: for error messages."""
    if isinstance(request, types.ElicitRequest):
        p = request.params
        if isinstance(p, types.ElicitRequestURLParams):
            return f"URL elicitation (open {p.url}: {p.message!r})"
        fields = ", ".join(p.requested_schema.get("properties") or {}) or "no fields"
        return f"form elicitation ({p.message!r}, fields: {fields})"
    if isinstance(request, types.CreateMessageRequest):
        return f"sampling (a model's reply to {len(request.params.messages)} message(s))"
    return "the client's roots"


def need(request: types.InputRequest) -> str:
    """The capability an input request needs: `elicitation.form`, `elicitation.url`, `sampling` or `roots`."""
    if isinstance(request, types.ElicitRequest):
        return "elicitation.url" if isinstance(request.params, types.ElicitRequestURLParams) else "elicitation.form"
    return "sampling" if isinstance(request, types.CreateMessageRequest) else "roots"


def refusal(request: types.InputRequest, why: str) -> types.ErrorData:
    return types.ErrorData(code=types.INVALID_REQUEST, message=f"the tool asked for {asked(request)}, but {why}")


def offers(capabilities: types.ClientCapabilities | None) -> frozenset[str]:
    """The input requests a client with these capabilities can answer (elicitation without modes: form)."""
    if capabilities is None:
        return frozenset()
    can = set()
    if capabilities.elicitation is not None:
        e = capabilities.elicitation
        can |= {"elicitation.form"} if e.form is not None or e.url is None else set()
        can |= {"elicitation.url"} if e.url is not None else set()
    can |= {"sampling"} if capabilities.sampling is not None else set()
    can |= {"roots"} if capabilities.roots is not None else set()
    return frozenset(can)


class Relay:
    """The calling client, as an upstream sees it. This base answers nothing and hears nothing: a caller with no
    channel back (a script, OpenAPI); `why` says so in refusals."""

    why = "this client cannot answer it"
    listens = False  # whether the caller hears progress: only then is the upstream asked to report it

    async def ask(self, request: types.InputRequest) -> types.InputResponse | types.ErrorData:
        return refusal(request, self.why)

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        """The upstream's progress on the call."""

    async def log(self, params: types.LoggingMessageNotificationParams) -> None:
        """A log message of the upstream, during the call."""


# The relay of the call the calling task makes, set around its request alone: the SDK's callbacks (a 2026-era
# upstream's questions inside the call) take no parameter of ours, so this is how they find it.
_CALLING: ContextVar[Relay | None] = ContextVar("mcp_cli_calling", default=None)


@dataclass
class Answer:
    """A tool's answer as its upstream sent it: its content items (each as its MCP JSON), whether it is an error,
    and its structured content."""

    content: list[dict[str, Any]]
    is_error: bool = False
    structured: Any = None

    @classmethod
    def of(cls, result: types.CallToolResult) -> Answer:
        content = [item.model_dump(by_alias=True, exclude_none=True, mode="json") for item in result.content]
        return cls(content, result.is_error, result.structured_content)


class _Raw(types.Result):
    """A result kept as the upstream sent it (its members are the model's extras): what a plain call relays, once
    the session has checked it against the protocol, without the SDK's second pass (`Calls.call`)."""

    model_config = types.Result.model_config | {"extra": "allow"}


class Calls:
    """The calls in flight on one upstream session, and the session's callbacks that reach their clients."""

    def __init__(self, changed: Callable[[str], Awaitable[None]] | None = None) -> None:
        self.relays: list[Relay] = []  # in flight, most recent last
        self.changed = changed  # told `tools`, `resources` or `prompts` when the upstream's list of them changes

    def _relay(self) -> Relay:
        """The relay of the call a question belongs to: the calling task's (a 2026-era upstream asks inside the
        call), else the most recent call in flight (a back-channel request), else one that answers nothing."""
        return _CALLING.get() or (self.relays[-1] if self.relays else Relay())

    def options(self) -> dict[str, Any]:
        """The `mcp.Client` arguments that wire an upstream session to its callers."""

        async def elicit(
            ctx: ClientRequestContext, params: types.ElicitRequestParams
        ) -> types.ElicitResult | types.ErrorData:
            answer = await self._relay().ask(types.ElicitRequest(params=params))
            return answer if isinstance(answer, (types.ElicitResult, types.ErrorData)) else _wrong(answer)

        async def sample(
            ctx: ClientRequestContext, params: types.CreateMessageRequestParams
        ) -> types.CreateMessageResult | types.CreateMessageResultWithTools | types.ErrorData:
            answer = await self._relay().ask(types.CreateMessageRequest(params=params))
            ok = (types.CreateMessageResult, types.CreateMessageResultWithTools, types.ErrorData)
            return answer if isinstance(answer, ok) else _wrong(answer)

        async def logged(params: types.LoggingMessageNotificationParams) -> None:
            for relay in list(self.relays):  # an upstream's log is not tied to a call: every caller that listens
                await relay.log(params)

        async def message(message: Any) -> None:
            kind = next((k for m, k in _LIST_CHANGED if isinstance(message, m)), "")
            if kind and self.changed is not None:
                await self.changed(kind)

        return {
            "elicitation_callback": elicit,
            "sampling_callback": sample,
            "logging_callback": logged,
            "message_handler": message,
        }

    async def call(
        self,
        client: Client,
        tool: str,
        arguments: dict[str, Any],
        relay: Relay | None,
        task: bool = False,
        plain: bool = False,
        direct: DirectLine | None = None,
    ) -> Answer:
        """Call `tool` for the client behind `relay`: its progress goes there, and its questions; `task`: the
        tool runs only as a task (created, polled, its result fetched). `plain`: a handshake-era session, where
        nothing comes back inside a call but its answer: the answer is relayed as the session got it, checked
        against the protocol once (not again as a model, then dumped back to JSON; nor against the tool's output
        schema: the caller gets what the upstream said). `direct`: the session's transport carries requests of our
        own (stdio), so a plain call that wants no progress is sent on it, without the session's tasks and models
        (the upstream's questions during it still come through the session, to this relay)."""
        relay = relay or Relay()
        self.relays.append(relay)
        token = _CALLING.set(relay)
        try:
            if task:
                return Answer.of(await _as_task(client, tool, arguments, relay))
            heard = relay.progress if relay.listens else None
            if plain and direct is not None and heard is None:
                return _answer(await direct.request("tools/call", {"name": tool, "arguments": arguments}))
            if plain:
                request = types.CallToolRequest(params=types.CallToolRequestParams(name=tool, arguments=arguments))
                raw = (await client.session.send_request(request, _Raw, progress_callback=heard)).model_extra or {}
                return _answer(raw)
            return Answer.of(await client.call_tool(tool, arguments, progress_callback=heard))
        finally:
            _CALLING.reset(token)
            self.relays.remove(relay)


def _answer(raw: dict[str, Any]) -> Answer:
    """A plain call's answer from the upstream's result as it sent it (its members that are null left out); a result
    that is not a tool's answer is a `ValueError` saying what it was."""
    content, structured = raw.get("content") or [], raw.get("structuredContent")
    if not isinstance(content, list) or not all(isinstance(item, dict) for item in content):
        raise ValueError(f"the upstream answered a call with a result that has no list of content items: {raw!r:.200}")
    items = [{k: v for k, v in item.items() if v is not None} for item in content]
    return Answer(items, bool(raw.get("isError")), structured)


async def listing(client: Client) -> dict[str, Any]:
    """Who a connected server is, its tools, and its resources, templates and prompts when it declares them (every
    page, each as its MCP JSON): what discovery caches (`sources/discovery.py`), read again when a server says its
    tools changed."""
    info = client.server_info
    server = {key: getattr(info, key, None) or "" for key in ("name", "version", "title", "description")}
    found: dict[str, Any] = {
        "server": {**server, "instructions": client.instructions or ""},
        "tools": await every_page(client.list_tools, "tools"),
    }
    declared = client.server_capabilities
    for key, op, has in (
        ("resources", "resources/list", declared.resources),
        ("resourceTemplates", "resources/templates/list", declared.resources),
        ("prompts", "prompts/list", declared.prompts),
    ):
        if has is not None:
            with contextlib.suppress(Exception):  # declared but not answered: its tools still count
                found[key] = await listed(client, op)
    return found


_LIST_CHANGED: list[tuple[type[Any], str]] = [
    (types.ToolListChangedNotification, "tools"),
    (types.ResourceListChangedNotification, "resources"),
    (types.PromptListChangedNotification, "prompts"),
]


def _wrong(answer: object) -> types.ErrorData:
    return types.ErrorData(code=types.INTERNAL_ERROR, message=f"the client answered with {type(answer).__name__}")


async def _as_task(client: Client, tool: str, arguments: dict[str, Any], relay: Relay) -> types.CallToolResult:
    """Run a tool as a task of the upstream: create it, wait for its result (`tasks/result`, which also carries the
    task's questions) while polling its status as progress; a call that ends early (a timeout, a cancellation)
    cancels the task."""
    session = client.session
    params = {"name": tool, "arguments": arguments, "task": {"ttl": TASK_TTL_MS}}
    # raw: the SDK checks a `tools/call` answer as a CallToolResult, and a task-augmented call answers a task
    created = types.CreateTaskResult.model_validate(await session._dispatcher.send_raw_request("tools/call", params))
    task_id = created.task.task_id

    async def poll(interval: float) -> None:
        for polls in range(1, 1 << 30):
            await anyio.sleep(interval)
            got = types.GetTaskRequest(params=types.GetTaskRequestParams(task_id=task_id))
            status = await session.send_request(got, types.GetTaskResult)
            await relay.progress(polls, None, status.status_message or status.status)

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(poll, (created.task.poll_interval or POLL_DEFAULT * 1000) / 1000)
            payload = types.GetTaskPayloadRequest(params=types.GetTaskPayloadRequestParams(task_id=task_id))
            result = await session.send_request(payload, types.CallToolResult)
            tg.cancel_scope.cancel()
        return result
    except BaseException:
        with anyio.move_on_after(5, shield=True):
            try:
                cancel = types.CancelTaskRequest(params=types.CancelTaskRequestParams(task_id=task_id))
                await session.send_request(cancel, types.CancelTaskResult)
            except Exception as exc:
                log.info("could not cancel task %s: %s", task_id, exc)
        raise
