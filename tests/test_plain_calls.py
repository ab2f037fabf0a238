"""Plain calls: a 2026-era client's `tools/call` that nothing can come back to is answered off the wire by the stdio
front end (`surfaces/stdio.py` `Front`), and a plain call to a handshake-era stdio upstream goes on the transport's
own line (`handlers/stdio_client.py` `DirectLine`). Both must answer exactly as the SDK's path does, fail with the same
kinds, and be cancelled the same way. Spoken as raw JSON-RPC lines to a real `mcp-cli serve` over real upstreams, so
that a test can send the same call down either path: with a progress token it takes the SDK's path, without, the
plain one."""

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import Process
from mcp.types import methods as spec

from mcp_cli.surfaces.stdio import Front, sieved

from .conftest import ROOT, budget

pytestmark = pytest.mark.anyio
HELPER = ROOT / "tests" / "fixtures" / "interactive" / "server.py"
VERSION = "2026-07-28"
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": VERSION,
    "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


class Wire:
    """A raw JSON-RPC conversation with a server process: lines out, lines in (notifications kept apart)."""

    def __init__(self, process: Process) -> None:
        self.process, self.buffer, self.answers = process, b"", {}

    async def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.send((json.dumps(message) + "\n").encode())

    async def answer(self, request_id: int) -> dict[str, Any]:
        """The answer to request `request_id` (others read meanwhile are kept)."""
        assert self.process.stdout is not None
        with anyio.fail_after(budget(30)):
            while request_id not in self.answers:
                while b"\n" not in self.buffer:
                    self.buffer += await self.process.stdout.receive()
                line, self.buffer = self.buffer.split(b"\n", 1)
                message = json.loads(line)
                if "id" in message and "method" not in message:
                    self.answers[message["id"]] = message
        return self.answers.pop(request_id)

    async def call(self, request_id: int, argv: list[str], progress: bool = False, **meta: Any) -> dict[str, Any]:
        envelope = {**ENVELOPE, **meta, **({"progressToken": f"p{request_id}"} if progress else {})}
        params = {"name": "team", "arguments": {"argv": argv}, "_meta": envelope}
        await self.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params})
        return await self.answer(request_id)


@pytest.fixture(scope="module")
def config(tmp_path_factory) -> Path:
    """The test's own MCPServer, a handshake-era stdio upstream; its markers go in the config's folder."""
    root = tmp_path_factory.mktemp("plain")
    helper = {"command": sys.executable, "args": [str(HELPER), str(root)]}
    path = root / "team.json"
    path.write_text(json.dumps({"mcpServers": {"helper": helper}}))
    return path


@pytest.fixture
async def wire(config):
    process = await anyio.open_process([sys.executable, "-m", "mcp_cli", "serve", str(config)], cwd=ROOT, stderr=None)
    async with process:
        talk = Wire(process)
        await talk.send({"jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": {"_meta": ENVELOPE}})
        assert "result" in await talk.answer(0)
        yield talk
        assert process.stdin is not None
        await process.stdin.aclose()
        with anyio.move_on_after(budget(10)):
            await process.wait()


ARGVS = [
    ["helper", "chatty"],  # an upstream tool's answer
    ["helper", "ask"],  # an upstream asks what this client cannot answer: refused, naming what it needs
    ["helper", "nope"],  # not a command: the teaching error, with its kind
    ["helper", "chatty", "--no-such-option"],  # bad usage
    ["--help"],
]


async def test_a_plain_call_answers_as_the_sdks_path_does(wire):
    for n, argv in enumerate(ARGVS, start=1):
        plain = await wire.call(2 * n, argv)
        through_sdk = await wire.call(2 * n + 1, argv, progress=True)
        assert plain["result"] == through_sdk["result"], argv
        meta = plain["result"]["_meta"]
        assert meta["io.modelcontextprotocol/serverInfo"]["name"] == "team"
        assert plain["result"]["resultType"] == "complete"
    chatty = (await wire.call(99, ["helper", "chatty"]))["result"]
    assert chatty["content"] == [{"type": "text", "text": "said it"}]
    assert chatty["_meta"]["mcp-cli/result"] == {
        "ok": True,
        "command": "team helper chatty",
        "data": {"result": "said it"},
    }


async def test_failures_keep_their_kinds(wire):
    missing = (await wire.call(1, ["helper", "nope"]))["result"]
    assert missing["isError"] and missing["_meta"]["mcp-cli/result"]["error"] == "not_found"
    asked = (await wire.call(2, ["helper", "ask"]))["result"]
    said = json.dumps(asked)
    assert "form elicitation" in said and "`elicitation.form` capability" in said
    await wire.send({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "other", "_meta": ENVELOPE}})
    unknown = (await wire.answer(3))["result"]
    assert unknown["isError"] and unknown["_meta"]["mcp-cli/result"]["error"] == "not_found"


async def test_cancelling_a_plain_call_cancels_the_upstreams(wire, config):
    marker, started = config.parent / "cancelled", config.parent / "started"
    marker.unlink(missing_ok=True)
    started.unlink(missing_ok=True)
    params = {"name": "team", "arguments": {"argv": ["helper", "slow"]}, "_meta": ENVELOPE}
    await wire.send({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params})
    with anyio.fail_after(budget(30)):
        while not started.exists():  # the upstream has started the call
            await anyio.sleep(0.05)
        cancel = {"requestId": 7, "reason": "the test"}
        await wire.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": cancel})
        while not marker.exists():
            await anyio.sleep(0.05)
    after = await wire.call(8, ["helper", "chatty"])
    assert not after["result"]["isError"]
    assert 7 not in wire.answers  # a cancelled call is not answered


async def test_a_call_with_a_progress_token_still_hears_progress(wire, config):
    (config.parent / "cancelled").unlink(missing_ok=True)
    params = {"name": "team", "arguments": {"argv": ["helper", "slow"]}, "_meta": {**ENVELOPE, "progressToken": "t"}}
    await wire.send({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": params})
    assert wire.process.stdout is not None
    with anyio.fail_after(budget(30)):
        while b'"progressToken":"t"' not in wire.buffer.replace(b" ", b""):
            wire.buffer += await wire.process.stdout.receive()
    await wire.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9}})


def _front() -> Front:
    async def call(params: dict[str, Any]) -> dict[str, Any]:
        raise AssertionError("not called")

    front = Front(call, dict)
    front.modern, front.ready = True, True
    return front


def _line(params: dict[str, Any], **outer: Any) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params, **outer})


PLAIN = {"name": "team", "arguments": {"argv": ["x"]}, "_meta": ENVELOPE}


@pytest.mark.parametrize(
    "params, outer",
    [
        ({**PLAIN, "_meta": {**ENVELOPE, "progressToken": 1}}, {}),  # wants progress
        ({**PLAIN, "_meta": {**ENVELOPE, "io.modelcontextprotocol/logLevel": "info"}}, {}),  # wants log messages
        ({**PLAIN, "_meta": {**ENVELOPE, "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}}, {}),
        ({**PLAIN, "_meta": {**ENVELOPE, "io.modelcontextprotocol/protocolVersion": "1999-01-01"}}, {}),
        ({**PLAIN, "_meta": {"io.modelcontextprotocol/protocolVersion": VERSION}}, {}),  # half an envelope
        ({**PLAIN, "requestState": "abc", "inputResponses": {}}, {}),  # a retry with answers
        ({**PLAIN, "task": {"ttl": 1000}}, {}),
        ({**PLAIN, "arguments": "argv"}, {}),  # arguments not an object: the SDK's error
        (PLAIN, {"id": True}),
        (PLAIN, {"extra": 1}),
    ],
)
def test_what_is_not_a_plain_call_goes_to_the_sdk(params, outer):
    assert _front()._plain(_line(params, **outer)) is None


def test_a_plain_call_is_taken():
    assert _front()._plain(_line(PLAIN)) == (1, VERSION, PLAIN)
    assert _front()._plain(_line({**PLAIN, "_meta": {**ENVELOPE, "mcp-cli/context": "k"}})) is not None


@pytest.mark.parametrize(
    "result",
    [
        {"resultType": "complete", "content": [{"type": "text", "text": "hi"}], "isError": False},
        {
            "resultType": "complete",
            "content": [{"type": "text", "text": "hi"}, {"type": "text", "text": "there"}],
            "isError": True,
            "_meta": {"mcp-cli/result": {"ok": False, "data": {"x": None, "y": [1, None]}}},
        },
        {"resultType": "complete", "content": [], "isError": False, "structuredContent": {"a": None}},
        # not of the plain shape: the SDK's pass itself
        {"resultType": "complete", "content": [{"type": "text", "text": "hi", "annotations": None}], "isError": False},
        {"resultType": "complete", "content": [{"type": "image", "data": "AAAA", "mimeType": "image/png"}]},
    ],
)
def test_a_plain_results_wire_form_is_the_sdks(result):
    assert sieved(VERSION, result) == spec.serialize_server_result("tools/call", VERSION, result)


@pytest.mark.parametrize("progress", [False, True])
async def test_a_call_in_flight_when_the_client_leaves_is_told_the_connection_closed(wire, config, progress):
    started = config.parent / "started"
    started.unlink(missing_ok=True)
    meta = {**ENVELOPE, **({"progressToken": "p"} if progress else {})}
    params = {"name": "team", "arguments": {"argv": ["helper", "slow"]}, "_meta": meta}
    await wire.send({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": params})
    with anyio.fail_after(budget(30)):
        while not started.exists():
            await anyio.sleep(0.05)
    assert wire.process.stdin is not None
    await wire.process.stdin.aclose()  # the client leaves
    assert (await wire.answer(5))["error"] == {"code": -32000, "message": "Connection closed"}
