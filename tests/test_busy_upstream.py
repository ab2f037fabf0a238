"""A busy upstream is not a dead one: on a single-threaded upstream working through a queue, a call that runs out
of time fails alone, with a message saying the server was busy; the server is not restarted and the calls queued
behind it are answered. A silent one that misses a ping is still restarted (tests/test_wrap_lifecycle.py: hang,
crash; bench/reliability.py: freeze)."""

import json
import sys
import uuid

import anyio
import pytest

from mcp_cli.testing import Reply, call, ok

from .conftest import ROOT, budget, served

pytestmark = pytest.mark.anyio
SERIAL = ROOT / "tests" / "fixtures" / "upstreams" / "serial.py"
T = budget(2)  # each call's timeout


@pytest.fixture
def config(tmp_path):
    path = tmp_path / "busy.json"
    entry = {"command": sys.executable, "args": [str(SERIAL), f"busy-{uuid.uuid4().hex[:8]}"], "timeout": T}
    path.write_text(json.dumps({"mcpServers": {"busy": entry}}))
    return path


async def test_a_call_timing_out_on_a_busy_upstream_does_not_restart_it(config):
    """A holds the one thread for 0.6 T; C, queued behind it, holds it 0.6 T more and so runs out of time (at
    1.05 T) while the server is busy with it; D, queued behind C, is answered in its own time (at about 1.35 T).
    A ping sent when C ran out would wait behind C and D: mcp-cli used to take that for death and restart the
    server, failing D with "stopped during the call"."""
    async with served("serve", str(config)) as client:
        pid = await ok(client, "busy", "pid")
        replies: dict[str, Reply] = {}

        async def block(key: str, after: float, seconds: float) -> None:
            await anyio.sleep(after)
            replies[key] = await call(client, "busy", "block", "--seconds", f"{seconds:g}")

        async with anyio.create_task_group() as tg:
            tg.start_soon(block, "A", 0, 0.6 * T)
            tg.start_soon(block, "C", 0.05 * T, 0.6 * T)
            tg.start_soon(block, "D", 0.5 * T, 0.15 * T)
        assert replies["A"].ok and replies["D"].ok, (replies["A"].text, replies["D"].text)
        timed_out = replies["C"]
        assert not timed_out.ok and timed_out.structured["error"] == "timeout"
        assert f"did not answer within {T:g} s; it is busy" in timed_out.text
        assert "left running" in timed_out.text and "restart" not in timed_out.text
        assert await ok(client, "busy", "pid") == pid  # the same process serves on


async def test_concurrent_first_calls_share_one_start(config, tmp_path):
    """Calls that arrive while the upstream is still starting are all answered once it has started, by the one
    process started for them."""
    starts = tmp_path / "starts"
    data = json.loads(config.read_text())
    data["mcpServers"]["busy"]["env"] = {"SERIAL_STARTS": str(starts)}
    config.write_text(json.dumps(data))
    async with served("serve", str(config)):
        pass  # its tools listed (and cached) at start-up, through a session that serve then closed
    starts.unlink()
    async with served("serve", str(config)) as client:
        assert not starts.exists()  # its tools come from the cache: nothing started yet
        replies: list[str] = []

        async def first() -> None:
            replies.append(await ok(client, "busy", "pid"))

        async with anyio.create_task_group() as tg:
            for _ in range(8):
                tg.start_soon(first)
        assert len(replies) == 8 and len(set(replies)) == 1
        assert starts.read_text().count("start") == 1
