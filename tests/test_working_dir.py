"""Scripts run where the user is: the shell's folder for `mcp-cli run`, the MCP client's first root when it
offers roots, else the server's own folder; never the skill folder. They find the skill in SKILL_DIR and can
import its modules (`from scripts.util import ...`)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import types

from .conftest import ROOT, budget, served, text
from .pdfs import text_pdf

pytestmark = pytest.mark.anyio
WORKDIR = ROOT / "tests" / "fixtures" / "skills" / "workdir"


def fields(output: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in output.splitlines() if "=" in line)


def test_run_reads_and_writes_where_the_shell_is(tmp_path):
    pdf = text_pdf(tmp_path)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mcp_cli",
            "run",
            str(ROOT / "skills" / "pdf"),
            "--",
            "text",
            "extract",
            pdf.name,
            "--out",
            "r.txt",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=budget(120),
    )
    assert proc.returncode == 0, proc.stderr
    assert "Page 2 says hello" in (tmp_path / "r.txt").read_text()
    assert not (ROOT / "skills" / "pdf" / "r.txt").exists()


def test_run_gives_the_skill_folder_and_its_modules(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "mcp_cli", "run", str(WORKDIR), "--", "where"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=budget(120),
    )
    assert proc.returncode == 0, proc.stderr
    assert fields(proc.stdout) == {"cwd": str(tmp_path), "skill": str(WORKDIR)}
    assert "hello from scripts.util" in proc.stdout


def roots_of(*folders: Path):
    """The folders a client offers (change the list to change them), and its roots/list callback, which counts the
    times it is asked in `asked`."""
    listed = list(folders)

    async def list_roots(context) -> types.ListRootsResult:
        list_roots.asked += 1
        return types.ListRootsResult(roots=[types.Root(uri=f.as_uri()) for f in listed])

    list_roots.asked = 0
    return listed, list_roots


async def test_served_skill_runs_in_the_clients_first_root(tmp_path):
    first, second = tmp_path / "project", tmp_path / "other"
    first.mkdir(), second.mkdir()
    listed, callback = roots_of(first, second)
    # roots/list needs a back-channel: a session with the initialize handshake, as clients with roots open
    async with served("serve", str(WORKDIR), cwd=ROOT, list_roots_callback=callback, mode="legacy") as client:
        result = await client.call_tool("workdir", {"argv": ["where", "--out", "made.txt"]})
        assert not result.is_error, text(result)
        assert fields(text(result))["cwd"] == str(first)
        assert (first / "made.txt").read_text() == "written\n"
        await client.call_tool("workdir", {"argv": ["where"]})
        assert callback.asked == 1  # asked once a session, not once a call
        listed[:] = [second]
        await client.send_roots_list_changed()
        result = await client.call_tool("workdir", {"argv": ["where"]})
        assert fields(text(result))["cwd"] == str(second)
        assert callback.asked == 2
    assert not (WORKDIR / "made.txt").exists() and not (ROOT / "made.txt").exists()


async def test_without_roots_a_built_tree_runs_in_the_servers_folder(tmp_path):
    out = tmp_path / "built"
    build = subprocess.run(
        [sys.executable, "-m", "mcp_cli", "build", str(WORKDIR), "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=budget(120),
    )
    assert build.returncode == 0, build.stderr
    data = out / "workdir_mcp" / "data"
    user = tmp_path / "user"
    user.mkdir()
    async with served("serve", str(data / "mcp-cli-tree.json"), cwd=user) as client:
        result = await client.call_tool("workdir", {"argv": ["where", "--out", "rel.txt"]})
        assert not result.is_error, text(result)
        assert fields(text(result)) == {"cwd": str(user), "skill": str(data)}
    assert (user / "rel.txt").exists() and not (data / "rel.txt").exists()


def test_a_missing_requirement_is_one_line_naming_the_file(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "mcp_cli", "run", str(WORKDIR), "--", "needs"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=budget(120),
    )
    assert proc.returncode == 1
    assert proc.stderr.strip() == (
        "Error: `workdir needs` needs the Python module `mcp_cli_test_not_installed_pkg`, which is not installed; "
        f"install the skill's requirements: pip install -r {WORKDIR / 'requirements.txt'}"
    )


def test_scripts_see_a_safe_environment_and_what_the_manifest_names(tmp_path):
    env = {**os.environ, "MCP_CLI_TEST_SECRET": "s3cret", "WORKDIR_OK": "yes"}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mcp_cli",
            "run",
            str(WORKDIR),
            "--",
            "environment",
            "MCP_CLI_TEST_SECRET",
            "WORKDIR_OK",
            "PATH",
            "HOME",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=budget(120),
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    seen = fields(proc.stdout)
    assert seen["MCP_CLI_TEST_SECRET"] == "" and seen["WORKDIR_OK"] == "yes"
    assert seen["PATH"] == os.environ["PATH"] and seen["HOME"] == os.environ["HOME"]


def test_the_manifest_sets_the_timeout():
    from mcp_cli.sources.skill import folder as skill

    tree, _ = skill.load(WORKDIR)
    assert {n.handler.timeout for _, n in tree.walk() if n.kind == "command" and n.handler} == {30.0}
