"""`mcp-cli build`: a deterministic, pip-installable server package whose console script serves the skill."""

import subprocess
import sys
import venv

import pytest

from .conftest import NODE_BIN, ROOT, served, text

SKILLS = ROOT / "tests" / "fixtures" / "skills"


def build(skill, out) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [sys.executable, "-m", "mcp_cli", "build", str(skill), "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return proc


def snapshot(folder):
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_build_output_is_complete_and_deterministic(tmp_path):
    first, second = tmp_path / "one", tmp_path / "two"
    proc = build(SKILLS / "argtool", first)
    assert "warning: SKILL.md: unknown frontmatter field(s) color" in proc.stderr
    build(SKILLS / "argtool", second)
    build(SKILLS / "argtool", second)  # over its own earlier output
    files = snapshot(first)
    assert files == snapshot(second)
    for rel in (
        "pyproject.toml",
        "README.md",
        "argtool_mcp/__main__.py",
        "argtool_mcp/data/SKILL.md",
        "argtool_mcp/data/mcp-cli-tree.json",
        "argtool_mcp/data/scripts/notes.py",
        "clients/claude-code.sh",
        "clients/mcp.json",
        "clients/codex-config.toml",
        "clients/claude-desktop.json",
    ):
        assert rel in files, rel
    assert files["clients/claude-code.sh"] == b"claude mcp add argtool -- argtool-mcp\n"
    assert b'[mcp_servers.argtool]\ncommand = "argtool-mcp"' in files["clients/codex-config.toml"]
    assert b"claude mcp add argtool -- argtool-mcp" in files["README.md"]


def test_build_refuses_to_overwrite_a_foreign_folder(tmp_path):
    (tmp_path / "mine.txt").write_text("precious")
    proc = subprocess.run(
        [sys.executable, "-m", "mcp_cli", "build", str(SKILLS / "argtool"), "-o", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1 and "was not made by mcp-cli" in proc.stderr
    assert (tmp_path / "mine.txt").read_text() == "precious"


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """The built argtool package pip-installed into a fresh virtual environment (with this checkout's runtime)."""
    root = tmp_path_factory.mktemp("venv")
    out = root / "argtool-mcp"
    build(SKILLS / "argtool", out)
    env_dir = root / "env"
    venv.create(env_dir, with_pip=True)
    pip = subprocess.run(
        [
            str(env_dir / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "-q",
            "--disable-pip-version-check",
            str(ROOT),
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert pip.returncode == 0, pip.stderr[-2000:]
    return env_dir / "bin" / "argtool-mcp"


@pytest.mark.anyio
async def test_installed_console_script_serves_over_stdio(installed, tmp_path):
    async with served(cwd=tmp_path, command=str(installed)) as client:
        assert [t.name for t in (await client.list_tools()).tools] == ["argtool"]
        result = await client.call_tool("argtool", {"command": "notes add 'from the venv' --tag v"})
        assert not result.is_error, text(result)
        assert '"title": "from the venv"' in text(result)
        docs = await client.call_tool("argtool", {"argv": ["docs", "guide", "exporting"]})
        assert text(docs).startswith("## Exporting")


def test_inspector_strict_accepts_the_built_server(installed, tmp_path):
    inspector = NODE_BIN / "mcp-inspector"
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin:/usr/local/bin"}
    listed = subprocess.run(
        [str(inspector), "--cli", "--strict", str(installed), "--method", "tools/list"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=tmp_path,
    )
    assert listed.returncode == 0, listed.stderr
    called = subprocess.run(
        [
            str(inspector),
            "--cli",
            str(installed),
            "--method",
            "tools/call",
            "--tool-name",
            "argtool",
            "--tool-arg",
            "command=count a b",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=tmp_path,
    )
    assert called.returncode == 0 and '"text": "2\\n"' in called.stdout, called.stdout + called.stderr
