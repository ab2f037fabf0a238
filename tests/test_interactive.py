"""Everything interactive passes through the wrap, for clients of both protocol eras: server-everything's elicitation
(form and URL), sampling, progress and its task-only tool behind `mcp-cli serve`; cancellation, logging, list changes
and a 2026-era upstream's `input_required` with an MCPServer of the test's own (fixtures/interactive/server.py);
`mcp-cli run` asking on a terminal; the working folder of a 2026-era client (roots asked as `input_required`, else
the folder the host names)."""

import contextlib
import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import anyio
import mcp
import pytest
from mcp import StdioServerParameters, types
from mcp.client.stdio import stdio_client

from .conftest import NODE_BIN, ROOT, budget, free_port, served, text, wait_for_port

pytestmark = pytest.mark.anyio
HELPER = ROOT / "tests" / "fixtures" / "interactive" / "server.py"
WORKDIR = ROOT / "tests" / "fixtures" / "skills" / "workdir"
ERAS = {"handshake": {"mode": "legacy"}, "2026": {}}


@pytest.fixture(params=list(ERAS))
def era(request) -> str:
    return request.param


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> Path:
    """A config of server-everything and the test's own MCPServer, in the handshake era and (`helper26`) the 2026
    one; the server writes its markers (`cancelled`) into the config's folder."""
    root = tmp_path_factory.mktemp("interactive")
    helper = {"command": sys.executable, "args": [str(HELPER), str(root)]}
    config = root / "team.json"
    config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "everything": {"command": str(NODE_BIN / "mcp-server-everything")},
                    "helper": helper,
                    "helper26": {**helper, "mcp-cli": {"protocol": "2026-07-28"}},
                }
            }
        )
    )
    return config


class Client:
    """What a test client answers and hears: its elicitation answers (`answer`), what it was asked, its sampling
    reply, the progress and log messages it got."""

    def __init__(self, answer: str = "accept") -> None:
        self.answer, self.asked, self.progress, self.logs = answer, [], [], []

    async def elicit(self, context, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.asked.append(params)
        if self.answer != "accept" or isinstance(params, types.ElicitRequestURLParams):
            return types.ElicitResult(action=self.answer)
        props = params.requested_schema["properties"]
        content = (
            {"name": "Ada Lovelace"}
            if "name" in props
            else {"interpretation": props["interpretation"]["oneOf"][-1]["const"]}
        )
        return types.ElicitResult(action="accept", content=content)

    async def sample(self, context, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        self.asked.append(params)
        reply = types.TextContent(type="text", text="a sampled haiku")
        return types.CreateMessageResult(role="assistant", content=reply, model="test-model")

    async def on_progress(self, progress: float, total: float | None, message: str | None) -> None:
        self.progress.append((progress, total, message))

    async def on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append((params.level, params.data))

    def options(self, era: str, **more):
        return {
            "elicitation_callback": self.elicit,
            "sampling_callback": self.sample,
            "logging_callback": self.on_log,
            **ERAS[era],
            **more,
        }


async def call(client, *argv: str, **options) -> tuple[bool, str]:
    result = await client.call_tool("team", {"argv": list(argv)}, **options)
    return not result.is_error, text(result)


@contextlib.asynccontextmanager
async def direct(asker: Client, era: str):
    """A client straight to server-everything (the reference the wrap must match); a 2026 client falls back to
    2025-11-25, the era server-everything speaks."""
    params = mcp.StdioServerParameters(command=str(NODE_BIN / "mcp-server-everything"))
    async with mcp.Client(params, **asker.options(era)) as client:
        yield client


async def test_direct_elicitation_form_and_url(era):
    asker = Client()
    async with direct(asker, era) as client:
        assert "Ada Lovelace" in text(await client.call_tool("trigger-elicitation-request", {}))
        asker.answer = "decline"
        assert "declined" in text(await client.call_tool("trigger-elicitation-request", {})).lower()
        asker.answer = "accept"
        said = text(await client.call_tool("trigger-url-elicitation", {"url": "https://example.org/login"}))
        assert "completed the URL elicitation" in said and asker.asked[-1].url == "https://example.org/login"


async def test_direct_sampling_and_progress(era):
    asker = Client()
    async with direct(asker, era) as client:
        said = text(await client.call_tool("trigger-sampling-request", {"prompt": "write a haiku"}))
        assert "a sampled haiku" in said
        arguments = {"duration": 1, "steps": 3}
        await client.call_tool("trigger-long-running-operation", arguments, progress_callback=asker.on_progress)
        assert [(p, t) for p, t, _ in asker.progress] == [(1, 3), (2, 3), (3, 3)]


async def test_capability_gated_tools_are_listed(world, era):
    async with served("serve", str(world), **Client().options(era)) as client:
        ok, listing = await call(client, "everything", "--help")
        assert ok, listing
        assert "trigger-elicitation-request" in listing and "trigger-sampling-request" in listing  # their own names
        assert "trigger-url-elicitation" in listing and "simulate-research-query" in listing


async def test_form_elicitation_accepted_and_declined(world, era):
    asker = Client()
    async with served("serve", str(world), **asker.options(era)) as client:
        ok, said = await call(client, "everything", "trigger-elicitation-request")
        assert ok, said
        assert "Ada Lovelace" in said and '"action": "accept"' in said
        assert "name" in asker.asked[0].requested_schema["properties"]  # the upstream's form reached the client whole
        asker.answer = "decline"
        ok, said = await call(client, "everything", "trigger-elicitation-request")
        assert ok and "declined" in said.lower()


async def test_url_elicitation(world, era):
    asker = Client()
    async with served("serve", str(world), **asker.options(era)) as client:
        ok, said = await call(client, "everything", "trigger-url-elicitation", "--url", "https://example.org/login")
        assert ok, said
        assert isinstance(asker.asked[0], types.ElicitRequestURLParams)
        assert asker.asked[0].url == "https://example.org/login"
        assert "completed the URL elicitation" in said


async def test_sampling(world, era):
    asker = Client()
    async with served("serve", str(world), **asker.options(era)) as client:
        ok, said = await call(client, "everything", "trigger-sampling-request", "--prompt", "write a haiku")
        assert ok, said
        assert "a sampled haiku" in said and "test-model" in said
        assert asker.asked[0].messages[0].content.text.endswith("write a haiku")


async def test_a_client_that_cannot_answer_is_told_what_the_tool_asked(world, era):
    async with served("serve", str(world), **ERAS[era]) as client:  # no elicitation or sampling callbacks
        ok, said = await call(client, "everything", "trigger-elicitation-request")
        assert "the tool asked for form elicitation" in said and "`elicitation.form` capability" in said
        ok, said = await call(client, "everything", "trigger-sampling-request", "--prompt", "hi")
        assert "the tool asked for sampling" in said and "`sampling` capability" in said
        ok, said = await call(client, "everything", "echo", "--message", "still serving")
        assert ok and "still serving" in said


async def test_progress_reaches_the_clients_token(world, era):
    asker = Client()
    async with served("serve", str(world), **asker.options(era)) as client:
        ok, said = await call(
            client,
            "everything",
            "trigger-long-running-operation",
            "--duration",
            "1",
            "--steps",
            "3",
            progress_callback=asker.on_progress,
        )
        assert ok, said
        assert [(p, t) for p, t, _ in asker.progress] == [(1, 3), (2, 3), (3, 3)]


async def test_a_task_only_tool_runs_as_a_task_with_progress_and_its_question(world, era):
    asker = Client()
    async with served("serve", str(world), **asker.options(era)) as client:
        ok, said = await call(
            client,
            "everything",
            "simulate-research-query",
            "--topic",
            "python",
            "--ambiguous",
            progress_callback=asker.on_progress,
        )
        assert ok, said
        assert "# Research Report: python" in said
        chosen = asker.asked[0].requested_schema["properties"]["interpretation"]["oneOf"][-1]["const"]
        assert chosen in said  # the task's question reached the client and its answer the task
        assert asker.progress and any(m for _, _, m in asker.progress)  # the task's status messages, as progress


async def test_cancellation_reaches_the_upstream(world, era):
    marker = world.parent / "cancelled"
    marker.unlink(missing_ok=True)
    asker = Client()
    async with served("serve", str(world), **asker.options(era)) as client:
        with anyio.move_on_after(budget(60)) as waited:
            async with anyio.create_task_group() as tg:
                tg.start_soon(lambda: call(client, "helper", "slow", progress_callback=asker.on_progress))
                while not asker.progress:  # the upstream has started the call
                    await anyio.sleep(0.05)
                tg.cancel_scope.cancel()
            while not marker.exists():
                await anyio.sleep(0.05)
        assert not waited.cancel_called, "the upstream's call was not cancelled"
        ok, said = await call(client, "everything", "echo", "--message", "after")
        assert ok and "after" in said


async def test_upstream_logs_reach_clients_that_asked(world, era):
    quiet, listening = Client(), Client()
    async with served("serve", str(world), **quiet.options(era)) as client:
        ok, said = await call(client, "helper", "chatty")
        assert ok and said == "said it"
    assert quiet.logs == []  # nobody asked
    more = {"log_level": "info"} if era == "2026" else {}  # the 2026 opt-in rides each request
    async with served("serve", str(world), **listening.options(era, **more)) as client:
        if era == "handshake":
            await client.set_logging_level("info")
        ok, said = await call(client, "helper", "chatty")
        assert ok
    assert listening.logs == [("info", "an info line"), ("warning", "a warning line")]


async def test_a_tool_list_change_rebuilds_the_tree_and_tells_the_client(world, era, tmp_path):
    changed = anyio.Event()

    async def message_handler(message) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    env = {"MCP_CLI_CACHE_DIR": str(tmp_path)}  # the grown listing is cached: not in the other tests' cache
    async with served("serve", str(world), env=env, message_handler=message_handler, **ERAS[era]) as client:
        ok, said = await call(client, "helper", "extra")
        assert not ok and "no command `extra`" in said
        with anyio.fail_after(budget(30)):
            if era == "2026":  # no back-channel: list changes come on a subscriptions/listen stream
                async with client.listen(tools_list_changed=True) as events:
                    assert (await call(client, "helper", "grow"))[0]
                    async for _ in events:
                        break
            else:
                assert (await call(client, "helper", "grow"))[0]
                await changed.wait()
        ok, said = await call(client, "helper", "extra")
        assert ok and said == "extra here"


async def test_a_burst_of_tool_list_changes_is_read_once_more_not_once_each(world, tmp_path):
    """An upstream that says five times over that its tools changed (as servers that add their tools one by one
    do) is listed again once, and once more for the changes heard meanwhile, not five times; the client is told
    once, when the tree is whole."""
    listed, heard = world.parent / "listed", []

    async def message_handler(message) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            heard.append(message)

    env = {"MCP_CLI_CACHE_DIR": str(tmp_path)}
    async with served("serve", str(world), env=env, message_handler=message_handler, **ERAS["handshake"]) as client:
        assert (await call(client, "helper", "chatty"))[0]  # the helper is up, its first listing done
        before = len(listed.read_text().splitlines())
        assert (await call(client, "helper", "burst"))[0]
        with anyio.fail_after(budget(30)):
            while not heard:
                await anyio.sleep(0.05)
        await anyio.sleep(0.5)  # room for any further listing or notice
        assert 1 <= len(listed.read_text().splitlines()) - before <= 2
        assert len(heard) == 1
        ok, said = await call(client, "helper", "after-burst")
        assert ok and said == "after the burst"


async def test_a_client_that_leaves_while_tools_are_read_again_leaves_no_warning(world, tmp_path):
    """The client leaves while the server re-reads an upstream's changed tools: that read ends with the upstream's
    stop, which is no failure to report."""
    errlog = tmp_path / "stderr"
    env = {**os.environ, "MCP_CLI_CACHE_DIR": str(tmp_path)}
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "mcp_cli", "serve", str(world)], cwd=ROOT, env=env
    )
    with errlog.open("w") as stream:
        async with mcp.Client(stdio_client(params, errlog=stream), mode="legacy") as client:
            assert (await call(client, "helper", "burst"))[0]  # its listing again now takes 0.3 s: under way as we go
    said = errlog.read_text()
    assert "reading them failed" not in said and "Traceback" not in said


async def test_a_2026_upstreams_question_reaches_the_client(world, era):
    asker = Client()
    async with served("serve", str(world), **asker.options(era)) as client:
        ok, said = await call(client, "helper26", "ask-2026")
        assert ok and said == "hello Ada Lovelace (2026)"
        assert asker.asked[0].message == "What is your name (2026)?"
        ok, said = await call(client, "helper", "ask")  # the handshake-era upstream of the same server
        assert ok and said == "hello Ada Lovelace"


def test_run_refuses_elicitation_without_a_terminal(world):
    proc = subprocess.run(
        [sys.executable, "-m", "mcp_cli", "run", str(world), "--", "helper", "ask"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=budget(120),
    )
    assert proc.returncode != 0
    assert "the tool asked for form elicitation ('What is your name?', fields: name)" in proc.stderr
    assert "stdin is not a terminal" in proc.stderr


def test_run_asks_on_a_terminal(world):
    primary, secondary = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcp_cli", "run", str(world), "--", "helper", "ask"],
        stdin=secondary,
        stderr=secondary,
        stdout=subprocess.PIPE,
        text=True,
    )
    os.close(secondary)
    seen, deadline = b"", time.monotonic() + budget(60)
    while b"(string) *: " not in seen and time.monotonic() < deadline:
        if select.select([primary], [], [], 0.1)[0]:
            seen += os.read(primary, 4096)
    assert b"What is your name?" in seen
    os.write(primary, b"Grace\n")
    out, _ = proc.communicate(timeout=budget(60))
    os.close(primary)
    assert proc.returncode == 0 and out.strip() == "hello Grace"


def test_run_shows_progress_on_a_terminal(world):
    primary, secondary = pty.openpty()
    argv = ["everything", "trigger-long-running-operation", "--duration", "1", "--steps", "2"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcp_cli", "run", str(world), "--", *argv],
        stdin=subprocess.DEVNULL,
        stderr=secondary,
        stdout=subprocess.PIPE,
        text=True,
    )
    os.close(secondary)
    seen = b""
    while proc.poll() is None or select.select([primary], [], [], 0)[0]:
        if select.select([primary], [], [], 0.1)[0]:
            try:
                seen += os.read(primary, 4096)
            except OSError:  # the terminal closed with the process
                break
    os.close(primary)
    assert proc.wait(timeout=budget(60)) == 0, seen
    assert b"progress 1/2" in seen and b"progress 2/2" in seen
    assert "Long running operation completed" in proc.stdout.read()


async def test_a_2026_client_with_roots_gives_the_working_folder(tmp_path):
    project = tmp_path / "project"
    project.mkdir()

    async def list_roots(context) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=project.as_uri())])

    async with served("serve", str(WORKDIR), cwd=ROOT, list_roots_callback=list_roots) as client:  # the 2026 default
        assert client.protocol_version == "2026-07-28"
        result = await client.call_tool("workdir", {"argv": ["where"]})
        assert not result.is_error, text(result)
        assert f"cwd={project}" in text(result)


async def test_without_roots_the_hosts_folder(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    async with served("serve", str(WORKDIR), cwd=ROOT, env={"CLAUDE_PROJECT_DIR": str(project)}) as client:
        result = await client.call_tool("workdir", {"argv": ["where"]})
        assert f"cwd={project}" in text(result)


async def test_through_the_meta_surface(world, era):
    asker = Client()
    async with served("serve", str(world), "--surface", "meta", **asker.options(era)) as client:

        async def run(name: str, **arguments) -> str:
            got = await client.call_tool(
                "call_tool", {"name": name, "arguments": arguments}, progress_callback=asker.on_progress
            )
            assert not got.is_error, text(got)
            return text(got)

        assert "Ada Lovelace" in await run("everything trigger-elicitation-request")
        assert "a sampled haiku" in await run("everything trigger-sampling-request", prompt="a haiku")
        assert "completed" in await run("everything trigger-long-running-operation", duration=1, steps=2)
        assert [(p, t) for p, t, _ in asker.progress] == [(1, 2), (2, 2)]
        assert "# Research Report: go" in await run("everything simulate-research-query", topic="go")


async def test_over_streamable_http(world, era):
    """The back-channel of an HTTP request (handshake era) and `input_required` over HTTP (2026)."""
    from mcp import Client as McpClient

    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "mcp_cli", "serve", str(world), "--http", f"127.0.0.1:{port}"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, server)
        asker = Client()
        async with McpClient(f"http://127.0.0.1:{port}/mcp", **asker.options(era)) as client:
            assert await call(client, "helper", "ask") == (True, "hello Ada Lovelace")
            assert await call(client, "helper26", "ask-2026") == (True, "hello Ada Lovelace (2026)")
            ok, said = await call(
                client,
                "everything",
                "trigger-long-running-operation",
                "--duration",
                "1",
                "--steps",
                "2",
                progress_callback=asker.on_progress,
            )
            assert ok and [(p, t) for p, t, _ in asker.progress] == [(1, 2), (2, 2)]
    finally:
        server.terminate()
        server.wait(timeout=budget(30))
