"""Upstream lifecycle through the real server: lazy start from a warm cache, crash, hang, error results,
an upstream that cannot start, isolation between upstreams, and no child process left after shutdown."""

import json
import subprocess
import sys
import time
import uuid

import anyio
import pytest

from mcp_cli.result import tokens
from mcp_cli.testing import call, ok

from .conftest import ROOT, budget, running, served

pytestmark = pytest.mark.anyio
AWKWARD = ROOT / "tests" / "fixtures" / "upstreams" / "awkward.py"
TIMEOUT, SLOW_TIMEOUT = budget(2), budget(4)  # per call: of the others, and of `slow`


def wait_until(check) -> bool:
    deadline = time.monotonic() + budget(30)
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.2)
    return bool(check())


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    folder = tmp_path_factory.mktemp("life")
    marker = f"awk-{uuid.uuid4().hex[:8]}"
    sentinel, stuck = folder / "fail-now", folder / "hang-now"
    entry = {"command": sys.executable, "args": [str(AWKWARD), marker], "timeout": TIMEOUT}
    config = folder / "life.json"
    config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "a": entry,
                    "b": {**entry, "args": [str(AWKWARD), marker, "b"]},
                    "flaky": {
                        **entry,
                        "args": [str(AWKWARD), marker, "flaky"],
                        "env": {"AWKWARD_FAIL_IF": str(sentinel)},
                    },
                    "slow": {**entry, "args": [str(AWKWARD), marker, "slow"], "timeout": SLOW_TIMEOUT},
                    "stuck": {
                        **entry,
                        "args": [str(AWKWARD), marker, "stuck"],
                        "env": {"AWKWARD_HANG_IF": str(stuck)},
                        "startup_timeout_sec": TIMEOUT,
                    },
                    "parent": {
                        **entry,
                        "args": [str(AWKWARD), marker, "parent"],
                        "env": {"AWKWARD_CHILD": f"{marker}-child"},
                    },
                }
            }
        )
    )
    env = {"MCP_CLI_CACHE_DIR": str(folder / "cache")}
    warm = subprocess.run(
        [sys.executable, "-m", "mcp_cli", "inspect", str(config)],
        capture_output=True,
        text=True,
        env={**__import__("os").environ, **env},
        timeout=budget(120),
    )  # fills the tool-list cache
    assert warm.returncode == 0, warm.stderr
    assert not running(marker)
    sentinel.write_text("from now on `flaky` cannot start")
    stuck.write_text("from now on `stuck` never finishes starting")
    return config, env, marker


@pytest.fixture(scope="module")
async def life(setup):
    config, env, marker = setup
    async with served("serve", str(config), env=env) as client:
        yield client, marker
    deadline = time.monotonic() + budget(10)
    while running(marker) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not running(marker), "an upstream process outlived the server"


async def test_warm_cache_starts_no_upstream_for_help(life):
    client, marker = life
    tools = await client.list_tools()
    assert [t.name for t in tools.tools] == ["life"]
    root = await ok(client, "--help")
    assert "\n  a      " in root and "\n  flaky  " in root
    await ok(client, "a", "echo-args", "--help")
    assert running(marker) == []
    assert int(await ok(client, "a", "pid")) > 0
    assert len(running(marker)) == 1  # started on the first call, and only that server


async def test_error_results_keep_is_error(life):
    client, _ = life
    reply = await call(client, "a", "fail")
    assert not reply.ok and reply.text.strip() == "the upstream says no"
    assert reply.structured["error"] == "upstream"


async def test_content_items_pass_through_unchanged(life):
    client, _ = life
    image, resource = (await call(client, "a", "media")).content
    png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
    assert (image.type, image.mime_type, image.data) == ("image", "image/png", png)
    assert resource.type == "resource" and resource.resource.text == "embedded text"


async def test_large_text_is_capped_with_a_note(life):
    client, _ = life
    out = await ok(client, "a", "big")
    assert "[cut to the 8,000-token budget: characters 1-" in out and " of 300,000 shown" in out
    assert out.startswith("z" * 20_000) and tokens(out) <= 8_000 and "Next part: `" in out


async def test_hang_times_out_and_the_server_recovers(life):
    client, _ = life
    before = await ok(client, "a", "pid")
    reply = await call(client, "a", "hang")
    assert not reply.ok and f"upstream server `a` did not answer within {TIMEOUT:g} s" in reply.text
    assert await ok(client, "a", "pid") == before  # still answering pings: kept


async def test_crash_is_reported_and_restarted_on_the_next_call(life):
    client, _ = life
    before = await ok(client, "a", "pid")
    reply = await call(client, "a", "crash")
    assert not reply.ok
    assert "upstream server `a` stopped during the call" in reply.text and "crashing on purpose" in reply.text
    assert await ok(client, "a", "pid") != before


async def test_upstream_that_cannot_start_names_itself_and_its_stderr(life):
    client, _ = life
    reply = await call(client, "flaky", "pid")
    assert not reply.ok
    assert "upstream server `flaky` could not start" in reply.text
    assert "awkward: cannot start, missing API key" in reply.text
    await ok(client, "a", "pid")


async def test_an_upstream_that_never_finishes_starting_is_stopped_when_given_up(life):
    client, marker = life
    reply = await call(client, "stuck", "pid")
    assert not reply.ok and f"upstream server `stuck` could not start (no answer within {TIMEOUT:g} s)" in reply.text
    assert wait_until(lambda: not [p for p in running(marker) if " stuck" in p])  # while the server serves on
    await ok(client, "a", "pid")


async def test_what_a_crashed_upstream_started_is_stopped_with_it(life):
    client, marker = life
    await ok(client, "parent", "pid")
    assert wait_until(lambda: running(f"{marker}-child"))
    reply = await call(client, "parent", "crash")
    assert not reply.ok and "stopped during the call" in reply.text
    assert wait_until(lambda: not running(f"{marker}-child"))  # its own child, in its process group, went with it
    assert wait_until(lambda: not [p for p in running(marker) if " parent" in p])


async def test_a_hung_upstream_does_not_block_the_others(life):
    client, _ = life
    await ok(client, "b", "pid")  # started: only isolation is under test, not how long a start takes
    finished: list[str] = []

    async def run(key, *argv):
        await call(client, *argv)
        finished.append(key)

    async with anyio.create_task_group() as tg:
        tg.start_soon(run, "hang", "a", "hang")
        await anyio.sleep(0.3)
        tg.start_soon(run, "b", "b", "pid")
    assert finished == ["b", "hang"]  # b answered while a's call was still pending (until a's per-call timeout)


async def test_concurrent_first_calls_each_finish_on_their_own(life):
    """Calls that arrive together at an upstream not yet started: each answers when its own work is done,
    the quick ones before the per-call timeout, and the ones over it time out without taking the others along."""
    client, _ = life
    finished: list[tuple[float, bool, str]] = []

    async def nap(seconds: float) -> None:
        reply = await call(client, "slow", "sleep", "--seconds", str(seconds))
        finished.append((seconds, not reply.ok, reply.text))

    over = (SLOW_TIMEOUT + 2, SLOW_TIMEOUT + 3)
    async with anyio.create_task_group() as tg:
        for seconds in (over[1], 2.2, 0.2, over[0], 1.2):
            tg.start_soon(nap, seconds)
    assert [(s, error) for s, error, _ in finished[:3]] == [(0.2, False), (1.2, False), (2.2, False)]
    assert sorted(s for s, _, _ in finished[3:]) == list(over)
    assert all(error and f"did not answer within {SLOW_TIMEOUT:g} s;" in out for _, error, out in finished[3:])
    assert (await ok(client, "slow", "sleep", "--seconds", "0")).startswith("slept 0")  # the same session serves
