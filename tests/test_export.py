"""`mcp-cli export`: a tree as an Agent Skill folder, run from a shell with no MCP client, and read back by our
own skill source."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_cli.sources.skill import folder as skill

from .conftest import DEMO, NODE_BIN, budget


def export(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "mcp_cli", "export", *args], cwd=cwd, capture_output=True, text=True, timeout=budget(300)
    )


def shell(command: str, cwd: Path, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(["sh", "-c", command], cwd=cwd, capture_output=True, text=True, timeout=budget(300), env=env)


@pytest.fixture(scope="module")
def wrap(tmp_path_factory):
    """A config of two real servers (npm server-filesystem, PyPI mcp-server-time) exported with a server filter."""
    root = tmp_path_factory.mktemp("export")
    shared = root / "shared"
    shared.mkdir()
    config = root / "team.json"
    config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "files": {"command": str(NODE_BIN / "mcp-server-filesystem"), "args": [str(shared)]},
                    "time": {"command": sys.executable, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]},
                    "memory": {"command": str(NODE_BIN / "mcp-server-memory")},
                }
            }
        )
    )
    env = {**os.environ, "MCP_CLI_CACHE_DIR": str(root / "cache")}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mcp_cli",
            "export",
            str(config),
            "-o",
            "skills/team-tools",
            "--exclude-server",
            "memory",
        ],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=budget(300),
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    return {"root": root, "skill": root / "skills" / "team-tools", "shared": shared, "env": env}


def test_the_exported_script_walks_and_runs_the_tree_from_a_shell(wrap):
    script = wrap["skill"] / "scripts" / "team-tools.sh"
    top = shell(f"{script} --help", wrap["root"], wrap["env"])
    assert top.returncode == 0, top.stderr
    assert "files" in top.stdout and "time" in top.stdout
    assert top.stdout.startswith(f"{script} - ") and f"Run `{script} <name> --help` for more." in top.stdout
    assert "team-tools <" not in top.stdout  # help names the script, not the tool it has not got
    here = shell("skills/team-tools/scripts/team-tools.sh time --help", wrap["root"], wrap["env"])  # as it is run
    assert "\n  skills/team-tools/scripts/team-tools.sh time <command> [options]\n" in here.stdout, here.stdout
    assert "memory" not in top.stdout  # the export's --exclude-server holds in the script
    target = wrap["shared"] / "note.txt"
    wrote = shell(f"{script} files write-file --path {target} --content 'from a shell'", wrap["root"], wrap["env"])
    assert wrote.returncode == 0, wrote.stderr
    assert target.read_text() == "from a shell"
    wrong = shell(f"{script} files teleport", wrap["root"], wrap["env"])
    assert wrong.returncode == 2 and "teleport" in wrong.stderr and "Traceback" not in wrong.stderr


def test_the_exported_skill_meets_the_spec_and_reads_back_cleanly(wrap):
    tree, warnings = skill.load(wrap["skill"])
    assert warnings == []
    assert tree.name == "team-tools"
    text = (wrap["skill"] / "SKILL.md").read_text()
    assert "scripts/team-tools.sh --help" in text
    assert 0 < len(tree.root.summary) <= 1024 and "files" in tree.root.summary
    (script,) = [n for n in tree.root.children if n.kind == "command"]
    assert script.handler.command[-1].endswith("scripts/team-tools.sh")


def test_export_again_replaces_its_own_output(tmp_path):
    first = export(str(DEMO), cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    (tmp_path / "demo" / "scripts" / "stale.sh").write_text("echo stale\n")
    again = export(str(DEMO), cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert sorted(p.name for p in (tmp_path / "demo").rglob("*") if p.is_file()) == ["SKILL.md", "demo.sh"]


@pytest.mark.parametrize(
    "out, status, words",
    [
        ("/usr/share/demo", 1, "a system folder; mcp-cli never writes there"),
        ("/etc", 1, "a system folder"),
        ("Not_A_Name", 2, "cannot be a skill's name"),
        ("mine", 1, "exists and was not made by mcp-cli"),
    ],
)
def test_export_refuses_folders_it_must_not_write(tmp_path, out, status, words):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.md").write_text("my own notes")
    proc = export(str(DEMO), "-o", out, cwd=tmp_path)
    assert proc.returncode == status and words in proc.stderr and "Traceback" not in proc.stderr
    assert (tmp_path / "mine" / "notes.md").read_text() == "my own notes"
    assert not Path(out).is_absolute() or not (Path(out) / "SKILL.md").exists()
