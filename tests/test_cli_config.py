"""The `mcp-cli` command with MCP client configs, through the real process: the same config options on every
command, errors that tell the truth (TOML, mistyped keys, unknown servers), the HTTP start line as information,
and `wrap` writing `${VAR}` references instead of literal secrets."""

import json
import os
import subprocess
import sys

import pytest

from . import forked
from .conftest import DEMO, ROOT, budget, free_port, served, text, wait_for_port

AWKWARD = ROOT / "tests" / "fixtures" / "upstreams" / "awkward.py"
CONFIG_FLAGS = ["--name", "--refresh", "--server", "--exclude-server", "--tool", "--exclude-tool", "--threshold"]

# An upstream that answers one tool, `env`, with the environment variables it was started with (those asked for).
ENV_ECHO = """
import json, os
import anyio
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

SCHEMA = {"type": "object", "properties": {"names": {"type": "array", "items": {"type": "string"}}}}

async def list_tools(ctx, params):
    return types.ListToolsResult(tools=[types.Tool(name="env", description="Show env.", input_schema=SCHEMA)])

async def call_tool(ctx, params):
    names = (params.arguments or {}).get("names") or []
    found = {n: os.environ.get(n) for n in names}
    return types.CallToolResult(content=[types.TextContent(type="text", text=json.dumps(found, sort_keys=True))])

async def main():
    server = Server("env-echo", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())

anyio.run(main)
"""


def cli(*args: str, env: dict[str, str] | None = None, cwd=ROOT) -> subprocess.CompletedProcess:
    """`mcp-cli args` with `env` added to the environment, forked from a process that imported mcp-cli once
    (tests/forked.py)."""
    return forked.mcp_cli(*args, env={**os.environ, **(env or {})}, cwd=cwd, timeout=budget(120))


@pytest.fixture(scope="module")
def two(tmp_path_factory):
    """A config of two awkward upstreams, and an environment with its own tool-list cache."""
    folder = tmp_path_factory.mktemp("two")
    config = folder / "two.json"
    entry = {"command": sys.executable, "args": [str(AWKWARD)]}
    config.write_text(json.dumps({"mcpServers": {"alpha": entry, "beta": entry}}))
    return config, {"MCP_CLI_CACHE_DIR": str(folder / "cache")}


@pytest.mark.parametrize("command", ["serve", "wrap", "tokens", "run", "inspect"])
def test_every_command_that_reads_a_config_takes_the_same_options(command):
    shown = cli(command, "--help").stdout
    assert [flag for flag in CONFIG_FLAGS if flag not in shown] == []


def test_inspect_and_run_take_the_config_options(two):
    config, env = two
    proc = cli("inspect", "--server", "alpha", "--tool", "echo*", "--name", "team", str(config), env=env)
    assert proc.returncode == 0, proc.stderr
    assert [line.split("  ")[0] for line in proc.stdout.splitlines()] == [
        "team",
        "team search",
        "team alpha",
        "team alpha echo-args",
    ]
    ran = cli("run", "--refresh", "--exclude-server", "alpha", "--name", "team", str(config), "--", "--help", env=env)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.startswith("team - ") and "beta" in ran.stdout and "alpha" not in ran.stdout
    echoed = cli("run", "--server", "beta", str(config), "--", "beta", "echo-args", "--query", "hi", env=env)
    assert (echoed.returncode, json.loads(echoed.stdout)) == (0, {"query": "hi"}), echoed.stderr


def test_run_says_where_its_own_options_go(two):
    config, env = two
    proc = cli("run", str(config), "--server", "beta", "--", "beta", "pid", env=env)
    assert proc.returncode == 2
    assert f"put mcp-cli's options before TREE: mcp-cli run --server beta {config} -- ..." in proc.stderr


@pytest.mark.parametrize("command", ["inspect", "run", "serve", "wrap"])
def test_a_broken_toml_file_is_reported_as_toml(tmp_path, command):
    config = tmp_path / "config.toml"
    config.write_text('[mcp_servers.git]\ncommand = "uvx"\nargs = ["mcp-server-git"\n')
    proc = cli(command, str(config), cwd=tmp_path)
    assert proc.returncode == 2
    assert f"{config}: not valid TOML" in proc.stderr and "JSON" not in proc.stderr, proc.stderr


@pytest.mark.parametrize("command", ["inspect", "run", "serve", "wrap"])
def test_a_mistyped_top_level_key_gets_a_did_you_mean(tmp_path, command):
    config = tmp_path / "team.json"
    config.write_text(json.dumps({"mcpservers": {"git": {"command": "uvx", "args": ["mcp-server-git"]}}}))
    proc = cli(command, str(config), cwd=tmp_path)
    assert proc.returncode == 2
    assert "unknown top-level key 'mcpservers' (did you mean 'mcpServers'?)" in proc.stderr
    assert "not an mcp-cli tree" not in proc.stderr


@pytest.mark.parametrize("command", ["inspect", "serve", "tokens", "run"])
def test_an_unknown_server_lists_the_servers_there_are(two, command):
    config, env = two
    proc = cli(command, "--server", "alpah", str(config), env=env)
    assert proc.returncode == 2
    assert "no server named 'alpah' (did you mean 'alpha'?); the file defines 'alpha', 'beta'" in proc.stderr


def test_http_start_line_is_information_not_a_warning():
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcp_cli", "serve", str(DEMO), "--http", f"127.0.0.1:{port}"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for_port(port, proc)
    finally:
        proc.terminate()
        _, stderr = proc.communicate(timeout=budget(10))
    assert (
        stderr.splitlines()[0] == f"serving demo over streamable HTTP at http://127.0.0.1:{port}/mcp and OpenAPI at "
        f"http://127.0.0.1:{port}/openapi.json (no token required)"
    )


def test_warnings_still_say_warning(tmp_path):
    skill = tmp_path / "odd"
    skill.mkdir()
    (skill / "SKILL.md").write_text("---\nname: odd\ndescription: An odd skill.\ncolor: red\n---\nBody.\n")
    proc = cli("inspect", str(skill))
    assert proc.returncode == 0 and "warning: SKILL.md: unknown frontmatter field(s) color" in proc.stderr


@pytest.mark.anyio
async def test_wrap_writes_no_secret_and_the_wrapped_server_reads_it_from_its_environment(tmp_path):
    secret = "sk-test-4f9Qz7Lm2Xc8Vb1Nd6Rt3Yw5"
    upstream = tmp_path / "env_echo.py"
    upstream.write_text(ENV_ECHO)
    config = tmp_path / "vault.json"
    config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "vault": {
                        "command": sys.executable,
                        "args": [str(upstream)],
                        "env": {"API_KEY": secret, "NODE_ENV": "production"},
                    }
                }
            }
        )
    )
    out = tmp_path / "vault-mcp"
    env = {"MCP_CLI_CACHE_DIR": str(tmp_path / "cache")}
    proc = cli("wrap", str(config), "-o", str(out), env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "server 'vault': env API_KEY held a literal secret" in proc.stderr
    assert "set API_KEY in the environment" in proc.stderr and secret not in proc.stderr + proc.stdout
    files = [p for p in out.rglob("*") if p.is_file()]
    assert files and [p for p in files if secret.encode() in p.read_bytes()] == []
    frozen = json.loads((out / "vault_mcp" / "data" / "mcp-cli-tree.json").read_text())
    assert frozen["upstreams"]["vault"]["env"] == {"API_KEY": "${API_KEY}", "NODE_ENV": "production"}

    given = "set-where-the-server-runs-123"
    async with served(str(out / "vault_mcp" / "__main__.py"), command=sys.executable, env={"API_KEY": given}) as c:
        result = await c.call_tool("vault", {"argv": ["vault", "env", "--names", "API_KEY", "--names", "NODE_ENV"]})
        assert not result.is_error, text(result)
        assert json.loads(text(result)) == {"API_KEY": given, "NODE_ENV": "production"}
