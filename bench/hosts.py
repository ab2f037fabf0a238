"""Hosts: what the real Claude Code and Codex CLIs send their model for one scripted task (find and call 3 commands
of five real servers: server-everything, server-filesystem, server-memory, mcp-server-time, mcp-server-git), with
the servers configured directly and behind mcp-cli (one tool), and how long `mcp-cli serve` takes to answer its
first `tools/list` next to a bare SDK server.

The model is scripted (tests/scripted_model.py) and the hosts run offline (tests/host_runs.py). Directly, the
model loads the three tools it needs where the host defers them (Claude Code's ToolSearch `select:`), then calls
them; behind mcp-cli, as an agent takes it now, one call reads the three servers' listings (a sequence of helps: the
tool's description names the servers, and a listing shows each command's usage line) and one call runs the three
commands (a sequence): 2 calls. Counts
are o200k_base tokens of what the host sends: `total` is every request body of the task summed (each request
repeats the host's system prompt and its own tools, so more turns cost more); `MCP` is the part the servers
decide: their tool definitions and deferred-list names in each request, and the results the model is shown.
"""

from __future__ import annotations

import json
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from mcp_cli.cli import tokens
from tests import host_runs
from tests.scripted_model import Model, Step, call, serving

BIN = host_runs.BIN
TASK = (
    ("time", "get_current_time", "get-current-time", {"timezone": "UTC"}),
    ("git", "git_status", "status", {"repo_path": "{repo}"}),
    ("filesystem", "list_directory", "list-directory", {"path": "{repo}"}),
)
STARTS = 5  # cold starts of each server measured


def five_servers(folder: Path) -> tuple[dict[str, dict[str, Any]], Path]:
    """The five servers (as an mcpServers mapping) and the git repository the task looks at, in the folder the
    host works in (`folder/home`): server-filesystem takes a host's roots as its allowed folders."""
    repo = folder / "home" / "repo"
    repo.mkdir(parents=True, exist_ok=True)
    (repo / "notes.txt").write_text("hello\n")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    servers = {
        "everything": {"command": str(BIN / "mcp-server-everything")},
        "filesystem": {"command": str(BIN / "mcp-server-filesystem"), "args": [str(repo)]},
        "memory": {"command": str(BIN / "mcp-server-memory"), "env": {"MEMORY_FILE_PATH": str(folder / "m.jsonl")}},
        "time": {"command": sys.executable, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]},
        "git": {"command": sys.executable, "args": ["-m", "mcp_server_git"]},
    }
    return servers, repo


def _filled(arguments: dict[str, Any], repo: Path) -> dict[str, Any]:
    return {k: v.format(repo=repo) if isinstance(v, str) else v for k, v in arguments.items()}


def direct_script(host: str, repo: Path) -> list[Step]:
    """Load the three tools where the host defers them (Claude Code), then call each."""
    names = [f"mcp__{server}__{tool}" for server, tool, _, _ in TASK]
    calls = [call(n, **_filled(a, repo)) for n, (_, _, _, a) in zip(names, TASK, strict=True)]
    return ([call("ToolSearch", query="select:" + ",".join(names))] if host == "claude" else []) + calls


def mcp_cli_script(tool: str, repo: Path) -> list[Step]:
    """As an agent takes it now: the tool's description names the five servers, so one call reads the listings of
    the three it needs (a sequence of helps, each command with its usage line), and one call runs the three commands
    (a sequence)."""
    helps = " ; ".join(f"{server} --help" for server, _, _, _ in TASK)
    runs = []
    for server, _, command, arguments in TASK:
        options = [t for k, v in _filled(arguments, repo).items() for t in (f"--{k.replace('_', '-')}", v)]
        runs.append(shlex.join([server, command, *options]))
    return [call(tool, command=helps), call(tool, command=" ; ".join(runs))]


def _count(value: Any) -> int:
    return tokens.count(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))


def _mcp_part_claude(body: dict[str, Any]) -> int:
    """MCP tool definitions, deferred-list names, and the results of MCP tools (and of ToolSearch) in a request."""
    n = sum(_count(t) for t in body["tools"] if t["name"].startswith("mcp__"))
    mcp_ids = set()
    for message in body["messages"]:
        for block in message["content"] if isinstance(message["content"], list) else []:
            if block.get("type") == "tool_use" and (block["name"].startswith("mcp__") or block["name"] == "ToolSearch"):
                mcp_ids.add(block["id"])
            elif block.get("type") == "tool_result" and block["tool_use_id"] in mcp_ids:
                content = block["content"]
                items = [content] if isinstance(content, str) else content
                n += sum(_count(c) for c in items if "<system-reminder>" not in json.dumps(c)[:40])
            elif block.get("type") == "text" and "deferred tools" in block.get("text", ""):
                n += sum(_count(line) for line in block["text"].splitlines() if line.startswith("mcp__"))
    return n


def _mcp_part_codex(body: dict[str, Any]) -> int:
    """MCP namespaces (their tool definitions) and the outputs of MCP calls in a request."""
    n = sum(_count(t) for t in body["tools"] if str(t.get("name", "")).startswith("mcp__"))
    mcp_ids = set()
    for item in body.get("input") or []:
        if item.get("type") == "function_call" and str(item.get("namespace", "")).startswith("mcp__"):
            mcp_ids.add(item["call_id"])
        elif item.get("type") in ("tool_search_call", "tool_search_output"):
            n += _count(item)
        elif item.get("type") == "function_call_output" and item["call_id"] in mcp_ids:
            n += _count(item["output"])
    return n


def measure(host: str, servers: dict[str, Any], script: list[Step], folder: Path) -> dict[str, Any]:
    """Run `host` on `script`; the tokens it sent in total, the MCP part, and its requests."""
    with serving(script) as model:
        if host == "claude":
            allowed = ["ToolSearch", *(f"mcp__{s}" for s in servers)]
            done = host_runs.claude(model.url, folder / "home", servers, "Do the task.", allowed, 600)
        else:
            done = host_runs.codex(model.url, folder / "home", servers, "Do the task.", 600)
    if done.returncode != 0:
        raise RuntimeError(f"{host} exited with {done.returncode}: {done.stderr.strip()[-300:]}")
    loop = _loop(host, model)
    part = _mcp_part_claude if host == "claude" else _mcp_part_codex
    failed = _failed_calls(host, loop[-1])
    return {
        "requests": len(loop),
        "total": sum(_count(b) for b in loop),
        "mcp": sum(part(b) for b in loop),
        "first": _count(loop[0]),
        "failed": failed,
    }


def _loop(host: str, model: Model) -> list[dict[str, Any]]:
    return model.loop("/v1/messages" if host == "claude" else "/v1/responses")


def _failed_calls(host: str, last: dict[str, Any]) -> int:
    """Calls the host refused or that failed (the script must reach every command)."""
    if host == "claude":
        blocks = [b for m in last["messages"] if isinstance(m["content"], list) for b in m["content"]]
        return sum(1 for b in blocks if b.get("type") == "tool_result" and b.get("is_error"))
    outputs = [i for i in last.get("input") or [] if i.get("type") == "function_call_output"]
    return sum(1 for o in outputs if isinstance(o["output"], str) and o["output"].startswith("unsupported call"))


ANSWERS = (["--help"], ["text", "--help"], ["text", "extract", "--help"], ["text", "extract"], ["text", "extrct"])


def envelope_cost() -> tuple[int, int]:
    """o200k tokens of five pdf answers (help and errors) as the model reads them: the text, against
    JSON.stringify(structuredContent), which hosts show instead when a result has it."""
    import anyio

    from mcp_cli.engine.runtime import Runtime
    from mcp_cli.sources.loader import load

    runtime = Runtime(load(str(Path(__file__).resolve().parent.parent / "skills" / "pdf")))
    results = [anyio.run(runtime.call, argv) for argv in ANSWERS]
    as_text = sum(tokens.count(r.text()) for r in results)
    as_json = sum(tokens.count(json.dumps(r.structured(), separators=(",", ":"), ensure_ascii=False)) for r in results)
    return as_text, as_json


def run(hosts: tuple[str, ...] = ("claude", "codex")) -> dict[str, Any]:
    """Per host, the direct and the mcp-cli runs; then the cold starts and the envelope's cost."""
    out: dict[str, Any] = {"envelope": envelope_cost()}
    for host in hosts:
        for setup in ("direct", "mcp-cli"):
            with tempfile.TemporaryDirectory(prefix=f"bench-{host}-") as tmp:
                folder = Path(tmp)
                servers, repo = five_servers(folder)
                if setup == "direct":
                    out[host, setup] = measure(host, servers, direct_script(host, repo), folder)
                    continue
                config = folder / "five.json"
                config.write_text(json.dumps({"mcpServers": servers}))
                wrapped = {"five": host_runs.mcp_cli(str(config))}
                tool = "five" if host == "claude" else "mcp__five__five"
                out[host, setup] = measure(host, wrapped, mcp_cli_script(tool, repo), folder)
    out["starts"] = cold_starts()
    return out


def _first_list(argv: list[str], env: dict[str, str] | None = None) -> float:
    """Seconds from starting `argv` (a stdio MCP server) to its answer to `tools/list`, sent at once after the
    handshake as a host does."""
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}},
    ]
    start = time.perf_counter()
    with subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
    ) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in lines))
        proc.stdin.flush()
        for line in proc.stdout:
            if json.loads(line).get("id") == 2:
                took = time.perf_counter() - start
                proc.stdin.close()
                proc.wait(30)
                return took
    raise RuntimeError(f"{argv[0]} gave no tools/list answer")


def cold_starts() -> dict[str, float]:
    """Median seconds to the first tools/list answer: a bare SDK server, `mcp-cli serve` of the pdf skill, and of
    the five servers' config (cache cold: it starts them all; warm: their tools remembered from a start before)."""
    import os

    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, **host_runs._pythonpath()}
    serve = [sys.executable, "-m", "mcp_cli", "serve"]
    with tempfile.TemporaryDirectory(prefix="bench-starts-") as tmp:
        servers, _ = five_servers(Path(tmp))
        config = Path(tmp) / "five.json"
        config.write_text(json.dumps({"mcpServers": servers}))
        cold = []
        for i in range(STARTS):
            cold.append(_first_list([*serve, str(config)], {**env, "MCP_CLI_CACHE_DIR": f"{tmp}/cache-{i}"}))
        warm_env = {**env, "MCP_CLI_CACHE_DIR": f"{tmp}/cache-0"}
        cases = {
            "bare SDK server": [sys.executable, str(root / "bench" / "bare_server.py")],
            "mcp-cli serve skills/pdf": [*serve, str(root / "skills" / "pdf")],
        }
        out = {name: statistics.median(_first_list(argv, env) for _ in range(STARTS)) for name, argv in cases.items()}
        out["mcp-cli serve five.json (cold cache)"] = statistics.median(cold)
        out["mcp-cli serve five.json (warm cache)"] = statistics.median(
            _first_list([*serve, str(config)], warm_env) for _ in range(STARTS)
        )
    return out


def report(results: dict[str, Any]) -> list[str]:
    lines = [
        "| host | setup | requests | tokens sent, total | MCP part | first request | failed calls |",
        "|---|---|---|---|---|---|---|",
    ]
    for key, r in results.items():
        if key in ("starts", "envelope"):
            continue
        host, setup = key
        lines.append(
            f"| {host} | {setup} | {r['requests']} | {r['total']:,} | {r['mcp']:,} | {r['first']:,} | {r['failed']} |"
        )
    for host in ("claude", "codex"):
        if (host, "direct") in results and (host, "mcp-cli") in results:
            d, m = results[host, "direct"], results[host, "mcp-cli"]
            lines.append(
                f"\n{host}: mcp-cli / direct: total {m['total'] / d['total']:.2f}x, MCP part "
                f"{m['mcp'] / d['mcp']:.2f}x, first request {m['first'] / d['first']:.2f}x."
            )
    as_text, as_json = results["envelope"]
    lines.append(
        f"\nFive pdf answers (help and errors) as the model reads them: {as_text} tokens as text, {as_json} "
        f"as the JSON envelope ({as_json / as_text:.2f}x), which hosts show when structuredContent is sent."
    )
    lines += ["", "| server (stdio) | first tools/list answer, median s |", "|---|---|"]
    lines += [f"| {name} | {seconds:.2f} |" for name, seconds in results["starts"].items()]
    return lines


if __name__ == "__main__":
    print("\n".join(report(run())))
