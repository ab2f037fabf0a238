"""Reliability: generated calls over three surfaces, odd JSON-RPC ids, runaway filters, injected faults, concurrent
HTTP sessions and malformed skills, counted.

- generated calls: argv built from each tree's own names, flags and values, mutated and mixed with hostile tokens,
  hostile calls (jq filters that reach for the environment, files or modules; counts written in other scripts, over
  4,300 digits, negative, fractional or 1e309 to --budget, --more, head, tail and typed options; 64,000-character
  words to search; commands printing JSON nested 1,000 to 100,000 levels) and malformed tool arguments, sent to a
  skill tree, a tree of Python and subprocess handlers and a wrapped upstream over three surfaces: the one tool
  (a real MCP client over stdio), the meta-tools (search_tools, describe_tools and call_tool, the same calls as
  call_tool takes them; over stdio) and OpenAPI (POST /run with httpx, bodies that are not JSON among them); tools
  the server does not have, due a `not_found`. Counted per surface: answered, in the documented envelope (`ok`, a
  failure's `error` one of the documented kinds; no JSON-RPC error, no HTTP 500 or reset), internal errors,
  mcp-cli tracebacks (in answers and on the server's stderr), answers carrying a canary of the server's
  environment, server deaths, orphans;
- odd JSON-RPC ids: requests whose id is a fraction, an object, an array or a boolean, written raw to the stdio
  server's stdin; each due an Invalid Request error with id null;
- runaway filters: jq filters that would run for hours, each due a `timeout` while a `--help` sent meanwhile is
  answered first, on every surface;
- faults: upstreams that exit at start, crash at start, never initialise, print garbage on stdout, crash or
  hang mid-call; every call answered, the healthy upstream still serving, no process left after the server;
- concurrent HTTP: sessions at once against one server, each with its own arguments; none lost or crossed;
- malformed skills: every case of tests/malformed.py, placed with its symlinks, FIFOs or huge files, gives
  exactly the error or warnings it names.

`python -m bench.reliability` (2,000 generated calls over the three surfaces; `--long` for 10,000; `--argv N`). The
ideal of every count is stated beside it; tests/test_reliability.py runs it in CI.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import random
import re
import shlex
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import anyio

from mcp_cli.engine.schema import JSON_ALL
from mcp_cli.errors import KINDS
from mcp_cli.testing import envelope

from . import mark, own_cache, wait_for_port

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
AWKWARD = FIXTURES / "upstreams" / "awkward.py"
SLOW = {"hang", "freeze", "crash", "sleep", "linger", "flood", "big"}  # faults, measured apart from the argv run
TRACEBACK = re.compile(r'File "[^"]*[/\\]mcp_cli[/\\]')  # a frame of ours, shown to the caller
CALL_WAIT = 120.0  # seconds without an answer that count as a dead server (ample on a busy machine too)
ORPHAN_GRACE = 30.0  # seconds a child may take to go after its server (the same)


def running(marker: str) -> list[str]:
    """Command lines of live processes that mention `marker` (zombies do not count)."""
    out = subprocess.run(["ps", "-ww", "-eo", "stat=,args="], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if marker in line and not line.lstrip().startswith("Z")]


def orphans(marker: str, grace: float = ORPHAN_GRACE) -> int:
    """Processes marked `marker` still alive `grace` seconds after their server is gone."""
    deadline = time.monotonic() + grace
    while running(marker) and time.monotonic() < deadline:
        time.sleep(0.2)
    return len(running(marker))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


def _awkward_config(folder: Path, marker: str, servers: dict[str, dict[str, str]]) -> Path:
    """An MCP config of awkward upstreams, one per name, each with its environment (the faults it acts out)."""
    config = folder / f"{'-'.join(servers)}.json"
    entries = {
        name: {"command": sys.executable, "args": [str(AWKWARD), marker, name], "env": env, "timeout": 3}
        for name, env in servers.items()
    }
    config.write_text(json.dumps({"mcpServers": entries}))
    return config


# --- generated calls --------------------------------------------------------------------------------------

CANARIES = {  # in every server's environment; no answer may carry one (SOME_TOKEN is OpenAPI's bearer token)
    "MCP_CLI_TOKEN": f"canary-server-token-{uuid.uuid4().hex[:10]}",
    "MCP_CLI_CANARY": f"canary-setting-{uuid.uuid4().hex[:10]}",
    "SOME_TOKEN": f"canary-bearer-token-{uuid.uuid4().hex[:10]}",
}
TOKEN_ENV = "SOME_TOKEN"
NUMBERS = ["١٢", "²", "٣", "9" * 4301, "-1", "-40", "0.5", "2.5", "1e309", "-1e309", "0"]  # where a count is due
# jq filters that reach out of their input: the environment, other inputs, modules, files, their own location
FILTERS = [
    "env",
    "$ENV",
    "env.MCP_CLI_TOKEN",
    f"$ENV.{TOKEN_ENV}",
    '"\\(env)"',
    "$ENV | to_entries",
    "env | tostream",
    '@sh "\\($ENV)"',
    "[inputs]",
    "input",
    "input_filename",
    "$__loc__",
    "get_search_list",
    "$__prog_args",
    'import "a" as $a; .',
    'include "/proc/self/environ"; .',
    'import "/proc/self/environ" as $e; $e',
    "debug | env",
    "stderr | $ENV",
    "input_line_number",
]
RUNAWAY = ["last(range(1e11))", "reduce range(1e11) as $i (0; . + $i)", "first(range(1e11) | select(. < 0))"]
LONG_WORDS = ["a" * 64_000, "'a" * 32_000, "1/" * 32_000]  # to `search`, as one word
DEPTHS = [1_000, 1_500, 5_000, 100_000]  # levels of JSON a command prints
UNKNOWN_TOOLS = ["nope", "", "run", "search_tools ", "💥", "../call_tool", "x" * 300]
HOSTILE = [
    "",
    " ",
    "-",
    "--",
    "-h",
    "--help",
    "--help-all",
    "=",
    "--=",
    "-x",
    "--no-such-option",
    "--json",
    "@",
    "@/dev/zero",
    "@/etc/passwd",
    "@/no/such/file",
    "@.",
    "@/proc/self/environ",
    "{",
    '{"a":',
    "[" * 150 + "]" * 150,
    "-1",
    "0x10",
    "NaN",
    "null",
    "true",
    "[]",
    "{}",
    "$(id)",
    "`id`",
    "; rm -rf /",
    "%s%n",
    "a\0b",
    "\x1b[31mred",
    "\u202eevil",
    "ünïcödé",
    "💥",
    "\t\n",
    "../../etc/passwd",
    "~/x",
    "x" * 5000,
    "--" + "y" * 300,
    "-" * 50,
    "--pages=1-3",
    "--format",
    "-v",
    "-vvvv",
    "--no-verbose",
    "3.5",
    "1,2",
    "a b",
    "'",
    '"',
    "|",
    *NUMBERS,
]
RESERVED = ("--budget", "--format", "--more")  # options a call may lead with (engine/answers.py)


@dataclass(frozen=True)
class Target:
    """A tree the calls go to: how `serve` gets it, how it is loaded here, and the argv of one of its commands that
    prints JSON nested `n` levels (a command of its own, its output what a handler wrote)."""

    label: str
    source: list[str]
    options: dict[str, Any]
    deep: Callable[[int], list[str]]


def _deep_json(n: int) -> str:
    return "[" * n + "]" * n


@dataclass
class Call:
    """One request: the MCP tool and its arguments (for OpenAPI, the body: an object, or bytes sent as they are), and
    the error kind it is due when only one will do (a tool the server does not have: `not_found`)."""

    tool: str
    arguments: Any
    due: str | None = None


class Vocabulary:
    """What a tree's calls are made of: its paths and, per command, its parameters; its generated argv, mutated and
    mixed with hostile tokens and hostile calls, and the same calls as the meta-tools and OpenAPI surfaces take them."""

    def __init__(self, tree: Any, deep: Callable[[int], list[str]]) -> None:
        from mcp_cli.tree import Command

        self.name = tree.name
        self.deep = deep
        self.paths: list[list[str]] = []
        self.commands: dict[tuple[str, ...], Any] = {}
        for path, node in tree.walk():
            if any(part in SLOW for part in path):
                continue
            self.paths.append(path)
            if isinstance(node, Command):
                self.commands[tuple(path)] = node

    def value(self, rng: random.Random, param: Any) -> str:
        if param.choices and rng.random() < 0.6:
            return str(rng.choice(param.choices))
        typed = {
            "integer": lambda: str(rng.randint(-5, 500)),
            "number": lambda: str(rng.uniform(-1, 1e3)),
            "boolean": lambda: rng.choice(["true", "false", "yes", "0"]),
            "json": lambda: json.dumps({"k": rng.randint(0, 9)}),
        }
        if param.type in ("integer", "number") and rng.random() < 0.2:
            return rng.choice(NUMBERS)
        if rng.random() < 0.7 and param.type in typed:
            return typed[param.type]()
        return rng.choice(["note", "a.pdf", "1-3", "x y", "--", *rng.sample(HOSTILE, 2)])

    def argv(self, rng: random.Random) -> list[str]:
        path = list(rng.choice(self.paths)) if self.paths else []
        if path and rng.random() < 0.15:  # a typo, a truncation, or the tool's own name in front
            i = rng.randrange(len(path))
            path[i] = rng.choice([path[i][:-1], path[i] + "s", path[i].upper(), self.name])
        tokens = list(path)
        cmd = self.commands.get(tuple(path))
        params = cmd.params if cmd is not None else []
        for _ in range(rng.randint(0, 6)):
            roll = rng.random()
            if params and roll < 0.6:
                param = rng.choice(params)
                if param.flags:
                    tokens.append(rng.choice(param.flags))
                    if param.takes_value and rng.random() < 0.9:
                        tokens.append(self.value(rng, param))
                else:
                    tokens.append(self.value(rng, param))
            elif roll < 0.9:
                tokens.append(rng.choice(HOSTILE))
            else:
                tokens.insert(rng.randrange(len(tokens) + 1), rng.choice(["--help", "-h", "--", "--help-all"]))
        return tokens

    def hostile(self, rng: random.Random) -> list[str]:
        """A call the probe found faults with: a jq filter reaching out, a count that is no plain number (to
        --budget, --more, head, tail), a 64,000-character word to search, a command printing deep JSON."""
        base = self.argv(rng) if rng.random() < 0.4 else self.deep(rng.randint(1, 3))  # mostly one that succeeds
        number = rng.choice(NUMBERS)
        made = {
            "jq": lambda: [*base, "|", "jq", rng.choice(FILTERS)],
            "budget": lambda: ["--budget", number, *base],
            "more": lambda: ["--more", rng.choice([number, f"k7Qx2m:{number}", f"{number}:{number}"]), *base],
            "slice": lambda: [*base, "|", rng.choice(["head", "tail"]), *rng.choice([[number], ["-n", number]])],
            "search": lambda: ["search", rng.choice(LONG_WORDS)],
            "deep": lambda: [
                *rng.choice([[], ["--format", "toon"]]),
                *self.deep(rng.choice(DEPTHS)),
                *rng.choice([[], ["|", "jq", "."], ["|", "head", "3"]]),
            ],
        }
        return made[rng.choice(list(made))]()

    def tokens(self, rng: random.Random) -> list[str]:
        return self.hostile(rng) if rng.random() < 0.25 else self.argv(rng)

    def arguments(self, rng: random.Random) -> Any:
        """Tool arguments: mostly argv, some one command string (quoting broken at times), some malformed."""
        roll = rng.random()
        if roll < 0.8:
            return {"argv": self.tokens(rng)}
        if roll < 0.9:
            command = shlex.join(self.tokens(rng)).replace("'|'", "|")  # a pipeline's bars unquoted
            return {"command": command + rng.choice(["", "", " '", ' "unclosed', " \\"])}
        return rng.choice(
            [
                {},
                {"argv": "--help"},
                {"argv": [1, 2]},
                {"argv": None},
                {"argv": [], "command": ""},
                {"argv": ["--help"], "extra": 1},
                {"command": 7},
                {"argv": [["nested"]]},
                {"argv": ["x"] * 2000},
            ]
        )

    def as_call(self, surface: str, tokens: list[str]) -> Call:
        """The argv `tokens` as `surface` takes them: the one tool's `argv`, OpenAPI's body, meta's call_tool."""
        if surface == "meta":
            return Call("call_tool", self.meta(tokens))
        return Call(self.name if surface == "stdio" else "", {"argv": tokens})

    def help(self, surface: str) -> Call:
        """The first call an agent makes on `surface`."""
        return Call("search_tools", {"query": "help"}) if surface == "meta" else self.as_call(surface, ["--help"])

    def call(self, surface: str, rng: random.Random) -> Call:
        """One generated request for `surface` (one of SURFACES)."""
        if surface == "openapi":
            if rng.random() < 0.05:  # a body as bytes: not JSON, not UTF-8, nested past any parser, a huge number
                return Call(
                    "",
                    rng.choice(
                        [
                            b"not json",
                            b"\xff\xfe{}",
                            b"",
                            _deep_json(100_000).encode(),
                            b'{"argv": ["--budget", ' + b"9" * 5000 + b"]}",
                            b'{"argv": 1e309}',
                            b'{"command": "--help", "command": 1}',
                            b"[" * 5000,
                        ]
                    ),
                )
            return Call("", self.arguments(rng))
        if rng.random() < 0.03:
            return Call(
                rng.choice([*UNKNOWN_TOOLS, self.name + "s", "call_tool" if surface == "stdio" else self.name]),
                {"argv": ["--help"]},
                due="not_found",
            )
        if surface == "stdio":
            return Call(self.name, self.arguments(rng))
        roll = rng.random()
        if roll < 0.1:
            query = rng.choice([*LONG_WORDS, " ".join(rng.choice(self.paths)), rng.choice(HOSTILE)])
            limit = rng.choice([{}, {}, {"limit": rng.choice([0, 3, 51, -1, 2.5, 10**4400, "١٢", None])}])
            return Call("search_tools", {"query": query, **limit})
        if roll < 0.18:
            names = [" ".join(rng.choice(self.paths)) for _ in range(rng.randint(1, 3))]
            return Call("describe_tools", {"names": names + rng.choice([[], [rng.choice(HOSTILE)], ["x"] * 30])})
        if roll < 0.22:
            return Call(
                *rng.choice(
                    [
                        ("call_tool", {}),
                        ("call_tool", {"name": 7}),
                        ("call_tool", {"name": None}),
                        ("call_tool", {"name": "x", "arguments": []}),
                        ("search_tools", {"query": None}),
                        ("describe_tools", {"names": "x"}),
                        ("call_tool", {"name": "x", "then": 1}),
                        ("call_tool", {"name": "x", "budget": "800"}),
                    ]
                )
            )
        return Call("call_tool", self.meta(self.tokens(rng)))

    def meta(self, tokens: list[str]) -> dict[str, Any]:
        """`call_tool`'s arguments for the argv `tokens`: the longest command path it starts with as `name` (else
        its words up to the first option), its options and positionals as an arguments object (JSON numbers where
        they read as numbers), its leading --budget and --format as fields, --more in `name` as a note's call gives
        it, the stages after `|` as `then`. Tokens that fit no parameter are left out."""
        stages = [list(group) for bar, group in itertools.groupby(tokens, lambda t: t == "|") if not bar] or [[]]
        first, more = stages[0], None
        fields: dict[str, Any] = {}
        while len(first) > 1 and first[0] in RESERVED:
            option, value, first = first[0], first[1], first[2:]
            if option == "--more":
                more = value
            else:
                fields[option[2:]] = _number(value) if option == "--budget" else value
        size = max((len(p) for p in self.commands if list(p) == first[: len(p)]), default=0)
        if not size:
            size = next((i for i, t in enumerate(first) if t.startswith("-")), len(first))
        path, rest = first[:size], first[size:]
        cmd = self.commands.get(tuple(path))
        name = shlex.join(["--more", more, *path]) if more is not None else " ".join(path)
        values = _values(cmd, rest) if cmd is not None else {}
        then = " | ".join(shlex.join(stage) for stage in stages[1:])
        return {"name": name, **({"arguments": values} if values else {}), **({"then": then} if then else {}), **fields}


@contextmanager
def big_integers() -> Iterator[None]:
    """Integers of any size to and from text while inside (some calls carry integers of over 4,300 digits)."""
    before = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        yield
    finally:
        sys.set_int_max_str_digits(before)


def _number(text: str) -> Any:
    """A JSON number where `text` reads as one written in ASCII (integers of any size), else the text itself."""
    if re.fullmatch(r"-?[0-9]+", text, re.ASCII):
        with big_integers():
            return int(text)
    try:
        number = float(text) if text.isascii() else None
    except ValueError:
        return text
    return number if number is not None and math.isfinite(number) else text


def _values(cmd: Any, tokens: list[str]) -> dict[str, Any]:
    """The arguments object (by parameter name) that `tokens` after a command's path give it, as well as it reads."""
    if cmd.passthrough:
        return {"args": tokens} if tokens else {}
    values: dict[str, Any] = {}
    flags = {flag: p for p in cmd.params for flag in p.flags}
    positionals = [p for p in cmd.params if p.positional]
    i = 0
    while i < len(tokens):
        token = tokens[i]
        flag, eq, inline = token.partition("=")
        p = flags.get(flag if token.startswith("-") else "")
        negated = flags.get("--" + token[5:]) if token.startswith("--no-") else None
        if p is not None and p.takes_value:
            text = inline if eq else (tokens[i + 1] if i + 1 < len(tokens) else "")
            i += 0 if eq else 1
            value = _number(text) if p.type in ("integer", "number") else text
            if p.name == JSON_ALL:  # an upstream tool's whole arguments object
                values.update(_object(text))
            else:
                values[p.name] = [*values.get(p.name, []), value] if p.action == "append" else value
        elif p is not None:
            values[p.name] = values.get(p.name, 0) + 1 if p.action == "count" else p.action != "store_false"
        elif negated is not None and negated.action == "negatable":
            values[negated.name] = False
        elif positionals and not token.startswith("-"):
            p = positionals.pop(0)
            values[p.name] = _number(token) if p.type in ("integer", "number") else token
        i += 1
    return values


def _object(text: str) -> dict[str, Any]:
    """The JSON object `text` holds, else none (its depth no bar)."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}


@dataclass
class Answer:
    """What a surface answered, as a caller reads it: the envelope, every text shown, and why it is not in the
    documented envelope ("" when it is)."""

    data: dict[str, Any]
    texts: list[str]
    outside: str = ""


class NoAnswer(Exception):
    """The server did not answer: it died, or hangs."""


Ask = Callable[[Call], Awaitable[Answer]]


def _server_env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), **CANARIES}


def _serve(source: list[str], *options: str) -> list[str]:
    return [sys.executable, "-m", "mcp_cli", "serve", *source, *options]


def _enveloped(data: dict[str, Any], is_error: bool | None) -> str:
    """Why `data` is not the documented envelope ("" when it is): `ok`, and on failure an `error` of KINDS."""
    if not isinstance(data.get("ok"), bool):
        return "no `ok` in the envelope"
    if is_error is not None and data["ok"] == is_error:
        return f"`ok: {data['ok']}` in an answer with isError {is_error}"
    if not data["ok"] and data.get("error") not in KINDS:
        return f"error kind {data.get('error')!r} is not one of KINDS"
    return ""


@asynccontextmanager
async def mcp_stdio(source: list[str], work: str, errlog: IO[str], surface: str) -> AsyncIterator[Ask]:
    """A real MCP client session over stdio to `mcp-cli serve SOURCE --surface SURFACE`."""
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client
    from mcp.shared.exceptions import MCPError
    from mcp_types import CONNECTION_CLOSED
    from pydantic import ValidationError

    command = _serve(source, "--surface", MCP_SURFACE[surface])
    params = StdioServerParameters(command=command[0], args=command[1:], cwd=work, env=_server_env())
    async with Client(stdio_client(params, errlog=errlog)) as client:

        async def ask(call: Call) -> Answer:
            try:
                result = await client.call_tool(call.tool, call.arguments)
            except MCPError as exc:
                if exc.code == CONNECTION_CLOSED:
                    raise NoAnswer(repr(exc)) from exc
                return Answer({}, [exc.message], f"a JSON-RPC error ({exc.code}) instead of a result: {exc.message}")
            except ValidationError as exc:  # an answer, but no result of the protocol the session speaks
                return Answer({}, [], f"a result the client cannot read: {cause(exc)}")
            texts = [c.text for c in result.content if getattr(c, "type", "") == "text"]
            data = envelope(result)
            return Answer(data, texts, _enveloped(data, result.is_error))

        yield ask


@asynccontextmanager
async def openapi(source: list[str], work: str, errlog: IO[str], surface: str = "openapi") -> AsyncIterator[Ask]:
    """`mcp-cli serve SOURCE --openapi 127.0.0.1:PORT --token-env SOME_TOKEN`, called with httpx: POST /run."""
    import httpx2

    port = free_port()
    command = _serve(source, "--openapi", f"127.0.0.1:{port}", "--token-env", TOKEN_ENV)
    proc = subprocess.Popen(command, cwd=work, env=_server_env(), stdout=subprocess.DEVNULL, stderr=errlog)
    last: list[int] = []  # the status of the answer before

    async def ask(call: Call) -> Answer:
        body = call.arguments if isinstance(call.arguments, bytes) else json.dumps(call.arguments).encode()
        try:
            answer = await http.post("/run", content=body, headers={"Content-Type": "application/json"})
        except httpx2.TransportError as exc:
            if proc.poll() is not None:
                raise NoAnswer(f"server exited with {proc.returncode}: {exc!r}") from exc
            after = f" (the answer before: HTTP {last[0]})" if last and last[0] >= 500 else ""
            last[:] = [0]
            return Answer({}, [], f"no HTTP answer{after}: {exc!r}")
        last[:] = [answer.status_code]
        try:
            data = answer.json()
        except ValueError:
            data = None
        if not isinstance(data, dict) or not (answer.status_code == 200 or 400 <= answer.status_code < 500):
            return Answer({}, [answer.text], f"HTTP {answer.status_code}: {answer.text[:200]}")
        bad = _enveloped(data, None)
        if not bad and (answer.status_code == 200) != (data.get("error") != "bad_request"):
            bad = f"HTTP {answer.status_code} with error {data.get('error')!r}"
        return Answer(data, [answer.text], bad)

    try:
        await anyio.to_thread.run_sync(wait_for_port, port, proc, CALL_WAIT)
        headers = {"Authorization": f"Bearer {CANARIES[TOKEN_ENV]}"}
        async with httpx2.AsyncClient(base_url=f"http://127.0.0.1:{port}", headers=headers, timeout=CALL_WAIT) as http:
            yield ask
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


SURFACES: dict[str, Callable[..., AbstractAsyncContextManager[Ask]]] = {
    "stdio": lambda source, work, errlog: mcp_stdio(source, work, errlog, "stdio"),  # the one tool
    "meta": lambda source, work, errlog: mcp_stdio(source, work, errlog, "meta"),  # search, describe, call_tool
    "openapi": openapi,  # POST /run
}
MCP_SURFACE = {"stdio": "tool", "meta": "meta"}  # `serve --surface` of the MCP surfaces (over stdio)
COUNTS = ("calls", "answered", "not enveloped", "internal", "tracebacks", "canaries", "server deaths")
MAX_DEATHS = 3  # a server started again after each; past this, a run stops
EXAMPLES, PER_ANSWER = 4, 2  # examples of each flaw a run keeps, and of those, how many may say the same


def leaked(answer: Answer) -> list[str]:
    """The canaries of the server's environment that an answer carries."""
    said = "\n".join(answer.texts) + json.dumps(answer.data, default=str, ensure_ascii=False)
    return [name for name, value in CANARIES.items() if value in said]


def note(examples: dict[str, list[str]], key: str, text: str) -> None:
    """One more example of `key`, while it has fewer than EXAMPLES and not PER_ANSWER that said the same."""
    said = examples.setdefault(key, [])
    answered = text.partition(" -> ")[2][:40]
    if len(said) < EXAMPLES and sum(s.partition(" -> ")[2][:40] == answered for s in said) < PER_ANSWER:
        said.append(text[:400])


def _classify(call: Call, answer: Answer, counts: dict[str, Any], examples: dict[str, list[str]]) -> None:
    counts["answered"] += 1
    data = answer.data
    outcome = "ok" if data.get("ok") else str(data.get("error", "no envelope"))
    counts["outcomes"][outcome] = counts["outcomes"].get(outcome, 0) + 1
    texts = answer.texts + [str(data.get(k, "")) for k in ("message", "output", "stderr")]
    outside = answer.outside
    if not outside and call.due and data.get("error") != call.due:
        outside = f"tool {call.tool!r}: error {data.get('error')!r} where {call.due!r} is due"
    said = f"{call.tool} {_short(call.arguments)} -> {outside or data.get('message') or ' '.join(texts)}".strip()
    found = {
        "not enveloped": bool(outside),
        "internal": data.get("error") == "internal",
        "tracebacks": any(TRACEBACK.search(t) for t in texts),
        "canaries": bool(leaked(answer)),
    }
    for key, bad in found.items():
        if bad:
            counts[key] += 1
            note(examples, key, said)


def _short(value: Any) -> str:
    """A call's arguments in a line of a report: long strings cut to what shows their kind and size."""
    if isinstance(value, bytes):
        return _short(value.decode("utf-8", "replace"))
    if isinstance(value, str):
        return value if len(value) <= 60 else f"{value[:24]!r}...({len(value):,} chars)"
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 10**60:
        return f"<an integer of {len(str(abs(value))):,} digits>"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_short(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_short(v) for v in value[:12]) + (", ..." if len(value) > 12 else "") + "]"
    return repr(value)


def cause(exc: BaseException) -> str:
    """What an exception (the first of a group, the first of its causes) says."""
    while getattr(exc, "exceptions", None):  # an exception group (3.11's, or the backport's)
        exc = exc.exceptions[0]  # type: ignore[attr-defined]
    said = f"{type(exc).__name__}: {exc}"
    return said if exc.__cause__ is None else f"{said}, from {cause(exc.__cause__)}"


def tracebacks(log: str) -> list[str]:
    """The tracebacks of a server's log in brief: each one's exception and last frame."""
    briefs = []
    for block in log.split("Traceback (most recent call last)")[1:]:
        lines = block.splitlines()[1:]
        end = next((i for i, line in enumerate(lines) if line and not line[0].isspace()), len(lines) - 1)
        frames = [line.strip() for line in lines[:end] if line.strip().startswith("File ")]
        briefs.append(f"{lines[end].strip() if lines else ''} -> at {frames[-1] if frames else '?'}")
    return briefs


def _counts() -> dict[str, Any]:
    return {**dict.fromkeys(COUNTS, 0), "outcomes": {}}


async def fuzz(target: Target, surface: str, tree: Any, calls: int, seed: int) -> dict[str, Any]:
    """`calls` generated calls to `target` over `surface`; the counts. A server that stops answering is counted and
    started again (up to MAX_DEATHS). Tracebacks are counted in what the caller reads and in the server's stderr."""
    rng = random.Random(seed)
    words = Vocabulary(tree, target.deep)
    counts: dict[str, Any] = _counts()
    examples: dict[str, list[str]] = {}
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as work, tempfile.TemporaryFile("w+") as errlog, big_integers():
        while counts["calls"] < calls and counts["server deaths"] < MAX_DEATHS:
            try:
                async with SURFACES[surface](target.source, work, errlog) as ask:
                    while counts["calls"] < calls:
                        call = words.call(surface, rng)
                        counts["calls"] += 1
                        try:
                            with anyio.fail_after(CALL_WAIT):
                                answer = await ask(call)
                        except (NoAnswer, TimeoutError) as exc:
                            raise NoAnswer(f"{_short(call.arguments)}: {exc!r}") from exc
                        _classify(call, answer, counts, examples)
            except Exception as exc:  # no answer: the server died or hung (or would not start)
                counts["server deaths"] += 1
                note(examples, "server deaths", cause(exc))
        seconds = time.perf_counter() - start
        errlog.seek(0)
        logged = errlog.read()
    counts["tracebacks"] += logged.count("Traceback (most recent call last)")
    for brief in tracebacks(logged):
        note(examples, "tracebacks", brief)
    return {"surface": surface, "source": target.label, "seconds": seconds, **counts, "examples": examples}


def targets(folder: Path, marker: str) -> list[Target]:
    """The trees the calls go to: a skill, a tree of Python and subprocess handlers, a wrapped upstream."""
    config = _awkward_config(folder, marker, {"awkward": {}})
    exclude = [f for tool in sorted(SLOW) for f in ("--exclude-tool", tool)]

    def echoed(n: int) -> list[str]:  # the upstream returns the object it was given
        return ["awkward", "echo-args", "--json", '{"query": "deep", "extra": {"d": ' + _deep_json(n) + "}}"]

    return [
        Target(
            "skill (argtool fixture)", [str(FIXTURES / "skills" / "argtool")], {}, lambda n: ["raw-echo", _deep_json(n)]
        ),  # a script prints it
        Target(
            "handler tree (faults fixture)",
            [str(FIXTURES / "faults" / "tree.json")],
            {},
            lambda n: ["py", "odd", "--depth", str(n)],
        ),  # a Python handler returns it
        Target("wrapped upstream (awkward)", [str(config), *exclude], {"exclude_tools": sorted(SLOW)}, echoed),
    ]


def argv_runs(total: int, seed: int = 1) -> list[dict[str, Any]]:
    """`total` generated calls shared among the surfaces (stdio, meta, OpenAPI) and, on each, among a skill tree, a
    handler tree and a wrapped upstream."""
    from mcp_cli.sources.loader import load

    runs: list[dict[str, Any]] = []
    for s, surface in enumerate(SURFACES):
        marker = f"rel-{uuid.uuid4().hex[:8]}"
        with tempfile.TemporaryDirectory() as tmp:
            for t, target in enumerate(targets(Path(tmp), marker)):
                i = s * 3 + t
                share = total // (3 * len(SURFACES)) + (i < total % (3 * len(SURFACES)))
                tree = load(target.source[0], **target.options)
                runs.append(anyio.run(fuzz, target, surface, tree, share, seed + i))
            runs[-1]["orphans"] = orphans(marker)  # the wrapped upstream's processes carry the marker
    return runs


# --- odd JSON-RPC ids, sent raw over stdio ----------------------------------------------------------------

ODD_IDS: dict[str, Any] = {"a fraction": 1.5, "an object": {"a": 1}, "an array": [1], "true": True, "false": False}
INVALID_REQUEST = -32600


async def raw_ids(target: Target, surface: str, tool: str) -> dict[str, Any]:
    """JSON-RPC lines written straight to the stdin of `mcp-cli serve SOURCE --surface SURFACE` (no SDK client):
    tools/call, tools/list and ping with each id of ODD_IDS, each followed by a ping with a plain id. Counted:
    requests with no reply (before that ping's), replies that are not an Invalid Request error with id null,
    tracebacks on stderr, whether the server still answers."""
    from anyio.streams.buffered import BufferedByteReceiveStream

    calls = {
        "tools/call": {"name": tool, "arguments": {"argv": ["--help"]}}
        if surface == "stdio"
        else {"name": "search_tools", "arguments": {"query": "help"}},
        "tools/list": {},
        "ping": {},
    }
    counts: dict[str, Any] = {
        "surface": surface,
        "source": target.label,
        "requests": 0,
        "replied": 0,
        "as due": 0,
        "tracebacks": 0,
        "server deaths": 0,
        "examples": {},
    }
    with tempfile.TemporaryFile("w+") as errlog:
        process = await anyio.open_process(
            _serve(target.source, "--surface", MCP_SURFACE[surface]), env=_server_env(), stderr=errlog
        )
        assert process.stdin is not None and process.stdout is not None
        lines = BufferedByteReceiveStream(process.stdout)

        async def send(message: dict[str, Any]) -> None:
            assert process.stdin is not None
            await process.stdin.send((json.dumps({"jsonrpc": "2.0", **message}) + "\n").encode())

        async def until(plain_id: str) -> list[dict[str, Any]]:
            """The messages before the reply to `plain_id`."""
            before = []
            with anyio.fail_after(CALL_WAIT):
                while True:
                    message = json.loads(await lines.receive_until(b"\n", 1 << 26))
                    if message.get("id") == plain_id:
                        return before
                    before.append(message)

        try:
            await send(
                {
                    "id": "hello",
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-06-18",
                        "capabilities": {},
                        "clientInfo": {"name": "reliability", "version": "1"},
                    },
                }
            )
            await until("hello")
            await send({"method": "notifications/initialized"})
            for method, params in calls.items():
                for kind, odd in ODD_IDS.items():
                    counts["requests"] += 1
                    await send({"id": odd, "method": method, "params": params})
                    await send({"id": f"after-{counts['requests']}", "method": "ping"})
                    replies = [m for m in await until(f"after-{counts['requests']}") if "id" in m]
                    counts["replied"] += bool(replies)
                    due = [m for m in replies if m["id"] is None and m.get("error", {}).get("code") == INVALID_REQUEST]
                    counts["as due"] += len(replies) == len(due) == 1
                    if len(replies) != len(due) or not replies:
                        counts["examples"].setdefault(
                            f"{method}, id {kind}", json.dumps(replies)[:300] if replies else "no reply"
                        )
        except Exception as exc:  # no answer to a plain ping: the server died or hangs
            counts["server deaths"] += 1
            counts["examples"].setdefault("server deaths", repr(exc)[:300])
        finally:
            with anyio.move_on_after(CALL_WAIT):
                await process.stdin.aclose()
                await process.wait()
            if process.returncode is None:
                process.kill()
                await process.wait()
        errlog.seek(0)
        counts["tracebacks"] = errlog.read().count("Traceback (most recent call last)")
    return counts


# --- runaway filters --------------------------------------------------------------------------------------


async def runaway(target: Target, surface: str, tree: Any) -> dict[str, Any]:
    """Each filter of RUNAWAY after a command of `target` (whose time limit is short) over `surface`, and, once it
    runs, `--help` from another request (over OpenAPI, another connection; over stdio, the one client's session):
    the help answered first, the filter as an error of kind `timeout`, the server serving on."""
    words = Vocabulary(tree, target.deep)
    counts: dict[str, Any] = {
        "surface": surface,
        "source": target.label,
        "filters": 0,
        "timeouts": 0,
        "help first": 0,
        "tracebacks": 0,
        "server deaths": 0,
        "examples": {},
    }
    with tempfile.TemporaryDirectory() as work, tempfile.TemporaryFile("w+") as errlog:
        try:
            async with SURFACES[surface](target.source, work, errlog) as ask:
                # asked once before: what a first help loads once (the meta surface's search loads its embedding
                # model) is no part of whether a runaway filter holds up the rest
                await ask(words.help(surface))
                for jq in RUNAWAY:
                    counts["filters"] += 1
                    call = words.as_call(surface, [*target.deep(1), "|", "jq", jq])
                    answer, order = await _meanwhile(ask, call, words.help(surface))
                    counts["help first"] += order == ["help", "runaway"]
                    if answer.data.get("error") == "timeout" and not answer.outside:
                        counts["timeouts"] += 1
                    else:
                        counts["examples"].setdefault(jq, (answer.outside or " ".join(answer.texts))[:300])
        except Exception as exc:  # no answer: the server died or hung
            counts["server deaths"] += 1
            counts["examples"].setdefault("server deaths", repr(exc)[:300])
        errlog.seek(0)
        counts["tracebacks"] = errlog.read().count("Traceback (most recent call last)")
    return counts


async def _meanwhile(ask: Ask, call: Call, other: Call) -> tuple[Answer, list[str]]:
    """`call`'s answer, and the order in which it and `other` (sent once `call` is under way) were answered."""
    order: list[str] = []
    answers: list[Answer] = []

    async def first() -> None:
        answers.append(await ask(call))
        order.append("runaway")

    with anyio.fail_after(CALL_WAIT):
        async with anyio.create_task_group() as tg:
            tg.start_soon(first)
            await anyio.sleep(0.5)  # under way
            order.append("help" if (await ask(other)).data.get("ok") else "help failed")
    return answers[0], order


def edge_runs() -> dict[str, list[dict[str, Any]]]:
    """Odd JSON-RPC ids on each stdio surface, runaway filters on every surface, against the handler tree."""
    from mcp_cli.sources.loader import load

    with tempfile.TemporaryDirectory() as tmp:
        target = targets(Path(tmp), f"rel-{uuid.uuid4().hex[:8]}")[1]
        tree = load(target.source[0], **target.options)
        ids = [anyio.run(raw_ids, target, surface, tree.name) for surface in MCP_SURFACE]
        return {"ids": ids, "runaway": [anyio.run(runaway, target, s, tree) for s in SURFACES]}


# --- faults -----------------------------------------------------------------------------------------------

FAULTS = {  # name: (environment of the upstream, the call made to it, the `error` due (None: ok), words in it)
    "exits at start": ({"AWKWARD_EXIT_START": "1"}, ["pid"], "handler", "could not list its tools"),
    "crashes at start": ({"AWKWARD_FAIL_START": "1"}, ["pid"], "handler", "missing API key"),
    "never initialises": ({"AWKWARD_HANG_START": "1"}, ["pid"], "handler", "no answer within"),
    "garbage on stdout": ({"AWKWARD_GARBAGE": "1"}, ["pid"], None, ""),
    "crashes mid-call": ({}, ["crash"], "handler", "stopped during the call"),
    "hangs mid-call": ({}, ["hang"], "timeout", "did not answer within 3 s"),
    "blocks its process mid-call": ({}, ["freeze"], "timeout", "no longer answers pings"),
}


async def _fault(name: str, folder: Path) -> dict[str, Any]:
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    env, argv, kind, words = FAULTS[name]
    marker = f"rel-{uuid.uuid4().hex[:8]}"
    config = _awkward_config(folder, marker, {"faulty": env, "healthy": {}})
    cache = {"MCP_CLI_CACHE_DIR": str(folder / f"cache-{marker}")}
    subprocess.run(
        [sys.executable, "-m", "mcp_cli", "inspect", str(config)], env={**os.environ, **cache}, capture_output=True
    )
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "mcp_cli", "serve", str(config)], env={**os.environ, **cache}
    )
    counts = {"fault": name, "calls": 0, "answered": 0, "as due": 0, "healthy after": False, "tracebacks": 0}
    with tempfile.TemporaryFile("w+") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            for call in (["faulty", *argv], ["faulty", *argv], ["healthy", "pid"]):
                counts["calls"] += 1
                try:
                    with anyio.fail_after(CALL_WAIT):
                        result = await client.call_tool(config.stem, {"argv": call})
                except Exception:  # no answer: counted, and the rest of this fault not asked
                    break
                counts["answered"] += 1
                data = envelope(result)
                said = "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")
                due, text = (None, "") if call[0] == "healthy" else (kind, words)
                counts["as due"] += data.get("error") == due and text in said
                counts["healthy after"] = call[0] == "healthy" and data.get("ok") is True
        errlog.seek(0)
        counts["tracebacks"] = errlog.read().count("Traceback (most recent call last)")
    counts["orphans"] = orphans(marker)
    return counts


def fault_runs() -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory() as tmp:
        return [anyio.run(_fault, name, Path(tmp)) for name in FAULTS]


# --- concurrent HTTP sessions -----------------------------------------------------------------------------


async def _sessions(url: str, tree_name: str, sessions: int) -> dict[str, int]:
    from mcp import Client

    counts: dict[str, Any] = {"sessions": sessions, "answered": 0, "lost": 0, "crossed": 0, "failed": {}}

    async def one(i: int) -> None:
        token = f"session-{i}-{uuid.uuid4().hex[:6]}"
        try:
            with anyio.fail_after(CALL_WAIT * 2):
                async with Client(url) as client:
                    first = await client.call_tool(tree_name, {"argv": ["awkward", "echo-args", "--query", token]})
                    again = await client.call_tool(
                        tree_name, {"command": f"awkward echo-args --query {token} --tags {i}"}
                    )
        except Exception:
            counts["lost"] += 1
            return
        counts["answered"] += 1
        for reply in (first, again):  # refused, by its kind (a `timeout` on a machine too busy for the call's time)
            if reply.is_error:
                kind = envelope(reply).get("error") or "none"
                counts["failed"][kind] = counts["failed"].get(kind, 0) + 1
        wanted = [{"query": token}, {"query": token, "tags": [str(i)]}]
        got = [envelope(r).get("data") or {} for r in (first, again)]  # another session's arguments: crossed
        counts["crossed"] += any(not r.is_error and g != w for r, g, w in zip((first, again), got, wanted, strict=True))

    async with anyio.create_task_group() as tg:
        for i in range(sessions):
            tg.start_soon(one, i)
    return counts


def http_run(sessions: int = 100) -> dict[str, Any]:
    """`sessions` concurrent sessions against one `mcp-cli serve --http` of a wrapped upstream, each calling
    it twice with arguments of its own."""
    marker = f"rel-{uuid.uuid4().hex[:8]}"
    with tempfile.TemporaryDirectory() as tmp:
        config = _awkward_config(Path(tmp), marker, {"awkward": {}})
        port = free_port()
        argv = [sys.executable, "-m", "mcp_cli", "serve", str(config), "--http", f"127.0.0.1:{port}"]
        proc = subprocess.Popen(argv, stderr=subprocess.DEVNULL)
        try:
            wait_for_port(port, proc, CALL_WAIT)
            start = time.perf_counter()
            counts = anyio.run(_sessions, f"http://127.0.0.1:{port}/mcp", config.stem, sessions)
            counts["seconds"] = time.perf_counter() - start
            counts["server alive"] = proc.poll() is None
        finally:
            proc.terminate()
            proc.wait(timeout=30)
        counts["orphans"] = orphans(marker)
    return counts


# --- malformed skills -------------------------------------------------------------------------------------


def malformed_run() -> dict[str, Any]:
    """Each case of the malformed-skill corpus, placed with its set-up (symlinks, FIFOs, huge files) and loaded:
    the exact error or warnings its case names (tests/malformed.py), never anything else."""
    from tests.malformed import CASES, outcome, placed

    counts: dict[str, Any] = {"skills": 0, "as named": 0, "named errors": 0, "other failures": 0, "examples": {}}
    with tempfile.TemporaryDirectory() as tmp, placed(Path(tmp)) as make:
        for name in sorted(CASES):
            counts["skills"] += 1
            try:
                differs = outcome(name, *make(name))
            except Exception as exc:  # a traceback where a named error was due
                differs = f"{type(exc).__name__}: {exc}"
            if differs:
                counts["other failures"] += 1
                counts["examples"][name] = differs[:300]
            else:
                counts["as named"] += 1
                counts["named errors"] += bool(CASES[name].error)
    return counts


# --- the report -------------------------------------------------------------------------------------------

FLAWS = ("not enveloped", "internal", "tracebacks", "canaries", "server deaths")  # each ideally 0
MIN_CALLS = 2000  # generated calls in all, at least, for a verdict


def run(argv: int = 2000, sessions: int = 100) -> dict[str, Any]:
    """Every part, with a tool-list cache of its own (the user's is neither read nor written)."""
    with own_cache():
        parts = {"argv": argv_runs(argv), **edge_runs(), "faults": fault_runs(), "http": http_run(sessions)}
    return {**parts, "malformed": malformed_run()}


def verdicts(results: dict[str, Any]) -> dict[str, bool]:
    """Whether each part is at its ideal: on each surface, at least its share of 2,000 calls, every one answered,
    nothing outside the envelope, no internal error, traceback, canary, death or orphan; every odd JSON-RPC id answered
    with an Invalid Request error (id null); every runaway filter a `timeout`, with `--help` answered first; every
    fault as due; 0 HTTP sessions lost or crossed; at least 20 malformed skills, each as named."""
    argv, faults, http, bad = results["argv"], results["faults"], results["http"], results["malformed"]
    out = {}
    for surface in SURFACES:
        runs = [r for r in argv if r["surface"] == surface]
        out[surface] = sum(r["calls"] for r in runs) >= MIN_CALLS // len(SURFACES) and all(
            r["answered"] == r["calls"] and r.get("orphans", 0) == 0 and not any(r[k] for k in FLAWS) for r in runs
        )
    out["json-rpc ids"] = bool(results["ids"]) and all(
        r["replied"] == r["as due"] == r["requests"] > 0 and r["tracebacks"] == r["server deaths"] == 0
        for r in results["ids"]
    )
    out["runaway"] = bool(results["runaway"]) and all(
        r["timeouts"] == r["help first"] == r["filters"] > 0 and r["tracebacks"] == r["server deaths"] == 0
        for r in results["runaway"]
    )
    out["faults"] = all(
        f["as due"] == f["answered"] == f["calls"] and f["healthy after"] and f["tracebacks"] == 0 and f["orphans"] == 0
        for f in faults
    )
    out["http"] = (
        http["answered"] == http["sessions"]
        and http["crossed"] == 0
        and set(http.get("failed", {})) <= {"timeout"}  # only a busy machine's: never a wrong or internal answer
        and http["server alive"]
        and http["orphans"] == 0
    )
    out["malformed"] = bad["skills"] >= 20 and bad["other failures"] == 0
    return out


def _row(label: str, r: dict[str, Any], keys: tuple[str, ...]) -> str:
    return f"| {label} | " + " | ".join(f"{r[k]:,}" for k in keys) + " |"


def report(results: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(markdown lines, target lines with pass/MISSED) for `run`'s results."""
    argv, faults, http, bad = results["argv"], results["faults"], results["http"], results["malformed"]
    ok = verdicts(results)
    lines = [
        "### Generated calls",
        "",
        f"Ideal: every call answered, 0 in every other column "
        f"(canaries: answers carrying a value of the server's environment: {', '.join(CANARIES)}).",
        "",
        "| surface, tree | " + " | ".join(COUNTS) + " | orphans | calls/s |",
        "|---|" + "---|" * 9,
    ]
    totals, targets = {}, []
    for surface in SURFACES:
        runs = [r for r in argv if r["surface"] == surface]
        for r in runs:
            lines.append(
                _row(f"{surface}, {r['source']}", {**r, "orphans": r.get("orphans", 0)}, (*COUNTS, "orphans"))
                + f" {r['calls'] / max(r['seconds'], 1e-9):.0f} |"
            )
        totals[surface] = {k: sum(r.get(k, 0) for r in runs) for k in (*COUNTS, "orphans")}
        lines.append(_row(f"**{surface}, all**", totals[surface], (*COUNTS, "orphans")) + " |")
        t = totals[surface]
        targets.append(
            f"- {surface}: {t['answered']:,} of {t['calls']:,} generated calls answered, "
            + ", ".join(f"{t[k]:,} {k}" for k in (*FLAWS, "orphans"))
            + f" -- {mark(ok[surface])}"
        )
    everything = {k: sum(t[k] for t in totals.values()) for k in (*COUNTS, "orphans")}
    lines += [_row("**every surface**", everything, (*COUNTS, "orphans")) + " |", ""]
    for r in argv:
        outcomes = ", ".join(f"{k} {n:,}" for k, n in sorted(r["outcomes"].items(), key=lambda kv: -kv[1]))
        lines.append(f"- {r['surface']}, {r['source']}, outcomes: {outcomes}")
        lines += [
            f"- {r['surface']}, {r['source']}, {kind}: `{_md(text)}`"
            for kind, texts in r["examples"].items()
            for text in texts
        ]
    ids = results["ids"]
    lines += [
        "",
        "### Odd JSON-RPC ids, raw over stdio",
        "",
        f"tools/call, tools/list and ping with an id that is {', '.join(ODD_IDS)}; ideal: each answered with "
        "an Invalid Request error, id null, and the server answering after.",
        "",
        "| surface | requests | replied | as due | tracebacks | server deaths |",
        "|---|---|---|---|---|---|",
    ]
    lines += [_row(r["surface"], r, ("requests", "replied", "as due", "tracebacks", "server deaths")) for r in ids]
    for r in ids:  # the requests that got the same answer, on one line
        said: dict[str, list[str]] = {}
        for request, text in r["examples"].items():
            said.setdefault(text, []).append(request)
        lines += [f"- {r['surface']}, {'; '.join(requests)}: `{_md(text)}`" for text, requests in said.items()]
    loops = results["runaway"]
    lines += [
        "",
        "### Runaway filters",
        "",
        f"After a command of the {loops[0]['source'] if loops else ''}: {', '.join(f'`{f}`' for f in RUNAWAY)}; "
        "ideal: each a `timeout`, with a `--help` sent meanwhile answered first.",
        "",
        "| surface | filters | timeouts | help first | tracebacks | server deaths |",
        "|---|---|---|---|---|---|",
    ]
    lines += [
        _row(r["surface"], r, ("filters", "timeouts", "help first", "tracebacks", "server deaths")) for r in loops
    ]
    lines += [f"- {r['surface']}, {kind}: `{_md(text)}`" for r in loops for kind, text in r["examples"].items()]
    lines += [
        "",
        "### Faults",
        "",
        "| upstream | calls | answered | as due | healthy one after | server tracebacks | orphans |",
        "|---|---|---|---|---|---|---|",
    ]
    for f in faults:
        lines.append(
            f"| {f['fault']} | {f['calls']} | {f['answered']} | {f['as due']} | "
            f"{'yes' if f['healthy after'] else 'NO'} | {f['tracebacks']} | {f['orphans']} |"
        )
    lines += [
        "",
        "### Concurrent HTTP sessions",
        "",
        f"{http['sessions']} sessions at once, two calls each: {http['answered']} answered, {http['lost']} lost, "
        f"{http['crossed']} crossed, refused by kind {http.get('failed') or 'none'}, in {http['seconds']:.1f} s; "
        f"server alive after: {http['server alive']}; "
        f"orphans: {http['orphans']}.",
        "",
        "### Malformed skills",
        "",
        f"{bad['skills']} skills: {bad['as named']} gave exactly the outcome their case names "
        f"({bad['named errors']} a named error, the rest their warnings), "
        f"{bad['other failures']} did not.",
    ]
    lines += [f"- {name}: `{text}`" for name, text in bad["examples"].items()]
    due = sum(f["as due"] for f in faults)
    sums = {k: sum(r[k] for r in ids) for k in ("requests", "replied", "as due", "tracebacks", "server deaths")}
    spins = {k: sum(r[k] for r in loops) for k in ("filters", "timeouts", "help first", "tracebacks", "server deaths")}
    targets += [
        f"- odd JSON-RPC ids over stdio: {sums['requests'] - sums['replied']} of {sums['requests']} requests without "
        f"a reply, {sums['replied'] - sums['as due']} replied otherwise than Invalid Request (id null), "
        f"{sums['tracebacks']} tracebacks, {sums['server deaths']} server deaths -- {mark(ok['json-rpc ids'])}",
        f"- runaway filters: {spins['timeouts']} of {spins['filters']} a `timeout`, `--help` answered first "
        f"{spins['help first']} times, {spins['tracebacks']} tracebacks, {spins['server deaths']} server deaths "
        f"-- {mark(ok['runaway'])}",
        f"- faults: {due} of {sum(f['calls'] for f in faults)} calls answered with the kind and reason due, the "
        f"healthy upstream serving after every fault, {sum(f['tracebacks'] for f in faults)} tracebacks, "
        f"{sum(f['orphans'] for f in faults)} orphans -- {mark(ok['faults'])}",
        f"- {http['sessions']} concurrent HTTP sessions: {http['lost']} lost, {http['crossed']} crossed, "
        f"refused {http.get('failed') or 'none'}, "
        f"{http['orphans']} orphans -- {mark(ok['http'])}",
        f"- {bad['skills']} malformed skills, each with the exact error or warnings named: {bad['other failures']} "
        f"otherwise -- {mark(ok['malformed'])}",
    ]
    return lines, targets


def _md(text: str) -> str:
    """Text fit for one line of markdown code."""
    return " ".join(text.split()).replace("`", "'")


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.reliability", description=__doc__.split("\n\n")[0])
    ap.add_argument("--argv", type=int, default=2000, help="generated calls in all, over every surface (default 2,000)")
    ap.add_argument("--long", action="store_true", help="10,000 generated calls")
    ap.add_argument("--sessions", type=int, default=100, help="concurrent HTTP sessions (default 100)")
    args = ap.parse_args()
    lines, targets = report(run(10_000 if args.long else args.argv, args.sessions))
    print("\n".join(lines) + "\n\n" + "\n".join(targets))


if __name__ == "__main__":
    main()
