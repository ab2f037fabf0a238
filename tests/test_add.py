"""`mcp-cli add CLIENT SOURCE` through the real process, with HOME in a temporary folder: each client's file
gets the entry (created if missing, every other key kept), a second run changes nothing, `--dry-run` writes
nothing, and a real MCP client started from the written entry lists and calls the tool."""

import difflib
import json
import os
import stat
import subprocess
import sys

import pytest

from mcp_cli.compat import toml_loads

from .conftest import DEMO, ROOT, budget, served, text
from .skills import write_skill

CLIENT_FILES = {
    "claude-code": ".claude.json",
    "codex": ".codex/config.toml",
    "claude-desktop": ".config/Claude/claude_desktop_config.json",
    "cursor": ".cursor/mcp.json",
}
EXISTING = {  # a file each client already has: other servers, other settings, and (TOML) comments
    "claude-code": json.dumps(
        {
            "numStartups": 7,
            "mcpServers": {"keep": {"type": "stdio", "command": "k"}},
            "projects": {"/w": {"mcpServers": {}, "allowedTools": ["x"]}},
        },
        indent=2,
    )
    + "\n",
    "codex": 'model = "o3"  # my model\n\n[mcp_servers.keep]\ncommand = "k"\nargs = ["--x"]\n\n[tui]\nnotify = true\n',
    "claude-desktop": json.dumps({"mcpServers": {"keep": {"command": "k"}}, "globalShortcut": "Ctrl+Space"}) + "\n",
    "cursor": json.dumps({"mcpServers": {"keep": {"url": "https://example.invalid/mcp"}}}) + "\n",
}


@pytest.fixture
def home(tmp_path):
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


def add(home, *args: str, cwd=ROOT, path: str | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("CODEX_HOME", "APPDATA")}
    env.update(HOME=str(home), **({"PATH": path} if path else {}))
    argv = [sys.executable, "-m", "mcp_cli", "add", *args]
    return subprocess.run(argv, capture_output=True, text=True, cwd=cwd, env=env, timeout=budget(60))


def servers_in(client: str, path) -> dict:
    data = toml_loads(path.read_text()) if client == "codex" else json.loads(path.read_text())
    return data["mcp_servers" if client == "codex" else "mcpServers"]


@pytest.mark.parametrize("client", list(CLIENT_FILES))
def test_add_twice_keeps_the_rest_of_the_file_and_dry_run_writes_nothing(home, client):
    path = home / CLIENT_FILES[client]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(EXISTING[client])

    dry = add(home, client, str(DEMO), "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert f"+++ {path}" in dry.stdout and str(DEMO) in dry.stdout and "nothing written" in dry.stdout
    assert path.read_text() == EXISTING[client]

    first = add(home, client, str(DEMO))
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith(f"demo: registered with {client} ({path})")
    entry = servers_in(client, path)["demo"]
    assert entry["args"][-2:] == ["serve", str(DEMO)] and os.path.isabs(entry["command"])
    if client == "codex":  # edited in place: every line of the old file is still there, comments included
        assert entry["required"] is True  # `codex exec` waits for it before its first turn
        changes = difflib.ndiff(EXISTING[client].splitlines(), path.read_text().splitlines())
        assert [line for line in changes if line.startswith("- ")] == []
    else:
        before, after = json.loads(EXISTING[client]), json.loads(path.read_text())
        assert {k: v for k, v in after.items() if k != "mcpServers"} == {
            k: v for k, v in before.items() if k != "mcpServers"
        }
        assert after["mcpServers"]["keep"] == before["mcpServers"]["keep"]
    written, mtime = path.read_bytes(), path.stat().st_mtime_ns

    again = add(home, client, str(DEMO))
    assert again.returncode == 0, again.stderr
    assert "already registered" in again.stdout and "nothing changed" in again.stdout
    assert (path.read_bytes(), path.stat().st_mtime_ns) == (written, mtime)
    assert add(home, client, str(DEMO), "--dry-run").stdout.startswith("demo: already registered")


def test_a_different_entry_under_the_name_is_updated_keeping_its_env(home):
    path = home / ".claude.json"
    path.write_text(json.dumps({"mcpServers": {"demo": {"type": "stdio", "command": "old", "env": {"A": "1"}}}}))
    os.chmod(path, 0o600)
    proc = add(home, "claude-code", str(DEMO))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"demo: updated in claude-code ({path})")
    entry = json.loads(path.read_text())["mcpServers"]["demo"]
    assert entry["env"] == {"A": "1"} and entry["command"] != "old"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_missing_files_and_folders_are_created_and_project_scope_writes_dot_mcp_json(home, tmp_path):
    proc = add(home, "cursor", str(DEMO), "--name", "toolkit")
    assert proc.returncode == 0, proc.stderr
    assert list(servers_in("cursor", home / ".cursor" / "mcp.json")) == ["toolkit"]
    project = tmp_path / "project"
    project.mkdir()
    scoped = add(home, "claude-code", str(DEMO), "--scope", "project", cwd=project)
    assert scoped.returncode == 0, scoped.stderr
    assert json.loads((project / ".mcp.json").read_text())["mcpServers"]["demo"]["type"] == "stdio"
    assert not (home / ".claude.json").exists()


@pytest.mark.parametrize(
    "args, words",
    [
        (["vscode", str(DEMO)], "unknown client 'vscode'; the clients are: claude-code, codex, claude-desktop, cursor"),
        (["codex", "no/such/folder"], "no/such/folder: no such file or folder"),
        (["codex", str(ROOT / "mcp_cli")], "not a skill folder (no SKILL.md) nor a package built by"),
        (["codex", str(DEMO), "--scope", "project"], "codex has no project scope"),
    ],
)
def test_errors_name_the_problem(home, args, words):
    proc = add(home, *args)
    assert proc.returncode == 2 and words in proc.stderr and "Traceback" not in proc.stderr
    assert list(home.iterdir()) == []


def test_skill_and_config_sources_are_named_cheaply(home, tmp_path):
    config = tmp_path / "team-tools.json"
    config.write_text(json.dumps({"mcpServers": {"never-started": {"command": "/no/such/program"}}}))
    proc = add(home, "codex", str(ROOT / "skills" / "pdf"))
    assert proc.returncode == 0, proc.stderr
    proc = add(home, "codex", str(config))
    assert proc.returncode == 0, proc.stderr
    servers = servers_in("codex", home / ".codex" / "config.toml")
    assert servers["pdf"]["args"][-2:] == ["serve", str(ROOT / "skills" / "pdf")]
    assert servers["team-tools"]["args"][-2:] == ["serve", str(config)]


def test_a_built_package_registers_its_installed_script(home, tmp_path):
    skill = write_skill(tmp_path / "addtest-skill", "For the add test.", body="Body.\n")
    out = tmp_path / "addtest-skill-mcp"
    built = subprocess.run([sys.executable, "-m", "mcp_cli", "build", str(skill), "-o", str(out)], capture_output=True)
    assert built.returncode == 0, built.stderr
    bare_path = os.pathsep.join([str(tmp_path / "bin"), "/usr/bin", "/bin"])
    missing = add(home, "claude-desktop", str(out), path=bare_path)
    assert missing.returncode == 2
    assert f"addtest-skill-mcp is not installed; run `pip install {out}` first" in missing.stderr
    (tmp_path / "bin").mkdir()
    script = tmp_path / "bin" / "addtest-skill-mcp"
    script.write_text("#!/bin/sh\nexit 0\n")
    script.chmod(0o755)
    found = add(home, "claude-desktop", str(out), path=bare_path)
    assert found.returncode == 0, found.stderr
    entry = servers_in("claude-desktop", home / ".config" / "Claude" / "claude_desktop_config.json")["addtest-skill"]
    assert entry == {"command": str(script), "args": []}


@pytest.mark.anyio
@pytest.mark.parametrize("client", ["claude-code", "codex"])
async def test_a_real_client_starts_the_registered_command(home, tmp_path, client):
    proc = add(home, client, str(DEMO))
    assert proc.returncode == 0, proc.stderr
    entry = servers_in(client, home / CLIENT_FILES[client])["demo"]
    async with served(*entry["args"], command=entry["command"], cwd=tmp_path) as session:
        tools = await session.list_tools()
        assert [t.name for t in tools.tools] == ["demo"]
        result = await session.call_tool("demo", {"command": "math add 2 3"})
        assert not result.is_error and text(result).strip() == "5"
