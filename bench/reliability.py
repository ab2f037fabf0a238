"""Reliability: generated argv, injected faults, concurrent HTTP sessions and malformed skills, counted.

- generated argv: calls built from each tree's own names, flags and values, mutated and mixed with hostile
  tokens and malformed tool arguments, sent by a real MCP client over stdio to a skill tree, a tree of Python
  and subprocess handlers and a wrapped upstream. Counted: answered, in the documented envelope (`ok`, and a
  failure's `error` one of the documented kinds), internal errors, mcp-cli tracebacks, server deaths;
- faults: upstreams that exit at start, crash at start, never initialise, print garbage on stdout, crash or
  hang mid-call; every call answered, the healthy upstream still serving, no process left after the server;
- concurrent HTTP: sessions at once against one server, each with its own arguments; none lost or crossed;
- malformed skills: every case of tests/malformed.py, placed with its symlinks, FIFOs or huge files, gives
  exactly the error or warnings it names.

`python -m bench.reliability` (2,000 argv; `--long` for 10,000; `--argv N`). The ideal of every count is
stated beside it; tests/test_reliability.py runs it in CI.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shlex
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import anyio

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
HOSTILE = [
    "", " ", "-", "--", "-h", "--help", "--help-all", "=", "--=", "-x", "--no-such-option", "--json", "@",
    "@/dev/zero", "@/etc/passwd", "@/no/such/file", "@.", "{", '{"a":', "[" * 150 + "]" * 150, "1e309", "-1",
    "0x10", "NaN", "null", "true", "[]", "{}", "$(id)", "`id`", "; rm -rf /", "%s%n", "a\0b", "\x1b[31mred",
    "\u202eevil", "ünïcödé", "💥", "\t\n", "../../etc/passwd", "~/x", "x" * 5000, "--" + "y" * 300, "-" * 50,
    "--pages=1-3", "--format", "-v", "-vvvv", "--no-verbose", "0", "3.5", "1,2", "a b", "'", '"',
]  # fmt: skip


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


def _awkward_config(folder: Path, marker: str, servers: dict[str, dict[str, str]]) -> Path:
    """An MCP config of awkward upstreams, one per name, each with its environment (the faults it acts out)."""
    config = folder / f"{'-'.join(servers)}.json"
    entries = {name: {"command": sys.executable, "args": [str(AWKWARD), marker, name], "env": env, "timeout": 3}
               for name, env in servers.items()}  # fmt: skip
    config.write_text(json.dumps({"mcpServers": entries}))
    return config


# --- generated argv ---------------------------------------------------------------------------------------


class Vocabulary:
    """What a tree's argv is made of: its paths and, per command, its flags and value types."""

    def __init__(self, tree: Any) -> None:
        from mcp_cli.tree import Command

        self.name = tree.name
        self.paths: list[list[str]] = []
        self.params: dict[tuple[str, ...], list[Any]] = {}
        for path, node in tree.walk():
            if any(part in SLOW for part in path):
                continue
            self.paths.append(path)
            if isinstance(node, Command):
                self.params[tuple(path)] = node.params

    def value(self, rng: random.Random, param: Any) -> str:
        if param.choices and rng.random() < 0.6:
            return str(rng.choice(param.choices))
        typed = {"integer": lambda: str(rng.randint(-5, 500)), "number": lambda: str(rng.uniform(-1, 1e3)),
                 "boolean": lambda: rng.choice(["true", "false", "yes", "0"]),
                 "json": lambda: json.dumps({"k": rng.randint(0, 9)})}  # fmt: skip
        if rng.random() < 0.7 and param.type in typed:
            return typed[param.type]()
        return rng.choice(["note", "a.pdf", "1-3", "x y", "--", *rng.sample(HOSTILE, 2)])

    def argv(self, rng: random.Random) -> list[str]:
        path = list(rng.choice(self.paths)) if self.paths else []
        if path and rng.random() < 0.15:  # a typo, a truncation, or the tool's own name in front
            i = rng.randrange(len(path))
            path[i] = rng.choice([path[i][:-1], path[i] + "s", path[i].upper(), self.name])
        tokens = list(path)
        params = self.params.get(tuple(path), [])
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

    def arguments(self, rng: random.Random) -> Any:
        """Tool arguments: mostly argv, some one command string (quoting broken at times), some malformed."""
        roll = rng.random()
        if roll < 0.8:
            return {"argv": self.argv(rng)}
        if roll < 0.9:
            command = shlex.join(self.argv(rng))
            return {"command": command + rng.choice(["", "", " '", ' "unclosed', " \\"])}
        return rng.choice([{}, {"argv": "--help"}, {"argv": [1, 2]}, {"argv": None}, {"argv": [], "command": ""},
                           {"argv": ["--help"], "extra": 1}, {"command": 7}, {"argv": [["nested"]]},
                           {"argv": ["x"] * 2000}])  # fmt: skip


def _classify(result: Any, counts: dict[str, int], examples: dict[str, str]) -> None:
    counts["answered"] += 1
    data = envelope(result)
    outcome = "ok" if data.get("ok") else str(data.get("error"))
    counts["outcomes"][outcome] = counts["outcomes"].get(outcome, 0) + 1
    texts = [c.text for c in result.content if getattr(c, "type", "") == "text"]
    texts += [str(data.get(k, "")) for k in ("message", "output", "stderr")]
    enveloped = isinstance(data.get("ok"), bool) and data["ok"] == (not result.is_error)
    if not data.get("ok", True):
        enveloped = enveloped and data.get("error") in KINDS
    for key, bad in (("not enveloped", not enveloped), ("internal", data.get("error") == "internal"),
                     ("tracebacks", any(TRACEBACK.search(t) for t in texts))):  # fmt: skip
        if bad:
            counts[key] += 1
            examples.setdefault(key, (data.get("message") or " ".join(texts))[:300])


async def fuzz(label: str, source: list[str], tree: Any, calls: int, seed: int) -> dict[str, Any]:
    """`calls` generated calls to `mcp-cli serve <source>` over one stdio session; the counts. Tracebacks are
    counted in what the caller reads and in the server's log (stderr)."""
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    rng = random.Random(seed)
    words = Vocabulary(tree)
    counts = dict.fromkeys(("calls", "answered", "not enveloped", "internal", "tracebacks", "server deaths"), 0)
    counts["outcomes"] = {}
    examples: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as work, tempfile.TemporaryFile("w+") as errlog:  # scripts write in `work`
        params = StdioServerParameters(command=sys.executable, args=["-m", "mcp_cli", "serve", *source], cwd=work,
                                       env={**os.environ, "PYTHONPATH": str(ROOT)})  # fmt: skip
        async with Client(stdio_client(params, errlog=errlog)) as client:
            start = time.perf_counter()
            for _ in range(calls):
                counts["calls"] += 1
                arguments = words.arguments(rng)
                try:
                    with anyio.fail_after(CALL_WAIT):
                        result = await client.call_tool(tree.name, arguments)
                except Exception as exc:  # no answer: the server died or hung
                    counts["server deaths"] += 1
                    examples.setdefault("server deaths", f"{arguments!r}: {exc!r}"[:300])
                    break
                _classify(result, counts, examples)
            seconds = time.perf_counter() - start
        errlog.seek(0)
        logged = errlog.read()
    counts["tracebacks"] += logged.count("Traceback (most recent call last)")
    if "Traceback" in logged:
        examples.setdefault("tracebacks", logged[logged.index("Traceback") :][:300])
    return {"source": label, "seconds": seconds, **counts, "examples": examples}


def argv_runs(total: int, seed: int = 1) -> list[dict[str, Any]]:
    """`total` generated calls shared among a skill tree, a handler tree and a wrapped upstream."""
    from mcp_cli.sources.loader import load

    marker = f"rel-{uuid.uuid4().hex[:8]}"
    with tempfile.TemporaryDirectory() as tmp:
        config = _awkward_config(Path(tmp), marker, {"awkward": {}})
        exclude = [f for tool in sorted(SLOW) for f in ("--exclude-tool", tool)]
        targets = [
            ("skill (argtool fixture)", [str(FIXTURES / "skills" / "argtool")], {}),
            ("handler tree (faults fixture)", [str(FIXTURES / "faults" / "tree.json")], {}),
            ("wrapped upstream (awkward)", [str(config), *exclude], {"exclude_tools": sorted(SLOW)}),
        ]
        runs = []
        for i, (label, source, options) in enumerate(targets):
            tree = load(source[0], **options)
            share = total // len(targets) + (i < total % len(targets))
            runs.append(anyio.run(fuzz, label, source, tree, share, seed + i))
        runs[-1]["orphans"] = orphans(marker)  # the wrapped upstream's processes carry the marker
    return runs


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
    subprocess.run([sys.executable, "-m", "mcp_cli", "inspect", str(config)], env={**os.environ, **cache},
                   capture_output=True)  # fmt: skip
    params = StdioServerParameters(command=sys.executable, args=["-m", "mcp_cli", "serve", str(config)],
                                   env={**os.environ, **cache})  # fmt: skip
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

    counts = {"sessions": sessions, "answered": 0, "lost": 0, "crossed": 0}

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
        got = [envelope(r).get("data") or {} for r in (first, again)]
        counts["crossed"] += got != [{"query": token}, {"query": token, "tags": [str(i)]}]

    async with anyio.create_task_group() as tg:
        for i in range(sessions):
            tg.start_soon(one, i)
    return counts


def http_run(sessions: int = 100) -> dict[str, Any]:
    """`sessions` concurrent sessions against one `mcp-cli serve --http` of a wrapped upstream, each calling
    it twice with arguments of its own."""
    import socket

    marker = f"rel-{uuid.uuid4().hex[:8]}"
    with tempfile.TemporaryDirectory() as tmp:
        config = _awkward_config(Path(tmp), marker, {"awkward": {}})
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
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


def run(argv: int = 2000, sessions: int = 100) -> dict[str, Any]:
    """Every part, with a tool-list cache of its own (the user's is neither read nor written)."""
    with own_cache():
        parts = {"argv": argv_runs(argv), "faults": fault_runs(), "http": http_run(sessions)}
    return {**parts, "malformed": malformed_run()}


def verdicts(results: dict[str, Any]) -> dict[str, bool]:
    """Whether each part is at its ideal: every call answered (as due, for faults), nothing outside the
    envelope, 0 tracebacks, 0 deaths, 0 orphans, 0 lost or crossed; at least 2,000 calls, 20 malformed skills."""
    argv, faults, http, bad = results["argv"], results["faults"], results["http"], results["malformed"]
    calls = sum(r["calls"] for r in argv)
    flawless = all(r[k] == 0 for r in argv for k in ("not enveloped", "internal", "tracebacks", "server deaths"))
    return {
        "argv": calls >= 2000 and sum(r["answered"] for r in argv) == calls and flawless
        and sum(r.get("orphans", 0) for r in argv) == 0,
        "faults": all(f["as due"] == f["answered"] == f["calls"] and f["healthy after"] and f["tracebacks"] == 0
                      and f["orphans"] == 0 for f in faults),
        "http": http["answered"] == http["sessions"] and http["crossed"] == 0 and http["server alive"]
        and http["orphans"] == 0,
        "malformed": bad["skills"] >= 20 and bad["other failures"] == 0,
    }  # fmt: skip


def report(results: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(markdown lines, target lines with pass/MISSED) for `run`'s results."""
    argv, faults, http, bad = results["argv"], results["faults"], results["http"], results["malformed"]
    keys = ("calls", "answered", "not enveloped", "internal", "tracebacks", "server deaths")
    lines = ["### Generated argv", "", "| tree | " + " | ".join(keys) + " | calls/s |", "|---|" + "---|" * 7]
    for r in argv:
        lines.append(
            f"| {r['source']} | " + " | ".join(f"{r[k]:,}" for k in keys) + f" | {r['calls'] / r['seconds']:.0f} |"
        )
    total = {k: sum(r[k] for r in argv) for k in keys}
    lines.append("| all | " + " | ".join(f"{total[k]:,}" for k in keys) + " | |")
    lines.append("")
    for r in argv:
        outcomes = ", ".join(f"{k} {n:,}" for k, n in sorted(r["outcomes"].items(), key=lambda kv: -kv[1]))
        lines.append(f"- {r['source']}, outcomes: {outcomes}")
        lines += [f"- {r['source']}, {kind}: `{text}`" for kind, text in r["examples"].items()]
    lines += ["", "### Faults", "", "| upstream | calls | answered | as due | healthy one after | server tracebacks "
              "| orphans |", "|---|---|---|---|---|---|---|"]  # fmt: skip
    for f in faults:
        lines.append(f"| {f['fault']} | {f['calls']} | {f['answered']} | {f['as due']} | "
                     f"{'yes' if f['healthy after'] else 'NO'} | {f['tracebacks']} | {f['orphans']} |")  # fmt: skip
    lines += ["", "### Concurrent HTTP sessions", "",
              f"{http['sessions']} sessions at once, two calls each: {http['answered']} answered, {http['lost']} lost, "
              f"{http['crossed']} crossed, in {http['seconds']:.1f} s; server alive after: {http['server alive']}; "
              f"orphans: {http['orphans']}.",
              "", "### Malformed skills", "",
              f"{bad['skills']} skills: {bad['as named']} gave exactly the outcome their case names "
              f"({bad['named errors']} a named error, the rest their warnings), "
              f"{bad['other failures']} did not."]  # fmt: skip
    lines += [f"- {name}: `{text}`" for name, text in bad["examples"].items()]
    ok = verdicts(results)
    due = sum(f["as due"] for f in faults)
    argv_orphans = sum(r.get("orphans", 0) for r in argv)
    targets = [
        f"- generated argv: {total['answered']:,} of {total['calls']:,} answered, {total['not enveloped']} outside "
        f"the envelope, {total['internal']} internal, {total['tracebacks']} tracebacks, {total['server deaths']} "
        f"server deaths, {argv_orphans} orphans -- {mark(ok['argv'])}",
        f"- faults: {due} of {sum(f['calls'] for f in faults)} calls answered with the kind and reason due, the "
        f"healthy upstream serving after every fault, {sum(f['tracebacks'] for f in faults)} tracebacks, "
        f"{sum(f['orphans'] for f in faults)} orphans -- {mark(ok['faults'])}",
        f"- {http['sessions']} concurrent HTTP sessions: {http['lost']} lost, {http['crossed']} crossed, "
        f"{http['orphans']} orphans -- "
        f"{mark(ok['http'])}",
        f"- {bad['skills']} malformed skills, each with the exact error or warnings named: {bad['other failures']} "
        f"otherwise -- "
        f"{mark(ok['malformed'])}",
    ]
    return lines, targets


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.reliability", description=__doc__.split("\n\n")[0])
    ap.add_argument("--argv", type=int, default=2000, help="generated calls in all (default 2,000)")
    ap.add_argument("--long", action="store_true", help="10,000 generated calls")
    ap.add_argument("--sessions", type=int, default=100, help="concurrent HTTP sessions (default 100)")
    args = ap.parse_args()
    lines, targets = report(run(10_000 if args.long else args.argv, args.sessions))
    print("\n".join(lines) + "\n\n" + "\n".join(targets))


if __name__ == "__main__":
    main()
