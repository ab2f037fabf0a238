"""Real hosts run once, non-interactively, against a scripted model (`scripted_model`), with a home folder of their
own (nothing of the user's setup is read or touched) and nothing leaving the machine: Claude Code (`claude -p`,
pointed at the model by ANTHROPIC_BASE_URL, its other traffic off) and Codex (`codex exec`, with a model provider
whose base_url is the model, speaking the Responses API). Both are the npm packages pinned in tests/node."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BIN = ROOT / "tests" / "node" / "node_modules" / ".bin"
CLAUDE, CODEX = BIN / "claude", BIN / "codex"
QUIET = {  # no telemetry, updates, error reports or other traffic beyond the model's address
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "DISABLE_BUG_COMMAND": "1",
    "CLAUDE_CODE_ENABLE_TELEMETRY": "0",
    "NO_UPDATE_NOTIFIER": "1",
}


def mcp_cli(*args: str) -> dict[str, Any]:
    """An MCP server entry (stdio) running this checkout's `mcp-cli serve ARGS`."""
    return {"command": sys.executable, "args": ["-m", "mcp_cli", "serve", *args], "env": _pythonpath()}


def _pythonpath() -> dict[str, str]:
    return {"PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)}


def _env(home: Path, **more: str) -> dict[str, str]:
    """A host's environment: PATH, its own HOME, and `more`."""
    return {"PATH": os.environ["PATH"], "HOME": str(home), "LANG": "C.UTF-8", **QUIET, **_pythonpath(), **more}


def claude(
    url: str, home: Path, servers: dict[str, dict[str, Any]], prompt: str, allowed: list[str], timeout: float
) -> subprocess.CompletedProcess[str]:
    """`claude -p PROMPT` with `servers` as its only MCP servers, the `allowed` tools allowed without asking."""
    home.mkdir(parents=True, exist_ok=True)
    config = home / "mcp-servers.json"
    config.write_text(json.dumps({"mcpServers": servers}))
    argv = [
        str(CLAUDE),
        "-p",
        prompt,
        "--mcp-config",
        str(config),
        "--strict-mcp-config",
        "--output-format",
        "json",
        "--model",
        "claude-sonnet-4-5",
        "--allowedTools",
        ",".join(allowed),
    ]
    env = _env(home, ANTHROPIC_BASE_URL=url, ANTHROPIC_API_KEY="sk-scripted", IS_SANDBOX="1", MCP_TIMEOUT="120000")
    return subprocess.run(
        argv, env=env, cwd=home, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
    )


def codex(
    url: str, home: Path, servers: dict[str, dict[str, Any]], prompt: str, timeout: float
) -> subprocess.CompletedProcess[str]:
    """`codex exec PROMPT` with `servers` as its MCP servers, its model provider the scripted model (Responses)."""
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    lines = [
        'model = "gpt-5"',
        'model_provider = "scripted"',
        'approval_policy = "never"',
        'sandbox_mode = "danger-full-access"',
        "[model_providers.scripted]",
        'name = "scripted"',
        f'base_url = "{url}/v1"',
        'wire_api = "responses"',
        'env_key = "SCRIPTED_API_KEY"',
        "request_max_retries = 0",
        "stream_max_retries = 0",
    ]
    for name, server in servers.items():
        lines += [
            f"[mcp_servers.{name}]",
            f"command = {json.dumps(server['command'])}",
            f"args = {json.dumps(server.get('args', []))}",
            "startup_timeout_sec = 120",
            "required = true",
        ]  # (required: the first turn waits for the server; else it races)
        if server.get("env"):
            lines += [f"[mcp_servers.{name}.env]", *(f"{k} = {json.dumps(v)}" for k, v in server["env"].items())]
    (codex_home / "config.toml").write_text("\n".join(lines) + "\n")
    argv = [str(CODEX), "exec", "--skip-git-repo-check", "--json", prompt]
    env = _env(home, CODEX_HOME=str(codex_home), SCRIPTED_API_KEY="sk-scripted")
    return subprocess.run(
        argv, env=env, cwd=home, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
    )
