"""End to end: the server as a subprocess, driven by a real MCP client session over stdio."""

import json
import re
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from mcp_cli.result import META, tokens
from mcp_cli.testing import Reply, call, envelope

from .conftest import DEMO, FAULTS, RawClient, budget, served, text

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
async def faults():
    async with served("serve", str(FAULTS)) as client:
        yield client


@pytest.fixture(scope="module")
async def demo():
    async with served("serve", str(DEMO)) as client:
        yield client


async def test_exactly_one_tool_named_after_the_root(demo):
    tools = (await demo.list_tools()).tools
    assert [t.name for t in tools] == ["demo"]
    tool = tools[0]
    assert set(tool.input_schema["properties"]) == {"argv", "command"}
    assert "text, math, files" in tool.description and "--help" in tool.description


@pytest.mark.parametrize(
    "argv, start, listed",
    [
        (["--help"], "demo - A small toolkit", ["text", "math", "files"]),
        (["text"], "demo text - Transform and measure text.", ["upper", "stats", "repeat"]),
        (["files", "list", "--help"], "Usage:\n  demo files list ", ["List the entries", "--pattern GLOB", "--kind"]),
    ],
)
async def test_help_at_every_level(demo, argv, start, listed):
    result = await demo.call_tool("demo", {"argv": argv})
    assert not result.is_error
    out = text(result)
    assert out.startswith(start)
    assert all(word in out for word in listed)
    assert envelope(result)["ok"] is True


async def test_python_handler_runs(demo):
    result = await demo.call_tool("demo", {"command": "math add 40 2"})
    assert not result.is_error
    assert envelope(result)["data"] == 42
    assert envelope(result)["command"] == "demo math add"


async def test_python_handler_output_and_prints_are_captured(faults):
    result = await faults.call_tool("faults", {"argv": ["py", "chatty", "ada"]})
    assert not result.is_error
    assert text(result).startswith("hello ada\n")
    assert envelope(result)["data"] == {"greeted": "ada"}


async def test_subprocess_handler_runs(demo, tmp_path):
    (tmp_path / "b.txt").write_text("b")
    (tmp_path / "a.txt").write_text("a")
    (tmp_path / "sub").mkdir()
    result = await demo.call_tool("demo", {"argv": ["files", "ls", str(tmp_path), "--kind", "file"]})
    assert not result.is_error
    assert text(result).split() == ["a.txt", "b.txt"]
    assert envelope(result)["exit_code"] == 0


async def test_typed_values_reach_the_handler(faults):
    argv = [
        "py",
        "typed",
        "--count",
        "3",
        "--ratio",
        "2.5",
        "--mode",
        "slow",
        "--tag",
        "a",
        "--tag",
        "b",
        "--config",
        '{"k": [1, 2]}',
        "-vv",
        "--dry-run",
        "--no-color",
    ]
    result = await faults.call_tool("faults", {"argv": argv})
    assert not result.is_error, text(result)
    assert envelope(result)["data"] == {
        "count": 3,
        "ratio": 2.5,
        "mode": "slow",
        "tags": ["a", "b"],
        "config": {"k": [1, 2]},
        "verbose": 2,
        "dry_run": True,
        "color": False,
    }


ERRORS = [
    # (arguments, error kind, words the message must contain, usage marker that must be shown)
    ({"argv": ["nope"]}, "not_found", ["has no domain `nope`"], "Domains:"),
    ({"argv": ["txt", "upper", "a"]}, "not_found", ["Did you mean `text`?"], "Domains:"),
    ({"argv": ["text", "uper", "a"]}, "not_found", ["has no command `uper`", "Did you mean `upper`?"], "Commands:"),
    ({"argv": ["files", "list", "--knd", "dir"]}, "usage", ["unknown option --knd", "`--kind`"], "Usage:"),
    ({"argv": ["text", "repeat"]}, "usage", ["required", "TEXT"], "Usage:"),
    ({"argv": ["math", "add", "1", "two"]}, "usage", ["invalid integer value: 'two'"], "Usage:"),
    # every number read from argv is read by one function: no ValueError (an error of code 0) for digits of another
    # script, `²` (a digit to isdigit(), none to int()) or more digits than Python reads
    ({"argv": ["math", "add", "²", "3"]}, "usage", ["'²'; give a whole number in the digits 0-9"], "Usage:"),
    ({"argv": ["math", "add", "١٢", "3"]}, "usage", ["'١٢'; write it in the digits 0-9: 12"], "Usage:"),
    ({"argv": ["math", "add", "1", "9" * 5000]}, "usage", ["5,000 digits, more than the 4,300"], "Usage:"),
    ({"argv": ["--budget", "²", "--help"]}, "usage", ["--budget takes a number of tokens", "not '²'"], "8000"),
    ({"argv": ["--budget", "9" * 5000, "--help"]}, "usage", ["it has 5,000 digits"], "give a smaller one"),
    ({"argv": ["--more", "k7Qx2m:١٢", "math"]}, "usage", ["write it in the digits 0-9: 12"], "--more k7Qx2m:41"),
    ({"argv": ["--more", "k7Qx2m:" + "4" * 5000, "math"]}, "usage", ["it has 5,000 digits"], "FROM counts from 1"),
    ({"command": "math add 1 2 | head ²"}, "usage", ["`head` takes one count", "not '²'"], "demo CMD | head 3"),
    ({"command": "math add 1 2 | tail -" + "9" * 5000}, "usage", ["it has 5,000 digits"], "demo CMD | tail 3"),
    ({"argv": ["files", "list", "--kind", "pipe"]}, "usage", ["invalid choice: 'pipe'"], "--kind {file,dir,any}"),
    ({"argv": ["--help"], "command": "--help"}, "bad_request", ["not both"], '{"argv": ["--help"]}'),
    ({}, "bad_request", ["give `argv`"], '{"command": "--help"}'),
    ({"command": "text upper 'unclosed"}, "bad_request", ["cannot split", "character 12"], "send `argv`"),
    ({"command": "text upper a\\"}, "bad_request", ["ends with a backslash"], "send `argv`"),
    ({"argv": "text"}, "bad_request", ['`argv` must be a list of strings, not "text"'], '{"argv": ["--help"]}'),
    ({"argv": ["text"], "extra": 1}, "bad_request", ["unknown field(s) 'extra'"], '{"argv": ["--help"]}'),
]


@pytest.mark.parametrize("arguments, kind, words, usage", ERRORS)
async def test_errors_teach_and_the_server_keeps_serving(demo, arguments, kind, words, usage):
    result = await demo.call_tool("demo", arguments)
    assert result.is_error
    out = text(result)
    assert out.startswith("Error: ")
    assert all(w in out for w in words), out
    assert usage in out
    assert envelope(result)["error"] == kind
    again = await demo.call_tool("demo", {"argv": ["math", "add", "1", "1"]})
    assert not again.is_error and text(again).strip() == "2"


async def test_a_null_field_counts_as_not_given(demo):
    """Models often send the field they do not use as null."""
    for arguments in ({"argv": None, "command": "math add 1 1"}, {"argv": ["math", "add", "1", "1"], "command": None}):
        result = await demo.call_tool("demo", arguments)
        assert not result.is_error and text(result).strip() == "2"
    both_null = await demo.call_tool("demo", {"argv": None, "command": None})
    assert both_null.is_error and "give `argv`" in text(both_null)


async def test_an_empty_unused_field_counts_as_not_given(demo):
    """Models also fill the field they do not use with `[]` or `""`."""
    for arguments in (
        {"argv": [], "command": "math add 1 1"},
        {"argv": ["math", "add", "1", "1"], "command": ""},
        {"argv": ["math", "add", "1", "1"], "command": "  "},
    ):
        result = await demo.call_tool("demo", arguments)
        assert not result.is_error and text(result).strip() == "2", arguments
    both = await demo.call_tool("demo", {"argv": ["math", "add", "1", "1"], "command": "math add 2 2"})
    assert both.is_error and "not both" in text(both)


async def test_an_unclosed_quote_is_told_where_and_how_to_quote(demo):
    command = "text upper What's up"
    failed = await demo.call_tool("demo", {"command": command})
    assert failed.is_error and envelope(failed)["error"] == "bad_request"
    message = text(failed)
    assert f"the ' at character {command.index(chr(39)) + 1} (in `What's`)" in message
    assert "double quotes" in message and "`argv`" in message and "No closing quotation" not in message
    quoted = await demo.call_tool("demo", {"command": 'text upper "What\'s up"'})  # done as it says
    assert not quoted.is_error and text(quoted).strip() == "WHAT'S UP"


async def test_missing_required_option_names_it(faults):
    result = await faults.call_tool("faults", {"argv": ["py", "typed", "--ratio", "1"]})
    assert result.is_error and envelope(result)["error"] == "usage"
    assert "the following arguments are required: --count" in text(result)
    assert "faults py typed --count INT" in text(result)


FAULTS_CASES = [
    (["py", "boom", "--reason", "disk on fire"], "handler", ["`faults py boom` failed", "RuntimeError: disk on fire"]),
    (["py", "hang"], "timeout", ["did not finish within 2 s"]),
    (["py", "missing"], "handler", ["cannot load handler no_such_module:nothing"]),
    (["sh", "hang"], "timeout", ["did not finish within 2 s", "stopped; what it wrote by then follows", "waiting"]),
    (["sh", "fail"], "exit", ["exited with status 1", "it broke", "partial"]),
    (["sh", "absent"], "handler", ["cannot start", "no-such-program-here"]),
]


@pytest.mark.parametrize("argv, kind, words", FAULTS_CASES)
async def test_failing_handlers_give_clear_errors(faults, argv, kind, words):
    result = await faults.call_tool("faults", {"argv": argv})
    assert result.is_error
    out = text(result)
    assert "Traceback" not in out
    assert all(w in out for w in words), out
    assert envelope(result)["error"] == kind
    again = await faults.call_tool("faults", {"argv": ["py", "chatty", "x"]})
    assert not again.is_error


@pytest.mark.parametrize("group", ["py", "sh"])
async def test_output_over_the_cap_is_cut_with_a_note(faults, group):
    result = await faults.call_tool("faults", {"argv": [group, "flood"]})
    assert not result.is_error
    out = text(result)
    assert "[cut to the 500-token budget: characters 1-" in out and " of 5,000,000 shown" in out
    assert out.startswith(("x" if group == "py" else "y") * 800) and tokens(out) <= 500  # the tree's budget
    assert re.search(r"Next part: `faults --more \w+:\d+ " + group + " flood`", out)


def alive(pid: int) -> bool:
    """Whether process `pid` runs (a zombie does not: it was killed and awaits reaping)."""
    state = subprocess.run(["ps", "-o", "stat=", "-p", str(pid)], capture_output=True, text=True).stdout.strip()
    return bool(state) and not state.startswith("Z")


async def pids_of(client, pidfile: Path, *argv: str) -> tuple[list[int], Reply]:
    """Call `argv PIDFILE`, a command that writes pids to PIDFILE and goes on; those pids, each checked running
    while the call was under way, and the reply."""
    replies: list[Reply] = []

    async def run() -> None:
        replies.append(await call(client, *argv, pidfile))

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        while not (pidfile.exists() and pidfile.read_text().endswith("\n")):
            assert not replies, f"the command ended without writing its pids: {replies[0].text}"
            await anyio.sleep(0.05)
        pids = [int(p) for p in pidfile.read_text().split()]
        assert pids and all(alive(p) for p in pids), pids
    return pids, replies[0]


async def test_hung_subprocess_and_its_children_are_killed(faults, tmp_path):
    pids, reply = await pids_of(faults, tmp_path / "pids", "sh", "hang")
    assert len(pids) == 2 and reply.structured["error"] == "timeout"  # the shell, and the child it put behind
    assert not any(alive(p) for p in pids)


async def test_a_command_that_exits_is_answered_though_what_it_left_running_holds_its_output(faults, tmp_path):
    (child,), reply = await pids_of(faults, tmp_path / "pids", "sh", "linger")
    assert "error" not in reply.structured and reply.text.startswith("started\n\n[stderr]\n")  # not its 1 s timeout
    assert "kept its output open, and was stopped" in reply.text
    assert not alive(child)


async def test_long_stderr_keeps_its_end_with_a_note(faults):
    result = await faults.call_tool("faults", {"argv": ["sh", "noisy"]})
    stderr = text(result).split("[stderr]\n", 1)[1].rstrip("\n")  # the text: output, then stderr
    assert stderr.startswith("[stderr cut: its last 2,000 characters of 50,007 bytes]\n")
    assert stderr.endswith("zzzTHE END") and len(stderr) < 2_100


async def test_shell_metacharacters_arrive_as_literal_tokens(faults, tmp_path):
    marker = tmp_path / "pwned"
    command = (
        f"sh echo 'a;b' '$(touch {marker})' '`touch {marker}`' 'x|y' \"line1\nline2\" "
        f"';' touch {marker} '|' cat '&&' touch {marker} > {marker}"
    )
    result = await faults.call_tool("faults", {"command": command})
    assert not result.is_error, text(result)
    assert json.loads(text(result)) == [
        "a;b",
        f"$(touch {marker})",
        f"`touch {marker}`",
        "x|y",
        "line1\nline2",
        ";",
        "touch",
        str(marker),
        "|",
        "cat",
        "&&",
        "touch",
        str(marker),
        ">",
        str(marker),
    ]
    # an unquoted `|` joins pipeline stages (README: Pipelines), and `;` and `&&` commands (a sequence), each a
    # command of the tree or a built-in, never a shell: `cat` and `touch` are neither, so nothing runs
    piped = await faults.call_tool("faults", {"command": f"sh echo x | cat && touch {marker}"})
    assert piped.is_error and "[1/2] sh echo x | cat: stage 2 (cat)" in text(piped)
    chained = await faults.call_tool("faults", {"command": f"sh echo x ; touch {marker}"})
    assert chained.is_error and "[2/2] touch" in text(chained) and "has no domain `touch`" in text(chained)
    assert not marker.exists()


async def test_argv_tokens_are_passed_verbatim(faults):
    tokens = ["--weird", "$HOME", "*", "'quoted'", ""]
    result = await faults.call_tool("faults", {"argv": ["sh", "echo", *tokens]})
    assert json.loads(text(result)) == tokens


async def test_the_tool_name_repeated_in_argv_is_accepted(demo):
    result = await demo.call_tool("demo", {"command": "demo math add 1 2"})
    assert text(result).strip() == "3"


async def test_unknown_tool_name_is_an_error(demo):
    result = await demo.call_tool("pdf", {"argv": ["--help"]})
    assert result.is_error and text(result) == "Error: no tool named 'pdf'; this server has one tool, 'demo'.\n"
    assert result.meta[META] == {"ok": False, "command": "demo", "error": "not_found"}  # the envelope, as any failure


async def test_unknown_tool_name_on_the_meta_surface_is_a_not_found():
    async with served("serve", str(DEMO), "--surface", "meta") as client:
        result = await client.call_tool("pdf", {"argv": ["--help"]})
        assert result.is_error and text(result).startswith("Error: no tool named 'pdf'; the tools are search_tools")
        assert envelope(result)["error"] == "not_found"


async def test_subprocess_cwd_is_relative_to_the_tree(faults):
    result = await faults.call_tool("faults", {"argv": ["sh", "pwd"]})
    assert Path(text(result).strip()) == FAULTS.parent


def _call(raw: RawClient, argv: list[str]) -> dict:
    return raw.request("tools/call", {"name": "faults", "arguments": {"argv": argv}})["result"]


def test_stdout_stays_clean_for_the_protocol():
    """Everything the server prints on stdout must be JSON-RPC: a handler's print goes into its result."""
    raw = RawClient(str(FAULTS))
    assert _said(_call(raw, ["py", "chatty", "zed"])).startswith("hello zed")
    assert raw.close() == 0
    assert raw.pending + raw.proc.stdout.read() == b""


def test_server_exits_when_the_client_leaves_even_with_a_hung_handler():
    raw = RawClient(str(FAULTS))
    assert _call(raw, ["py", "hang"])["isError"] is True
    assert raw.close() == 0  # the abandoned thread (sleeping 30 s) does not hold the process


def _said(result: dict) -> str:
    """The text a raw tools/call result carries."""
    return "".join(c["text"] for c in result["content"] if c["type"] == "text")


def _env(result: dict) -> dict:
    """What a raw one-tool result says besides its text (`_meta`, see `Result.to_mcp`)."""
    return result["_meta"][META]


def _kind(result: dict) -> str:
    assert result["isError"] is True
    return _env(result)["error"]


def test_every_request_is_answered_with_a_documented_kind():
    """What the SDK cannot read, and what no command line can carry, still gets an answer; the server goes on."""
    raw = RawClient(str(FAULTS))
    call = '{"jsonrpc": "2.0", "id": %s, "method": "tools/call", "params": {"name": "faults", "arguments": %s}}'
    raw.send(call % (11, '{"argv": ["sh", "echo", "\\ud800"]}'))  # a lone surrogate: not valid JSON text
    surrogate = raw.reply(11)["result"]
    assert _kind(surrogate) == "bad_request" and "lone surrogate" in surrogate["content"][0]["text"]
    raw.send(call % (12, '{"argv": ["sh"], "x": %s}' % ("[" * 2000 + "]" * 2000)))
    deep = raw.reply(12)["result"]
    assert _kind(deep) == "bad_request" and "too deeply" in _said(deep)
    raw.send('{"jsonrpc": "2.0", "id": 13, "method": "tools/list", "params": {')  # cut short
    assert raw.reply(13)["error"]["code"] == -32700
    raw.send("this is not JSON")
    assert raw.reply(None)["error"]["code"] == -32700  # JSON-RPC: an unnamed request's error has a null id
    raw.send('{"jsonrpc": "2.0", "id": 14, "method": "ping", "\\x": 1, ')  # a key with a bad escape, cut short
    assert raw.reply(14)["error"]["code"] == -32700
    raw.send('{"jsonrpc": "2.0", "id": "\\udc00", "method": "ping"}')  # an id JSON cannot carry back
    assert "lone surrogate" in raw.reply(None)["error"]["message"]
    raw.send('{"jsonrpc": "2.0", "id": "\\udc00", "method": "tools/call", "params": {"name": "faults"}}')  # a call too
    assert "lone surrogate" in raw.reply(None)["error"]["message"]  # no result: it could not name the request
    raw.send('{"jsonrpc": "1.0", "method": "notifications/x"}')  # a broken notification: nobody waits
    raw.send("[]")
    assert raw.reply(None)["error"]["code"] == -32600  # the first null-id answer is this one's, not the above's
    raw.send('{"jsonrpc": "1.0", "id": 15, "method": "ping"}')
    assert raw.reply(15)["error"] == {
        "code": -32600,
        "message": "Error: the request is not a valid MCP request (jsonrpc: Input should be '2.0').",
    }
    nul = _call(raw, ["sh", "echo", "a\0b"])
    assert _kind(nul) == "bad_request" and "argv[2] holds a NUL" in _said(nul)
    too_deep = _call(raw, ["py", "typed", "1", "0.5", "x", "--config", "[" * 150 + "]" * 150])
    assert _kind(too_deep) == "usage" and "deeper than 100 levels" in _said(too_deep)
    assert json.loads(_said(_call(raw, ["sh", "echo", "still", "here"]))) == ["still", "here"]
    assert raw.close() == 0


ODD_IDS = [1.5, 2.0, {"a": 1}, [1], True, False, None]  # JSON-RPC: a request's id is a string or a whole number


def test_a_request_whose_id_is_no_string_or_whole_number_is_an_invalid_request():
    """The SDK reads such a request as a notification and answers nothing, leaving the caller waiting; here it gets
    Invalid Request with a null id (JSON-RPC 2.0), and the server goes on."""
    raw = RawClient(str(FAULTS))
    for odd in ODD_IDS:
        raw.send(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": odd,
                    "method": "tools/call",
                    "params": {"name": "faults", "arguments": {"argv": ["--help"]}},
                }
            )
        )
        error = raw.reply(None)["error"]
        assert error == {
            "code": -32600,
            "message": f"Error: the request's id {json.dumps(odd)} is not a string or a "
            "whole number, which JSON-RPC requires of a request's id; send it again with one (a number "
            "that counts up, say).",
        }
    raw.send('{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1, "id": 1.5}}')
    raw.send('{"jsonrpc": "2.0", "id": 31, "method": "ping", "params": {"_meta": {"id": [1]}}}')  # nested: its own
    assert raw.reply(31)["result"] == {}  # the notification got no answer: this is the next line
    assert json.loads(_said(_call(raw, ["sh", "echo", "still", "here"]))) == ["still", "here"]
    assert raw.close() == 0


async def test_over_http_a_request_whose_id_is_no_string_or_whole_number_is_an_invalid_request():
    import httpx2
    from mcp import Client

    from .conftest import free_port, wait_for_port

    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcp_cli", "serve", str(DEMO), "--http", str(port), "--stateless"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, proc)
        url = f"http://127.0.0.1:{port}/mcp"
        headers = {"accept": "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18"}
        for odd in ODD_IDS:
            sent = {"jsonrpc": "2.0", "id": odd, "method": "tools/list"}
            answer = httpx2.post(url, json=sent, headers=headers, timeout=budget(30))  # was 202 Accepted, no answer
            assert answer.status_code == 400 and answer.json()["id"] is None, answer.text
            assert answer.json()["error"]["code"] == -32600 and json.dumps(odd) in answer.json()["error"]["message"]
        async with Client(url) as client:  # and it goes on serving
            assert text(await client.call_tool("demo", {"argv": ["math", "add", "1", "1"]})).strip() == "2"
    finally:
        proc.terminate()
        proc.wait(timeout=budget(10))


def test_a_message_too_long_to_hold_is_answered_and_the_server_goes_on():
    from mcp_cli.surfaces.stdio import LINE_LIMIT

    raw = RawClient(str(FAULTS))
    head = '{"jsonrpc": "2.0", "id": 21, "method": "tools/call", "params": {"name": "faults", "arguments": {"argv": ["'
    raw.send(head + "x" * 100_000_000 + '"]}}}')  # 100 MB
    size = len(head) + 100_000_000 + 5
    cut = raw.reply(21)["result"]
    assert _kind(cut) == "bad_request", cut
    assert _said(cut) == (
        f"Error: the request is too large ({size:,} bytes; a message may have {LINE_LIMIT:,}); send less, or put the "
        "data in a file and pass its path.\n"
    )
    raw.send('{"jsonrpc": "2.0", "id": 22, "method": "ping", "params": {"pad": "' + "y" * LINE_LIMIT + '"}}')
    assert "too large" in raw.reply(22)["error"]["message"]  # not a tool call: a JSON-RPC error, with its id
    assert json.loads(_said(_call(raw, ["sh", "echo", "still", "here"]))) == ["still", "here"]
    assert raw.close() == 0


def test_requests_from_a_file_are_answered(tmp_path):
    """Stdin that is a regular file, not a pipe, is read too (by the SDK's own files)."""
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "file", "version": "0"}}
    requests = tmp_path / "requests.jsonl"
    requests.write_text(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello}) + "\n")
    with requests.open() as stdin:
        out = subprocess.run(
            [sys.executable, "-m", "mcp_cli", "serve", str(FAULTS)],
            stdin=stdin,
            capture_output=True,
            text=True,
            timeout=budget(60),
        ).stdout
    assert json.loads(out)["result"]["serverInfo"]["name"] == "faults"


def test_output_json_cannot_carry_is_made_carriable():
    """A handler returning an undecodable file name (a lone surrogate) or data nested past what the wire
    carries still answers: the name with U+FFFD, the deep data as text only."""
    raw = RawClient(str(FAULTS))
    odd = _call(raw, ["py", "odd"])
    assert _env(odd)["data"] == {"files": ["caf\ufffd.txt"]}
    deep = _call(raw, ["py", "odd", "--depth", "300"])
    assert deep["isError"] is False and "data" not in _env(deep)
    assert _said(deep).startswith("[\n [\n  [\n")  # the text stays (cut at 1,000)
    assert raw.close() == 0


def test_the_docs_list_every_error_kind():
    """The kinds a result can carry are listed once (errors.KINDS) and the table of docs/tool.md says the same."""
    import re

    from mcp_cli.errors import KINDS

    page = (FAULTS.parents[3] / "docs" / "tool.md").read_text(encoding="utf-8")
    table = page.split("| Kind | What went wrong |", 1)[1].split("\n\n", 1)[0]
    assert re.findall(r"^\| `(\w+)` \| ", table, re.M) == list(KINDS)
