"""Results that survive: a script's binary stdout reaches `mcp-cli run`'s stdout byte for byte and an MCP client as
an embedded resource with its MIME type, never as U+FFFD; piped stdin reaches a script under `mcp-cli run`; a
100 MB upstream answer is answered within the call's timeout, and one over the message limit is refused for its
request, with its size."""

import base64
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import anyio
import pytest

from mcp_cli.handlers import stdio_client
from mcp_cli.result import tokens
from mcp_cli.testing import call

from .conftest import ROOT, budget, served, stop_daemons
from .skills import write_skill

pytestmark = pytest.mark.anyio
SERIAL = ROOT / "tests" / "fixtures" / "upstreams" / "serial.py"
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
SCRIPTS = {
    "png.py": '"""Write a tiny PNG to stdout."""\nimport sys\nsys.stdout.buffer.write(bytes.fromhex(sys.argv[1]))\n',
    "shout.py": '"""Read standard input and write it in capitals."""\nimport sys\n'
    "sys.stdout.write(sys.stdin.read().upper())\n",
    "latin.py": '"""Write Latin-1 bytes."""\nimport sys\nsys.stdout.buffer.write(b"caf\\xe9 \\x00\\x01")\n',
    "count.py": '"""Print numbered lines."""\nimport sys\nfor i in range(int(sys.argv[1])):\n'
    '    print(f"line {i:05d} of a long log")\n',
    "nest.py": '"""Print JSON nested N levels: lists, or objects with --objects."""\nimport sys\nn = int(sys.argv[1])\n'
    'print(\'{"a": \' * n + "1" + "}" * n if "--objects" in sys.argv else "[" * n + "1" + "]" * n)\n',
}
NEXT = re.compile(r"Next part: `(\S+ run \S+ -- (--more [^`]*))`")  # as a shell runs it: `mcp-cli run SOURCE -- ...`


@pytest.fixture
def skill(tmp_path):
    scripts = {f"scripts/{name}": text for name, text in SCRIPTS.items()}
    return write_skill(tmp_path / "bytes", "Scripts that write bytes.", scripts, body="# Bytes\n")


def run(*argv, stdin=b"", env=None):
    return subprocess.run(
        [sys.executable, "-m", "mcp_cli", "run", *map(str, argv)],
        input=stdin,
        capture_output=True,
        timeout=budget(60),
        env=env,
    )


def test_run_writes_a_scripts_bytes_as_they_were(skill):
    done = run(skill, "--", "png", PNG.hex())
    assert (done.returncode, done.stdout) == (0, PNG), done.stderr
    latin = run(skill, "--", "latin")
    assert latin.stdout == b"caf\xe9 \x00\x01"


@pytest.mark.parametrize("daemon", [False, True], ids=["in-process", "daemon"])
def test_a_scripts_text_into_a_pipe_is_an_answer_within_the_budget_read_on_with_more(skill, tmp_path, daemon):
    env = {**os.environ, "MCP_CLI_CACHE_DIR": str(tmp_path / "cache")}
    if daemon:  # `mcp-cli run`'s default: the keep-alive daemon, handed the caller's pipe (a short folder: sockets)
        folder = tempfile.mkdtemp(prefix="mcp-cli-rt-")
        env = {k: v for k, v in env.items() if k != "MCP_CLI_NO_DAEMON"} | {"MCP_CLI_RUNTIME_DIR": folder}
    try:
        _read_on_through_a_pipe(skill, env)
        if daemon:
            assert list(Path(folder).glob("*.sock"))  # the daemon answered
    finally:
        stop_daemons(env)


def _read_on_through_a_pipe(skill, env):
    whole = [f"line {i:05d} of a long log" for i in range(3000)]  # about 24,000 tokens: over the default budget
    first = run(skill, "--", "count", "3000", env=env)  # stdout is a pipe, as for an agent's shell tool
    assert first.returncode == 0, first.stderr
    text = first.stdout.decode()
    shown = [line for line in text.splitlines() if line.startswith("line ")]
    assert tokens(text) <= 8_000 and shown == whole[: len(shown)] and len(shown) < 3000
    assert f"[cut to the 8,000-token budget: lines 1-{len(shown):,} of 3,001 shown" in text
    printed, more = NEXT.search(text).groups()
    assert more.split()[2:] == ["count", "3000"]  # the call again, after --more ID:FROM
    assert printed.split()[1:3] == ["run", str(skill)]
    shell = {**env, "PATH": f"{Path(sys.executable).parent}:{env['PATH']}"}  # where `mcp-cli` is installed
    second = subprocess.run(printed, shell=True, capture_output=True, env=shell, timeout=budget(60))  # as printed
    assert second.returncode == 0, second.stderr
    after = [line for line in second.stdout.decode().splitlines() if line.startswith("line ")]
    assert after[:2] == whole[len(shown) : len(shown) + 2]  # read on where the first part stopped


DEEP = [
    ["nest", "1000"],
    ["nest", "1000", "--objects"],
    ["nest", "100000"],
    ["nest", "1000", "|", "head", "3"],
    ["nest", "1000", "|", "tail"],
    ["--format", "toon", "nest", "500"],
    ["--format", "table", "nest", "990"],
]


async def test_json_nested_past_what_python_reads_is_answered_as_text(skill):
    """JSON output 1,000 levels deep and more (past the recursion of json, TOON and the budget's fitting) is
    answered, as its text, within the budget and with a note when cut; before, the call lost its answer."""
    async with served("serve", str(skill)) as client:
        for argv in DEEP:
            reply = await call(client, *argv)
            assert reply.ok, (argv, reply.text[:300])
            start = '{"a": {"a": ' if "--objects" in argv else "[[["
            assert reply.text.startswith(start) and tokens(reply.text) <= 8_000, argv
        cut = await call(client, "nest", "100000")
        assert "[cut to the 8,000-token budget: characters 1-" in cut.text
        nxt = re.search(r"Next part: `bytes (--more [^`]*)`", cut.text).group(1)
        assert (await call(client, *nxt.split())).text.startswith("[[[")
    for argv in DEEP[:3]:
        done = run(skill, "--", *argv)
        assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr[-500:]


def test_piped_stdin_reaches_the_script_under_run(skill):
    done = run(skill, "--", "shout", stdin=b"hi there\n")
    assert (done.returncode, done.stdout) == (0, b"HI THERE\n"), done.stderr


async def test_binary_output_over_mcp_is_an_embedded_blob_with_its_mime_type(skill):
    async with served("serve", str(skill)) as client:
        reply = await call(client, "png", PNG.hex())
        assert reply.ok, reply.text
        said, item = reply.content
        assert said.text == f"[binary output: {len(PNG)} bytes (image/png), sent as an embedded resource]"
        assert item.type == "resource" and item.resource.mime_type == "image/png"
        assert base64.b64decode(item.resource.blob) == PNG
        latin = await call(client, "latin")
        assert latin.content[1].resource.mime_type == "application/octet-stream"
        assert base64.b64decode(latin.content[1].resource.blob) == b"caf\xe9 \x00\x01"
        assert "\ufffd" not in reply.text + latin.text + json.dumps(reply.structured)
        text = await call(client, "shout")  # text output stays text
        assert text.ok and [c.type for c in text.content] == ["text"]


async def test_a_100_mb_upstream_answer_is_answered_within_its_timeout(tmp_path):
    config = tmp_path / "big.json"
    entry = {"command": sys.executable, "args": [str(SERIAL)], "timeout": budget(20)}
    config.write_text(json.dumps({"mcpServers": {"big": entry}}))
    async with served("serve", str(config)) as client:
        reply = await call(client, "big", "big", "--mb", "100")
        assert reply.ok, reply.text[:500]
        assert "[cut to the 8,000-token budget: characters 1-" in reply.text and " of 100,000,000 shown" in reply.text
        assert "could not be kept for next parts: it is too big to keep" in reply.text and tokens(reply.text) <= 8_000


async def test_a_message_over_the_limit_is_refused_for_its_request():
    """The transport's reader, on a real process's stdout: lines come whole, and one over the limit comes as
    TooLarge, whose answer is an error for its request (its id first, as the Python SDK writes, or last, as the
    TypeScript SDK does)."""
    first = {"jsonrpc": "2.0", "id": 1, "result": {}}
    second = {"jsonrpc": "2.0", "id": 2, "result": {"x": "y" * 5000}}
    third = {"result": {"x": "y" * 5000}, "jsonrpc": "2.0", "id": "three"}
    code = "".join(f"print({json.dumps(json.dumps(m))})\n" for m in (first, second, third))
    async with await anyio.open_process([sys.executable, "-c", code]) as proc:
        got = [line async for line in stdio_client.lines(proc.stdout, limit=1000)]
    assert got[0] == b'{"jsonrpc": "2.0", "id": 1, "result": {}}'
    for line, request_id in zip(got[1:], (2, "three"), strict=True):
        assert isinstance(line, stdio_client.TooLarge) and line.size > 5000
        error = line.answer().message
        assert error.id == request_id and "bytes, over mcp-cli's limit" in error.error.message


async def test_a_python_handler_s_value_nested_past_the_recursion_limit_is_answered_as_json_text():
    """A Python handler's value 1,000 to 100,000 levels deep is written without recursion (it was an internal
    error, with a traceback in the log)."""
    from dataclasses import replace

    from mcp_cli.sources import loader
    from mcp_cli.testing import ainvoke

    from .conftest import FAULTS, budget

    tree = loader.load(str(FAULTS))  # its 2 s timeout is for the hang tests: writing 100,000 levels on a busy
    tree.settings = replace(tree.settings, timeout=budget(10))  # machine may take longer, and that is not the point
    for depth in (1000, 100000):
        result = await ainvoke(tree, ["py", "odd", "--depth", str(depth)])
        assert result.ok and result.error is None, result.text()[:300]
        assert result.output.lstrip().startswith("[[[") or result.output.lstrip().startswith('{"')
