"""A corpus of malformed skills (tests/fixtures/malformed/), each with the outcome it must give.

Each case is a folder of the corpus plus, for what git cannot hold (symlinks, FIFOs, permissions, huge sparse
files), a set-up that adds it to a copy of the folder at run time. A case either fails to load with the exact
SourceError naming the file and the problem, or loads with exactly the warnings listed, each naming a file. In
every case: no traceback, nothing from outside the skill folder served or copied, `mcp-cli build` (run as a real
command) exits with the error, or builds a package holding none of the files left out, and `mcp-cli serve` exits
with the error, or serves with exactly the warnings. The commands run forked from one process that imported
mcp-cli once (tests/forked.py), but for the cases in REAL, which run `python -m mcp_cli` itself.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from mcp_cli.errors import SourceError
from mcp_cli.sources.skill import files as files
from mcp_cli.sources.skill.folder import load

from .conftest import budget
from .forked import mcp_cli
from .malformed import CASES, CORPUS, SECRET, filled, outcome, placed
from .skills import write_skill

REAL = {"skillmd-fifo", "script-outside"}  # an error and a warning, built and served by `python -m mcp_cli`


def command(name: str, *argv: str) -> subprocess.CompletedProcess[str]:
    """`mcp-cli argv` for the case `name`, stdin at /dev/null; a hang guard only (a FIFO that is opened blocks
    forever)."""
    if name not in REAL:
        return mcp_cli(*argv, timeout=budget(600))
    real = [sys.executable, "-m", "mcp_cli", *argv]
    return subprocess.run(real, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=budget(600))


@pytest.fixture
def place(tmp_path):
    """A copy of a corpus folder with its set-up applied, beside a folder `outside` full of secrets."""
    with placed(tmp_path) as make:
        yield make


def test_every_corpus_folder_has_a_case():
    assert sorted(p.name for p in CORPUS.iterdir() if p.is_dir()) == sorted(CASES)
    assert len(CASES) >= 20


@pytest.mark.parametrize("name", sorted(CASES))
def test_loading(name, place):
    """The exact error, or exactly the warnings and paths, and nothing from outside (malformed.outcome)."""
    assert outcome(name, *place(name)) == ""


@pytest.mark.parametrize("name", sorted(CASES))
def test_building(name, place, tmp_path):
    case = CASES[name]
    skill, outside = place(name)
    out = tmp_path / "built"
    proc = command(name, "build", str(skill), "-o", str(out))
    assert "Traceback" not in proc.stderr
    if case.error:
        assert (proc.returncode, proc.stderr) == (
            2,
            f"mcp-cli: {filled(case.cli_error or case.error, skill, outside)}\n",
        )
        assert not out.exists()
        return
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines() == [f"warning: {filled(w, skill, outside)}" for w in case.warnings]
    for path in out.rglob("*"):  # the whole package: its data, pyproject.toml (requirements), README
        assert path.is_dir() or (path.is_file() and not path.is_symlink()), path
        assert path.is_dir() or SECRET.lower().encode() not in path.read_bytes().lower(), path
    (data,) = out.glob("*_mcp/data")
    built = {p.relative_to(data).as_posix(): p for p in data.rglob("*")}
    for rel in case.left_out:
        assert rel not in built and not any(b.startswith(rel + "/") for b in built), rel
    expected = {p.relative_to(skill).as_posix() for p in files.walk(skill, [])} | {"mcp-cli-tree.json"}
    assert {rel for rel, p in built.items() if p.is_file()} == expected


@pytest.mark.parametrize("name", sorted(CASES))
def test_serving(name, place):
    """`mcp-cli serve` of each case (its client gone at once): the one-line error and status 2, or exactly the
    warnings and a clean exit; never a traceback."""
    case = CASES[name]
    skill, outside = place(name)
    proc = command(name, "serve", str(skill))
    assert "Traceback" not in proc.stderr
    if case.error:
        assert (proc.returncode, proc.stderr) == (2, f"mcp-cli: {filled(case.error, skill, outside)}\n")
        return
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines() == [f"warning: {filled(w, skill, outside)}" for w in case.warnings]


def test_inside_symlinks_are_built_as_copies(place, tmp_path):
    skill, _ = place("inside-symlinks")
    out = tmp_path / "built"
    proc = subprocess.run(
        [sys.executable, "-m", "mcp_cli", "build", str(skill), "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=budget(600),
    )
    assert proc.returncode == 0, proc.stderr
    data = out / "inside_symlinks_mcp" / "data"
    assert (data / "references" / "alias.md").read_text() == (skill / "references" / "guide.md").read_text()
    assert (data / "scripts" / "more" / "extra.py").read_text() == (skill / "tools" / "extra.py").read_text()
    assert not any(p.is_symlink() for p in data.rglob("*"))


def test_a_skill_the_size_of_a_data_set_is_an_error(tmp_path, monkeypatch):
    skill = write_skill(tmp_path / "crowded", "Too many files.", {f"data/{i}.csv": "a,b\n" for i in range(4)})
    monkeypatch.setattr(files, "MAX_FILES", 3)
    with pytest.raises(SourceError, match=r"crowded: more than 3 files \(at data/2.csv\); a skill folder holds"):
        load(skill)
    monkeypatch.setattr(files, "MAX_FILES", 10)
    monkeypatch.setattr(files, "MAX_TOTAL", (skill / "SKILL.md").stat().st_size + 4)  # SKILL.md and 0.csv fit
    with pytest.raises(SourceError, match=r"crowded: over \d+ bytes \(at data/1.csv\)"):
        load(skill)


def test_a_read_checks_the_file_again(tmp_path):
    """A file the walk accepted and that was then swapped for a FIFO is refused when it is read, never opened."""
    skill = tmp_path / "swap"
    (skill / "references").mkdir(parents=True)
    late = skill / "references" / "late.md"
    late.write_text("# Late\n")
    assert files.walk(skill, []) == [late]
    late.unlink()
    os.mkfifo(late)
    with pytest.raises(files.Refused, match=r"^references/late.md: refused, a named pipe \(FIFO\)"):
        files.read_text(skill, late, [])


def test_links_that_fan_out_stop_at_the_folder_limit(tmp_path, monkeypatch):
    """Two links to the next folder, sixteen deep: 65,536 paths to walk. The walk stops at the limit with a
    named error instead of listing them all (the limit lowered to 1,000 here, as the test of files does: each
    folder reached through the links costs a resolution of its whole chain, and 10,000 of them took 49 s of a
    suite run at a load of 8)."""
    monkeypatch.setattr(files, "MAX_FILES", 1000)
    (tmp_path / "SKILL.md").write_text("---\nname: fan\ndescription: Links that fan out.\n---\n")
    previous = tmp_path
    for i in range(16):
        folder = tmp_path / f"d{i}"
        folder.mkdir()
        (previous / "a").symlink_to(folder)
        (previous / "b").symlink_to(folder)
        previous = folder
    with pytest.raises(SourceError, match="more than 1,000 folders"):
        files.walk(tmp_path, [])


def test_a_name_that_is_not_utf8_is_skipped(tmp_path):
    (tmp_path / "SKILL.md").write_text("---\nname: names\ndescription: Odd names.\n---\n")
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / os.fsdecode(b"caf\xe9.sh")).write_text("echo hi\n")
    warnings: list[str] = []
    assert files.walk(tmp_path, warnings) == [tmp_path / "SKILL.md"]
    assert warnings == ["scripts/caf\ufffd.sh: skipped, a name that is not UTF-8"]
