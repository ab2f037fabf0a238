"""`mcp-cli build`: a deterministic server package that installs from its folder and the package registries alone
(it carries its own copy of the serving runtime), and whose console script serves the skill."""

import json
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

import mcp_cli
from mcp_cli.compat import toml_loads
from mcp_cli.generators import vendor

from .conftest import ROOT, budget, inspector, served, text
from .skills import write_skill

SKILLS = ROOT / "tests" / "fixtures" / "skills"
# What the `mcp-cli` command needs and a built server must not pull in.
BUILD_ONLY = {"typer", "jinja2", "tiktoken", "pyyaml", "mcp-cli-tree"}


def build(skill, out, python=sys.executable, cwd=None, seed: str | None = None) -> subprocess.CompletedProcess:
    """`mcp-cli build`, under the hash seed `seed` if given."""
    proc = subprocess.run(
        [python, "-m", "mcp_cli", "build", str(skill), "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=budget(120),
        cwd=cwd,
        env={**os.environ, "PYTHONHASHSEED": seed} if seed else None,
    )
    assert proc.returncode == 0, proc.stderr
    return proc


def install_line(proc) -> str:
    """The path `pip install` is given in the hint `mcp-cli build` prints."""
    line = next(line for line in proc.stdout.splitlines() if line.startswith("install: "))
    assert line.startswith("install: pip install "), line
    return line.removeprefix("install: pip install ").split()[0]


def fresh_venv(where: Path, *requirements: str) -> Path:
    """A new virtual environment with `requirements` pip-installed (from the registries and local paths only).
    Nothing is byte-compiled ahead (`--no-compile`): Python compiles what the test imports, on import, and leaves
    the rest (most of mcp's, pydantic's and the other dependencies' modules) alone."""
    venv.create(where, with_pip=True)
    python = where / "bin" / "python"
    pip = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-compile", "--disable-pip-version-check", *requirements],
        capture_output=True,
        text=True,
        timeout=budget(600),
    )
    assert pip.returncode == 0, pip.stderr[-2000:]
    return python


def site_packages(python: Path) -> Path:
    code = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    out = subprocess.run([str(python), "-I", "-c", code], capture_output=True, text=True, check=True).stdout
    return Path(out.strip())


def distributions(python: Path) -> set[str]:
    code = "import importlib.metadata as m, json; print(json.dumps([d.metadata['Name'] for d in m.distributions()]))"
    out = subprocess.run([str(python), "-I", "-c", code], capture_output=True, text=True, check=True).stdout
    return {name.lower().replace("_", "-") for name in json.loads(out)}


def snapshot(folder):
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_build_output_is_complete_and_deterministic(tmp_path):
    first, second = tmp_path / "one", tmp_path / "two"
    proc = build(SKILLS / "argtool", first, seed="1")
    assert "warning: SKILL.md: unknown frontmatter field(s) color" in proc.stderr
    build(SKILLS / "argtool", second, seed="2")
    build(SKILLS / "argtool", second, seed="3")  # over its own earlier output
    files = snapshot(first)
    assert files == snapshot(second)
    for rel in (
        "pyproject.toml",
        "README.md",
        "argtool_mcp/__main__.py",
        "argtool_mcp/_runtime/__init__.py",
        "argtool_mcp/_runtime/surfaces/launcher.py",
        "argtool_mcp/_runtime/surfaces/mcp_server.py",
        "argtool_mcp/_runtime/handlers/subprocess.py",
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
    # The runtime is copied byte for byte, and only what serving needs: not the build command, sources or tokens.
    runtime = {rel.removeprefix("argtool_mcp/_runtime/"): data for rel, data in files.items() if "/_runtime/" in rel}
    stamp = runtime.pop("__init__.py").decode()  # the copy says which mcp-cli it is
    assert f'__version__ = "{mcp_cli.__version__}"' in stamp and "import" not in stamp
    assert runtime == {rel: (ROOT / "mcp_cli" / rel).read_bytes() for rel in runtime}
    assert not {"cli/app.py", "cli/tokens.py", "__main__.py", "sources/loader.py"} & runtime.keys()
    project = toml_loads(files["pyproject.toml"].decode())
    dependencies = project["project"]["dependencies"]
    assert {d.split("<")[0].split(">")[0] for d in dependencies} == {
        "mcp",
        "anyio",
        "httpx2",  # the HTTP client of streamable-HTTP upstreams (handlers/server_config.py)
        "jq",  # the `jq` stage of pipelines (engine/builtins.py)
        "jsonschema",
        "markdown-it-py",
        "platformdirs",  # the folder of OAuth logins to upstreams (handlers/oauth.py)
        "referencing",
        "snowballstemmer",  # the search command's stemmer
        "starlette",  # the OpenAPI surface's routes
        "tomli",  # reads a --scopes file before Python 3.11 (`compat`)
        "toon-format",  # compact answers (engine/answers.py)
        "uvicorn",
    }
    assert "mcp<3,>=2.3" in dependencies
    assert project["tool"]["setuptools"]["packages"] == [
        "argtool_mcp",
        "argtool_mcp._runtime",
        *(f"argtool_mcp._runtime.{p}" for p in ("engine", "handlers", "search", "sources", "sources.skill")),
        "argtool_mcp._runtime.surfaces",
    ]


def test_the_install_hint_is_a_path_never_a_bare_name(tmp_path):
    relative = build(SKILLS / "argtool", "argtool-mcp", cwd=tmp_path)
    assert install_line(relative) == "./argtool-mcp"
    assert "then: claude mcp add argtool -- argtool-mcp" in relative.stdout
    nested = build(SKILLS / "argtool", Path("out") / "argtool-mcp", cwd=tmp_path)
    assert install_line(nested) == "./out/argtool-mcp"
    absolute = build(SKILLS / "argtool", tmp_path / "abs")
    assert install_line(absolute) == str(tmp_path / "abs")


def test_requirements_become_dependencies_pip_reads_and_a_local_one_fails_the_build(tmp_path):
    skill = tmp_path / "reqs"
    shutil.copytree(SKILLS / "argtool", skill)
    (skill / "more.txt").write_text("pyyaml>=6\n")
    (skill / "requirements.txt").write_text(
        "six  # a comment\n-r more.txt\ngit+https://example.com/six.git@1.16.0#egg=six\n"
        "--extra-index-url https://example.com/simple\nattrs==23.1 --hash=sha256:abc\n"
    )
    build(skill, tmp_path / "out")
    dependencies = toml_loads((tmp_path / "out" / "pyproject.toml").read_text())["project"]["dependencies"]
    assert dependencies[-4:] == ["six", "pyyaml>=6", "six @ git+https://example.com/six.git@1.16.0", "attrs==23.1"]
    with (skill / "requirements.txt").open("a") as f:
        f.write("./local_pkg\n")
    proc = subprocess.run(
        [sys.executable, "-m", "mcp_cli", "build", str(skill), "-o", str(tmp_path / "again")],
        capture_output=True,
        text=True,
        timeout=budget(120),
    )
    assert proc.returncode == 1 and "requirements.txt:6: './local_pkg' is no requirement" in proc.stderr
    assert "Traceback" not in proc.stderr and not (tmp_path / "again").exists()


def test_the_runtime_closure_follows_lazy_imports_and_refuses_build_only_ones(tmp_path):
    real = vendor.collect()
    assert "surfaces/launcher.py" in real.files and "surfaces/mcp_server.py" in real.files  # imported in main()
    assert "handlers/mcp.py" in real.files and "handlers/upstream.py" in real.files
    root = tmp_path / "mcp_cli"
    root.mkdir()
    (root / "__init__.py").write_text("")
    (root / "surfaces").mkdir()
    (root / "surfaces" / "__init__.py").write_text("")
    (root / "surfaces" / "launcher.py").write_text("def main():\n    from .. import helpers\n")
    (root / "helpers.py").write_text("def later():\n    import yaml\n")
    with pytest.raises(vendor.VendorError, match=r"must not import yaml \(imported by mcp_cli.helpers\)"):
        vendor.collect(root)
    (root / "helpers.py").write_text("from mcp_cli import tree\n")
    with pytest.raises(vendor.VendorError, match="must be relative"):
        vendor.collect(root)
    (root / "helpers.py").write_text("import left_pad\n")
    with pytest.raises(vendor.VendorError, match="imports left_pad .* does not declare"):
        vendor.collect(root)
    (root / "helpers.py").write_text("try:\n    import left_pad\nexcept ImportError:\n    left_pad = None\n")
    assert "left_pad" not in " ".join(vendor.collect(root).requirements)  # an optional import (an extra's)
    (root / "helpers.py").write_text("from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    import left_pad\n")
    assert "left_pad" not in " ".join(vendor.collect(root).requirements)  # for type checkers only
    assert "search/embeddings.py" in real.files
    assert not any(r.startswith(("numpy", "wordllama")) for r in real.requirements)


def test_a_script_with_two_metadata_blocks_is_reported_by_the_build_and_frozen_as_broken(tmp_path):
    two_blocks = '# /// script\n# dependencies = ["pyyaml"]\n# ///\n# /// script\n# requires-python = ">=3.10"\n# ///\n'
    fetch = two_blocks + '"""Fetch a page."""\nprint("fetched")\n'
    skill = write_skill(tmp_path / "fetcher", "Fetch pages.", {"scripts/fetch.py": fetch}, body="Run fetch.\n")
    proc = build(skill, tmp_path / "out")
    assert (
        "warning: scripts/fetch.py: a broken script: it has more than one `# /// script` block, which PEP 723 "
        "forbids and uv refuses; keep one" in proc.stderr
    )
    frozen = json.loads(next((tmp_path / "out").rglob("mcp-cli-tree.json")).read_text())  # its calls say why
    fetch = next(c for c in frozen["root"]["children"] if c["name"] == "fetch")
    assert fetch["handler"]["broken"].startswith("it has more than one `# /// script` block")


def test_build_refuses_to_overwrite_a_foreign_folder(tmp_path):
    (tmp_path / "mine.txt").write_text("precious")
    proc = subprocess.run(
        [sys.executable, "-m", "mcp_cli", "build", str(SKILLS / "argtool"), "-o", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=budget(120),
    )
    assert proc.returncode == 1 and "was not made by mcp-cli" in proc.stderr
    assert (tmp_path / "mine.txt").read_text() == "precious"


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """The built argtool package pip-installed, from its folder alone, into a fresh virtual environment: the
    folder is moved away from the build and mcp-cli is not installed there."""
    root = tmp_path_factory.mktemp("venv")
    build(SKILLS / "argtool", root / "build" / "argtool-mcp")
    out = shutil.move(root / "build" / "argtool-mcp", root / "argtool-mcp")
    python = fresh_venv(root / "env", str(out))
    return python.parent / "argtool-mcp"


def test_the_installed_server_depends_only_on_what_serving_needs(installed):
    python = installed.parent / "python"
    names = distributions(python)
    assert {"argtool-mcp", "mcp", "anyio", "jsonschema"} <= names
    assert not BUILD_ONLY & names
    site = site_packages(python)
    assert not (site / "generators").exists() and not (site / "mcp_cli").exists()
    assert (site / "argtool_mcp" / "_runtime" / "surfaces" / "launcher.py").is_file()


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
    listed = inspector([str(installed)], "--method", "tools/list", home=tmp_path, cwd=tmp_path, strict=True)
    assert listed.returncode == 0, listed.stderr
    called = inspector(
        [str(installed)],
        "--method",
        "tools/call",
        "--tool-name",
        "argtool",
        "--tool-arg",
        "command=count a b",
        home=tmp_path,
        cwd=tmp_path,
    )
    assert called.returncode == 0 and '"text": "2\\n"' in called.stdout, called.stdout + called.stderr


def test_a_regular_install_carries_every_package_and_the_templates_and_builds_the_same_bytes(tmp_path):
    """`pip install .` from a clean copy of the checkout (no build/ leftovers), into a fresh virtual environment."""
    source = tmp_path / "src"
    shutil.copytree(ROOT / "mcp_cli", source / "mcp_cli", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    python = fresh_venv(tmp_path / "env", str(source))
    site = site_packages(python)
    packages = {p.parent.relative_to(ROOT).as_posix() for p in ROOT.glob("mcp_cli/**/__init__.py")}
    assert {p.parent.relative_to(site).as_posix() for p in site.glob("mcp_cli/**/__init__.py")} == packages
    assert (site / "mcp_cli" / "generators" / "templates" / "server" / "pyproject.toml.j2").is_file()
    built, reference = tmp_path / "installed" / "argtool-mcp", tmp_path / "checkout" / "argtool-mcp"
    build(SKILLS / "argtool", built, python=str(python), cwd=tmp_path)
    build(SKILLS / "argtool", reference)
    assert snapshot(built) == snapshot(reference)
