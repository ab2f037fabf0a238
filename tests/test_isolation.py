"""No secret out, no stall: what one client sends cannot read the server's environment or another scope's token, and
cannot keep the server from answering everyone else.

Real server processes: a config wrapping the reference `everything` server (whose `get-env` tool answers its own
environment) served over HTTP with two scopes (one tool, meta-tools, OpenAPI) and over stdio, and a tree of scripts
whose time limit is short. The server's environment holds canaries: the scopes' tokens, the server's own token and an
MCP_CLI_ setting; no answer may carry any of them, whatever jq filter, command or wrapped tool a client tries.
"""

import json
import os
import signal
import subprocess
import sys
import time

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from mcp_cli.testing import call, served

from .conftest import NODE_BIN, budget
from .test_http_security import environment, server

pytestmark = pytest.mark.anyio

CANARIES = {"A_TOKEN": "scope-a-canary-7f3e", "B_TOKEN": "scope-b-canary-91d2", "MCP_CLI_CANARY": "setting-canary-5c"}
SCOPES = """
[[scope]]
name = "a"
token_env = "A_TOKEN"
paths = ["everything *"]

[[scope]]
name = "b"
token_env = "B_TOKEN"
paths = ["everything echo", "everything get-env"]
"""
# Every way jq has of reaching out of its input: the environment, other inputs, modules, files, its own location.
FILTERS = [
    "env",
    "$ENV",
    "env.A_TOKEN",
    "$ENV.MCP_CLI_TOKEN",
    '"\\(env)"',
    'env | getpath(["A_TOKEN"])',
    "$ENV | to_entries",
    "env | tostream",
    "[env[]]",
    '@sh "\\($ENV)"',
    "[inputs]",
    "input",
    "input_filename",
    "$__loc__",
    "get_search_list",
    '"x" | ltrimstr(env.A_TOKEN)',
    'import "a" as $a; .',
    'include "/proc/self/environ"; .',
    'import "/proc/self/environ" as $e; $e',
    "debug | env",
    "stderr | $ENV",
    "$__prog_args",
]


def leaked(*answers: object) -> list[str]:
    """The canaries any of the answers (text or JSON) carries."""
    said = json.dumps([a if isinstance(a, str) else json.dumps(a, default=str) for a in answers])
    return [value for value in CANARIES.values() if value in said]


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("isolation")
    (root / "team.json").write_text(
        json.dumps(
            {
                "mcpServers": {
                    "everything": {"command": str(NODE_BIN / "mcp-server-everything")},
                }
            }
        )
    )
    (root / "scopes.toml").write_text(SCOPES)
    script = "import json, os; print(json.dumps(dict(os.environ)))"
    (root / "slow.json").write_text(
        json.dumps(
            {
                "format": "mcp-cli/tree",
                "version": 1,
                "settings": {"timeout": 3},
                "root": {
                    "kind": "group",
                    "name": "slow",
                    "summary": "Scripts under a short time limit.",
                    "children": [
                        {
                            "kind": "command",
                            "name": "environment",
                            "summary": "Print the script's environment as JSON.",
                            "handler": {"kind": "subprocess", "command": ["{python}", "-c", script], "inherit": ["*"]},
                        },
                    ],
                },
            }
        )
    )
    env = environment(**CANARIES, MCP_CLI_CACHE_DIR=str(root / "cache"))
    return {"root": root, "env": env}


@pytest.fixture(scope="module")
def scoped(world):
    command = [sys.executable, "-m", "mcp_cli", "serve", str(world["root"] / "team.json")]
    with server(
        command, "127.0.0.1", "127.0.0.1", "--scopes", str(world["root"] / "scopes.toml"), env=world["env"]
    ) as (url, proc):
        yield url


@pytest.fixture(scope="module")
def scoped_meta(world):
    command = [sys.executable, "-m", "mcp_cli", "serve", str(world["root"] / "team.json"), "--surface", "meta"]
    with server(
        command,
        "127.0.0.1",
        "127.0.0.1",
        "--scopes",
        str(world["root"] / "scopes.toml"),
        "--stateless",
        env=world["env"],
    ) as (url, proc):
        yield url


def connect(url: str, token: str):
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=budget(60))
    return http, Client(streamable_http_client(url, http_client=http))


async def test_no_jq_filter_reads_the_environment_on_the_one_tool(scoped):
    """Scope b, which may run only `echo` and `get-env`, pipes get-env's answer (the wrapped server's environment)
    through every filter: neither that environment nor jq's holds a token or the server's settings."""
    http, client = connect(scoped, CANARIES["B_TOKEN"])
    async with http, client:
        whole = await call(client, "everything", "get-env")
        assert whole.ok and "PATH" in whole.text and not leaked(whole.text, whole.structured)
        for jq in FILTERS:
            reply = await call(client, command=f"everything get-env | jq '{jq}'")
            assert not leaked(reply.text, reply.structured), jq
        bare = await call(client, command="everything get-env | jq env")
        assert bare.ok and json.loads(bare.text) == {}  # jq's environment is empty


async def test_no_jq_filter_reads_the_environment_through_meta_call_tool(scoped_meta):
    http, client = connect(scoped_meta, CANARIES["B_TOKEN"])
    async with http, client:
        for jq in FILTERS:
            result = await client.call_tool("call_tool", {"name": "everything get-env", "then": f"jq '{jq}'"})
            texts = [c.text for c in result.content if c.type == "text"]
            assert not leaked(*texts, result.structured_content), jq


def test_no_jq_filter_reads_the_environment_on_openapi(scoped):
    base = scoped.removesuffix("/mcp")
    for token in (CANARIES["A_TOKEN"], CANARIES["B_TOKEN"]):
        for jq in FILTERS:
            answer = httpx2.post(
                f"{base}/run",
                json={"command": f"everything get-env | jq '{jq}'"},
                headers={"Authorization": f"Bearer {token}"},
                timeout=budget(60),
            )
            assert answer.status_code == 200, answer.text
            body = answer.json()
            assert not [v for v in leaked(body) if v != token], jq  # its own token it sent; no other


async def test_no_script_nor_stdio_stage_reads_the_server_s_token(world):
    """Over stdio, with the server's own token set too: a script that inherits everything (`inherit: ["*"]`) and a
    wrapped server's get-env see neither it nor the scopes' variables once they serve as tokens elsewhere."""
    env = {**CANARIES, "MCP_CLI_TOKEN": "server-token-canary-2b"}
    async with served("serve", str(world["root"] / "slow.json"), env=env) as client:
        reply = await call(client, "environment")
        assert reply.ok and "PATH" in json.loads(reply.text)
        assert "server-token-canary-2b" not in reply.text and CANARIES["MCP_CLI_CANARY"] not in reply.text
        for jq in FILTERS:
            piped = await call(client, command=f"environment | jq '{jq}'")
            assert "server-token-canary-2b" not in piped.text and not leaked(piped.text, piped.structured), jq


async def test_a_runaway_stage_neither_stalls_others_nor_outlives_its_time_limit(world):
    """While one client's jq loops for ever and another's search reads a 64,000-character word, a third client's
    `--help` is answered first; the runaway ends as a `timeout` of its own, and the server goes on serving."""
    source = str(world["root"] / "slow.json")
    async with served("serve", source) as runaway, served("serve", source) as other:
        order: list[str] = []

        async def loop() -> None:
            reply = await call(runaway, command="environment | jq 'last(range(1e11))'")
            order.append("runaway")
            assert not reply.ok and reply.structured["error"] == "timeout", reply.text
            assert "within 3 s" in reply.text

        async with anyio.create_task_group() as tg:
            tg.start_soon(loop)
            await anyio.sleep(0.5)
            assert (await call(other, "--help")).ok
            order.append("help")
        assert order == ["help", "runaway"]
        again = await call(runaway, command="environment | jq 'keys | length'")
        assert again.ok and int(again.text) > 0


async def test_a_long_word_and_a_backtracking_pattern_do_not_hold_the_server(scoped):
    http, client = connect(scoped, CANARIES["A_TOKEN"])
    async with http, client:
        for word in ["a" * 64_000, "'a" * 32_000, "1/" * 32_000]:
            reply = await call(client, "search", word)
            assert reply.ok, reply.text[:300]
        reply = await call(client, command="everything get-env | jq '[.PATH | test(\"(a*)*b\")]'")
        assert reply.ok


def test_sigterm_stops_a_server_running_a_runaway_filter(world):
    """SIGTERM stops the server while a filter runs (the event loop is free; the worker process dies with it)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcp_cli", "serve", str(world["root"] / "slow.json")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "slow", "arguments": {"command": "environment | jq 'last(range(1e11))'"}},
        },
    ]
    assert proc.stdin is not None and proc.stdout is not None
    for message in messages:
        proc.stdin.write((json.dumps(message) + "\n").encode())
        proc.stdin.flush()
        if "id" in message and message["id"] == 1:
            proc.stdout.readline()
    workers = _workers_of(proc.pid)
    assert workers, "the filter runs in a worker process"
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=budget(30)) is not None
    for pid in workers:
        assert _ended(pid), f"worker {pid} outlived its server"


def _workers_of(pid: int) -> list[int]:
    """The jq worker processes a server started (waited for a while)."""
    for _ in range(400):
        found = subprocess.run(["pgrep", "-P", str(pid), "-f", "jq_worker"], capture_output=True, text=True).stdout
        if found.split():
            return [int(p) for p in found.split()]
        time.sleep(0.05)
    return []


def _ended(pid: int) -> bool:
    for _ in range(400):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every process's /proc entries")
def test_an_http_server_s_environment_is_not_readable_from_proc(scoped, world):
    """A wrapped server (any process of the same user) cannot read the tokens from /proc/PID/environ."""
    pids = subprocess.run(["pgrep", "-f", str(world["root"] / "team.json")], capture_output=True, text=True).stdout
    [pid] = [int(p) for p in pids.split() if int(p) != os.getpid()][:1]
    with pytest.raises(PermissionError):
        open(f"/proc/{pid}/environ", "rb").read()
