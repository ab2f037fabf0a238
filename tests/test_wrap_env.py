"""A wrapped stdio server is started as the config's client starts it: Claude Code's `.mcp.json` gives it the
caller's whole environment with the entry's `env` over it, Codex's config.toml only Codex's short list and its
`env_vars`; an unset `${VAR}` is an error naming the server and the variable when the server starts; a relative
`cwd` is the config folder's; the tool is named after what the config holds. And the newcomer path: a `.mcp.json`
of five real servers lists all five on the first try, with an empty cache and the one-shot default budget."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_cli.sources.discovery import STARTUP_ENV
from mcp_cli.sources.mcp_tools import default_name
from mcp_cli.text import kebab

from . import forked
from .conftest import NODE_BIN, ROOT, budget, served, text

pytestmark = pytest.mark.anyio
SLOW_START = ROOT / "tests" / "fixtures" / "upstreams" / "slow_start.py"
SERVER = {"command": sys.executable, "args": [str(SLOW_START)]}


def mcp_cli(*args: str, env: dict[str, str | None], cwd: Path = ROOT) -> subprocess.CompletedProcess:
    """`mcp-cli ARGS` with `env` over the environment (None unsets a variable), forked from a process that
    imported mcp-cli once (tests/forked.py)."""
    full = {k: v for k, v in {**os.environ, **env}.items() if v is not None}
    return forked.mcp_cli(*args, env=full, cwd=cwd, timeout=budget(120))


def write(path: Path, servers: dict[str, dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


async def test_a_claude_code_config_gives_the_server_the_callers_environment_and_its_env_over_it(tmp_path):
    config = write(tmp_path / ".mcp.json", {"probe": {**SERVER, "env": {"FROM_CONFIG": "cfg", "BOTH": "config"}}})
    caller = {"MCP_CLI_CACHE_DIR": str(tmp_path / "cache"), "SSL_CERT_FILE": "/etc/ssl/corporate.pem", "BOTH": "caller"}
    async with served("serve", str(config), env=caller) as client:
        seen = {}
        for name in ("SSL_CERT_FILE", "FROM_CONFIG", "BOTH"):
            seen[name] = text(await client.call_tool("probe", {"argv": ["probe", "variable", "--name", name]}))
    assert seen == {"SSL_CERT_FILE": "/etc/ssl/corporate.pem", "FROM_CONFIG": "cfg", "BOTH": "config"}


async def test_a_codex_config_passes_its_own_list_and_env_vars_only(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text(f"""
[mcp_servers.probe]
command = {json.dumps(sys.executable)}
args = [{json.dumps(str(SLOW_START))}]
env = {{ FROM_CONFIG = "cfg" }}
env_vars = ["NAMED_TOKEN"]
""")
    caller = {
        "MCP_CLI_CACHE_DIR": str(tmp_path / "cache"),
        "SSL_CERT_FILE": "/etc/ssl/corporate.pem",
        "NAMED_TOKEN": "t0k",
        "TZ": "Europe/Paris",
    }
    async with served("serve", str(config), env=caller) as client:
        seen = {}
        for name in ("SSL_CERT_FILE", "NAMED_TOKEN", "TZ", "FROM_CONFIG"):
            seen[name] = text(await client.call_tool("probe", {"argv": ["probe", "variable", "--name", name]}))
    # SSL_CERT_FILE is not on Codex's list; TZ is; env_vars names NAMED_TOKEN
    assert seen == {"SSL_CERT_FILE": "<unset>", "NAMED_TOKEN": "t0k", "TZ": "Europe/Paris", "FROM_CONFIG": "cfg"}


async def test_an_unset_variable_is_an_error_naming_the_server_and_the_variable(tmp_path):
    variables = {"API_KEY": "${VAULT_KEY_FOR_TEST}", "MODE": "${VAULT_MODE_FOR_TEST:-plain}"}
    config = write(tmp_path / "team.json", {"vault": {**SERVER, "env": variables}})
    env = {"MCP_CLI_CACHE_DIR": str(tmp_path / "cache"), "VAULT_KEY_FOR_TEST": None}
    listed = mcp_cli("inspect", str(config), env=env)
    assert listed.returncode == 0, listed.stderr
    said = (
        "server 'vault': cannot list its tools: the environment variable VAULT_KEY_FOR_TEST is not set (the "
        "configuration uses ${VAULT_KEY_FOR_TEST}); set it, or give a default in the configuration: "
        "${VAULT_KEY_FOR_TEST:-value}; shown as unavailable"
    )
    assert listed.stderr.splitlines() == [f"warning: {said}"]  # one line
    # listed while it is set (the cache remembers the tools, never the value); a start without it is the error
    assert "team vault variable" in mcp_cli("inspect", str(config), env={**env, "VAULT_KEY_FOR_TEST": "s3"}).stdout
    async with served("serve", str(config), env={"MCP_CLI_CACHE_DIR": env["MCP_CLI_CACHE_DIR"]}) as client:
        result = await client.call_tool("team", {"argv": ["vault", "variable", "--name", "MODE"]})
    assert result.is_error
    assert "upstream server `vault` cannot start: the environment variable VAULT_KEY_FOR_TEST is not set" in text(
        result
    )
    assert "s3" not in "".join(p.read_text() for p in (tmp_path / "cache").iterdir())


def test_a_relative_cwd_is_the_config_folders(tmp_path):
    project = tmp_path / "project"
    (project / "tools").mkdir(parents=True)
    write(project / ".mcp.json", {"probe": {**SERVER, "cwd": "tools"}})
    proc = mcp_cli(
        "run",
        str(project / ".mcp.json"),
        "--",
        "probe",
        "where",
        env={"MCP_CLI_CACHE_DIR": str(tmp_path / "cache")},
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(project / "tools")


def test_the_tool_is_named_after_what_the_config_holds(tmp_path):
    one = write(tmp_path / "shop" / ".mcp.json", {"probe": SERVER})
    two = write(tmp_path / "shop" / ".cursor" / "mcp.json", {"a": SERVER, "b": SERVER})
    assert default_name(one) == "probe"  # its one server
    assert default_name(two) == "shop"  # several: the project folder (a client's own folder skipped)
    assert default_name(write(tmp_path / "team-tools.json", {"a": SERVER, "b": SERVER})) == "team-tools"
    home = Path.home() / ".claude.json"  # user-wide: no project to name it, so its servers do
    assert default_name(home, ["a", "b"]) == "a-b"
    assert default_name(home, ["github", "slack", "linear", "notion", "sentry"]) == "github-slack-linear-and-2-more"
    assert default_name(home, ["x" * 40, "b"]) == "mcp"  # nothing fits
    env = {"MCP_CLI_CACHE_DIR": str(tmp_path / "cache")}
    wrapped = mcp_cli("wrap", str(one), env=env, cwd=tmp_path)
    assert wrapped.returncode == 0, wrapped.stderr
    assert "built probe-mcp/" in wrapped.stdout and (tmp_path / "probe-mcp").is_dir()
    assert mcp_cli("inspect", str(two), env=env).stdout.startswith("shop ")
    assert mcp_cli("inspect", "--name", "kit", str(two), env=env).stdout.startswith("kit ")


def test_a_newcomers_five_servers_are_all_listed_on_the_first_try(tmp_path):
    """The five servers of the issue, as a Claude Code user writes them, with an empty tool-list cache and no
    start-up budget of the user's: `inspect` waits for each as a one-shot command does. (npm's servers from
    tests/node, PyPI's from this Python, so that no download is timed; by hand the same holds with npx -y/uvx.)"""
    data = tmp_path / "data"
    data.mkdir()
    config = write(
        tmp_path / ".mcp.json",
        {
            "everything": {"command": str(NODE_BIN / "mcp-server-everything")},
            "filesystem": {"command": str(NODE_BIN / "mcp-server-filesystem"), "args": [str(data)]},
            "memory": {"command": str(NODE_BIN / "mcp-server-memory")},
            "time": {"command": sys.executable, "args": ["-m", "mcp_server_time"]},
            "git": {"command": sys.executable, "args": ["-m", "mcp_server_git"]},
        },
    )
    proc = mcp_cli(
        "inspect", str(config), env={"MCP_CLI_CACHE_DIR": str(tmp_path / "cache"), STARTUP_ENV: None}, cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    first, *rows = proc.stdout.splitlines()
    assert first.split()[0] == kebab(tmp_path.name), first  # several servers: named after their project folder
    assert "from 5 MCP servers." in first and "unavailable" not in first, first
    groups = {row.split()[1] for row in rows if len(row.split()) > 1}
    assert {"everything", "filesystem", "memory", "time", "git"} <= groups
    assert "Unavailable" not in proc.stdout and "cannot list" not in proc.stderr
