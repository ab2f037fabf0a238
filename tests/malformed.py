"""The malformed-skill corpus: each folder of tests/fixtures/malformed/ with the set-up that adds what git
cannot hold (symlinks, FIFOs, permissions, huge sparse files) and the outcome it must give. Used by
tests/test_malformed_skills.py (every detail) and bench/reliability.py (the count)."""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "fixtures" / "malformed"
SECRET = "SECRET-7f3a"  # in every file outside the skill folder; must never reach a tree or a build
AS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0  # root reads files whatever their permissions
MiB = 2**20
HELLO = ["hello", "docs", "docs skill"]
GUIDE = ["docs", "docs skill", "docs guide"]
MUST_BE_TEXT = "SKILL.md must be a UTF-8 text file inside the skill folder."
FRONTMATTER = "Start it with YAML frontmatter: a --- line, `name:` and `description:`, another --- line."

Setup = Callable[[Path, Path], object]  # (the skill's copy, a folder outside it) -> adds what git cannot hold


@dataclass
class Case:
    """`error`: the SourceError (`{skill}` and `{outside}` filled in); else `warnings` and the tree's `paths`.
    `left_out`: files of the skill folder the build must not contain. `cli_error`: the build command's own word."""

    error: str = ""
    warnings: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)
    setup: Setup | None = None
    cli_error: str = ""


def symlink(rel: str, target: str) -> Setup:
    return lambda skill, outside: os.symlink(target.format(outside=outside), skill / rel)


def fifo(rel: str) -> Setup:
    return lambda skill, outside: os.mkfifo(skill / rel)


def sparse(rel: str, size: int) -> Setup:
    def make(skill: Path, outside: Path) -> None:
        with open(skill / rel, "wb") as f:
            f.truncate(size)  # a hole: no disk used, and nothing to read unless something reads it

    return make


def no_permissions(rel: str, content: str | None = None) -> Setup:
    def make(skill: Path, outside: Path) -> None:
        if content is None:
            (skill / rel).mkdir()
            (skill / rel / "notes.md").write_text("# Notes\n\nKept in a folder others cannot list.\n")
        else:
            (skill / rel).write_text(content)
        os.chmod(skill / rel, 0)

    return make


def both(*setups: Setup) -> Setup:
    return lambda skill, outside: [s(skill, outside) for s in setups]


def folder(rel: str, contents: dict[str, str]) -> Setup:
    def make(skill: Path, outside: Path) -> None:
        (skill / rel).mkdir()
        for name, text in contents.items():
            (skill / rel / name).write_text(text)

    return make


CASES: dict[str, Case] = {
    # SKILL.md itself: an error naming the file and what to do.
    "no-skillmd": Case(
        error="{skill}: no SKILL.md. A skill folder needs a SKILL.md with YAML frontmatter (name, description) "
        "between --- lines.",
        cli_error="{skill}: not a skill folder (no SKILL.md in it)",
    ),
    "empty-skillmd": Case(error=f"{{skill}}/SKILL.md: empty. {FRONTMATTER}"),
    "frontmatter-not-closed": Case(
        error="{skill}/SKILL.md: the frontmatter is not closed: add a --- line after its last field."
    ),
    "frontmatter-bad-yaml": Case(
        error="{skill}/SKILL.md: the frontmatter is not valid YAML at line 3: mapping values are not allowed here. "
        "Quote values that contain colons."
    ),
    "frontmatter-a-list": Case(
        error="{skill}/SKILL.md: the frontmatter must be a YAML mapping with name and description."
    ),
    "frontmatter-alias-bomb": Case(
        error="{skill}/SKILL.md: the frontmatter holds YAML aliases that expand to 490,329,070 values (more than "
        '100,000: a "billion laughs"); write the values out or remove the aliases.'
    ),
    "frontmatter-deep": Case(error="{skill}/SKILL.md: the frontmatter nests more than 100 levels deep; flatten it."),
    "frontmatter-huge-number": Case(  # more digits than Python reads as an int
        error="{skill}/SKILL.md: the frontmatter holds a number of 6,000 digits, more than the 4,300 a number may "
        "have; quote it to keep it as text."
    ),
    "no-name": Case(
        error="{skill}/SKILL.md: the frontmatter has no `name` (a non-empty string); the spec requires it."
    ),
    "no-description": Case(
        error="{skill}/SKILL.md: the frontmatter has no `description` (a non-empty string); the spec requires it."
    ),
    "name-not-a-string": Case(
        error="{skill}/SKILL.md: the frontmatter's `name` must be a string, not a list. Quote it if it looks like "
        "something else."
    ),
    "binary-skillmd": Case(error=f"{{skill}}/SKILL.md: a binary file (it has NUL bytes), not text. {MUST_BE_TEXT}"),
    "skillmd-fifo": Case(
        error=f"{{skill}}/SKILL.md: refused, a named pipe (FIFO); only regular files are read. {MUST_BE_TEXT}",
        setup=fifo("SKILL.md"),
    ),
    "skillmd-outside": Case(
        error="{skill}/SKILL.md: refused, a symlink to {outside}/SKILL.md, outside the skill folder. " + MUST_BE_TEXT,
        setup=symlink("SKILL.md", "{outside}/SKILL.md"),
    ),
    # SKILL.md breaking the spec where the intent is clear: warnings.
    "bad-name": Case(
        warnings=[
            "SKILL.md: name 'Bad_Name!' breaks the spec (1-64 lowercase letters, digits and single hyphens)",
            "SKILL.md: name 'Bad_Name!' does not match the folder name 'bad-name'",
            "the tool is named 'bad-name' ('Bad_Name!' is not a valid MCP tool name)",
        ],
        paths=HELLO,
    ),
    "frontmatter-colon": Case(
        warnings=[
            "SKILL.md: the frontmatter is not valid YAML at line 3 (mapping values are not allowed here); read key by "
            "key, taking values YAML cannot read as plain text. Quote values that contain colons."
        ],
        paths=["docs", "docs skill"],
    ),
    "name-not-folder": Case(
        warnings=["SKILL.md: name 'some-other-name' does not match the folder name 'name-not-folder'"], paths=HELLO
    ),
    "latin1-skillmd": Case(
        warnings=[
            "SKILL.md: not valid UTF-8 (byte 0xe9 at offset 55); bytes that are not UTF-8 read as U+FFFD. "
            "Save the file as UTF-8."
        ],
        paths=["docs", "docs skill"],
    ),
    # Scripts: a script that cannot be read is skipped with a warning; the rest of the skill works.
    "script-syntax-error": Case(
        warnings=["scripts/broken.py: syntax error at line 4: invalid syntax; skipped"], paths=HELLO
    ),
    "script-hostile-values": Case(  # values that would blow up a reader that builds them, a helper without end
        warnings=[
            "scripts/spiral.py: arguments added where they cannot be followed statically (add() called inside itself "
            "at line 7); passing argv through",
            "scripts/twice.py: a broken script: it has more than one `# /// script` block, which PEP 723 forbids and "
            "uv refuses; keep one",
        ],
        paths=["grow", "hello", "spiral", "twice", "docs", "docs skill"],
    ),
    "script-binary": Case(
        warnings=["scripts/blob.py: a binary file (it has NUL bytes), not Python source; skipped"], paths=HELLO
    ),
    "script-not-utf8": Case(
        warnings=[
            "scripts/menu.py: not valid UTF-8 (byte 0xe9 at offset 16), so Python cannot run it either; save it as "
            "UTF-8 or declare its encoding (`# -*- coding: latin-1 -*-`); skipped"
        ],
        paths=HELLO,
    ),
    "script-unreadable": Case(
        warnings=[] if AS_ROOT else ["scripts/secret.py: skipped, not readable (permission denied)"],
        paths=["hello", "secret", "docs", "docs skill"] if AS_ROOT else HELLO,
        left_out=[] if AS_ROOT else ["scripts/secret.py"],
        setup=no_permissions("scripts/secret.py", '"""Secret."""\nif __name__ == "__main__":\n    print(1)\n'),
    ),
    "script-outside": Case(
        warnings=["scripts/tool.py: refused, a symlink to {outside}/lib/tool.py, outside the skill folder"],
        paths=HELLO,
        left_out=["scripts/tool.py"],
        setup=symlink("scripts/tool.py", "{outside}/lib/tool.py"),
    ),
    "duplicate-commands": Case(
        warnings=[
            "scripts/make_report.py: another script or folder is already named 'make-report'; this one is "
            "'make-report-py'"
        ],
        paths=["make-report", "make-report-py", "docs", "docs skill"],
    ),
    "empty-scripts": Case(warnings=["no scripts or documents found: the tool has nothing to run"], paths=[]),
    # Folders: never followed out of the skill, nor round in a loop.
    "scripts-loop": Case(
        warnings=["scripts/loop: refused, a symlink to scripts, a folder it is in (following it loops)"],
        paths=HELLO,
        left_out=["scripts/loop"],
        setup=symlink("scripts/loop", "."),
    ),
    "folder-loop": Case(
        warnings=["assets/up: refused, a symlink to the skill folder itself, a folder it is in (following it loops)"],
        paths=HELLO,
        left_out=["assets/up"],
        setup=both(folder("assets", {"logo.txt": "logo\n"}), symlink("assets/up", "..")),
    ),
    "folder-outside": Case(
        warnings=["scripts/ext: refused, a symlink to {outside}/lib, outside the skill folder"],
        paths=HELLO,
        left_out=["scripts/ext"],
        setup=symlink("scripts/ext", "{outside}/lib"),
    ),
    "unlistable-folder": Case(
        warnings=[]
        if AS_ROOT
        else [
            "assets: skipped, a folder that cannot be listed (permission denied)",
            "SKILL.md: links to assets/notes.md, which is not in the skill folder",
        ],
        paths=[*HELLO, "docs notes"] if AS_ROOT else HELLO,
        left_out=[] if AS_ROOT else ["assets"],
        setup=no_permissions("assets"),
    ),
    # Reference documents.
    "huge-reference": Case(
        warnings=["references/huge.md: refused, 300 MiB, over the 50 MiB limit for a file in a skill"],
        paths=GUIDE,
        left_out=["references/huge.md"],
        setup=sparse("references/huge.md", 300 * MiB),
    ),
    "big-reference": Case(  # served no, copied yes: a script may still read it
        warnings=["references/big.md: 5 MiB, over the 4 MiB limit for a document; it is not served as a document"],
        paths=GUIDE,
        setup=sparse("references/big.md", 5 * MiB),
    ),
    "reference-outside": Case(
        warnings=["references/secret.md: refused, a symlink to {outside}/secret.md, outside the skill folder"],
        paths=GUIDE,
        left_out=["references/secret.md"],
        setup=symlink("references/secret.md", "{outside}/secret.md"),
    ),
    "reference-dev-zero": Case(
        warnings=["references/zero.md: refused, a symlink to /dev/zero, outside the skill folder"],
        paths=GUIDE,
        left_out=["references/zero.md"],
        setup=symlink("references/zero.md", "/dev/zero"),
    ),
    "reference-fifo": Case(
        warnings=["references/pipe.md: refused, a named pipe (FIFO); only regular files are read"],
        paths=GUIDE,
        left_out=["references/pipe.md"],
        setup=fifo("references/pipe.md"),
    ),
    "dangling-symlink": Case(
        warnings=["references/gone.md: skipped, a broken symlink (to missing.md, which does not exist)"],
        paths=GUIDE,
        left_out=["references/gone.md"],
        setup=symlink("references/gone.md", "missing.md"),
    ),
    "symlink-chain-loop": Case(
        warnings=[
            "references/a.md: refused, a symlink that loops (its chain of links leads back to itself)",
            "references/b.md: refused, a symlink that loops (its chain of links leads back to itself)",
        ],
        paths=GUIDE,
        left_out=["references/a.md", "references/b.md"],
        setup=both(symlink("references/a.md", "b.md"), symlink("references/b.md", "a.md")),
    ),
    "requirements-outside": Case(
        warnings=["requirements.txt: refused, a symlink to {outside}/requirements.txt, outside the skill folder"],
        paths=HELLO,
        left_out=["requirements.txt"],
        setup=symlink("requirements.txt", "{outside}/requirements.txt"),
    ),
    # Symlinks that stay inside the skill are fine: the build holds copies of their targets.
    "inside-symlinks": Case(
        paths=[
            "hello",
            "hi",
            "more",
            "more extra",
            "tools",
            "tools extra",
            "docs",
            "docs skill",
            "docs alias",
            "docs guide",
        ],
        setup=both(
            symlink("references/alias.md", "guide.md"),
            symlink("scripts/hi.py", "hello.py"),
            folder("tools", {"extra.py": '"""Extra."""\nif __name__ == "__main__":\n    print(2)\n'}),
            symlink("scripts/more", "../tools"),
        ),
    ),
    # The manifest: one that cannot be read is an error (the tree it asks for cannot be made); a wrong type, a warning.
    "manifest-bad-yaml": Case(
        error="{skill}/mcp-cli.yaml: not valid YAML at line 3: expected the node content, but found '-'"
    ),
    "manifest-a-list": Case(
        error="{skill}/mcp-cli.yaml: must be a YAML mapping (keys: name, summary, docs, env, timeout, stdin, steps)"
    ),
    "manifest-fifo": Case(
        error="{skill}/mcp-cli.yaml: refused, a named pipe (FIFO); only regular files are read. Make it a YAML text "
        "file in the skill folder, or remove it.",
        setup=fifo("mcp-cli.yaml"),
    ),
    "manifest-deep": Case(error="{skill}/mcp-cli.yaml: nests more than 100 levels deep; flatten it."),
    "manifest-deep-move": Case(  # the tree it would make is too deep to walk; the skill is served as it is
        warnings=[
            "mcp-cli.yaml: step 1 (move): not moved to 'level level level level level level level level level...': "
            "it would be 401 levels deep, more than the 32 a tree may have"
        ],
        paths=HELLO,
    ),
    "manifest-wrong-types": Case(
        warnings=[
            "mcp-cli.yaml: `name` must be a non-empty string; ignored",
            "mcp-cli.yaml: `summary` must be a string; ignored",
            "mcp-cli.yaml: `docs` must be a group name, or false; ignored",
            "mcp-cli.yaml: `steps` must be a list of steps; ignored",
            "mcp-cli.yaml: `env` must be a list of variable names (or patterns); ignored",
            "mcp-cli.yaml: `timeout` must be a number of seconds; ignored",
        ],
        paths=HELLO,
    ),
}


@contextmanager
def placed(tmp: Path) -> Iterator[Callable[[str], tuple[Path, Path]]]:
    """`make(name)`: a copy of a corpus folder with its set-up applied, beside a folder `outside` full of
    secrets; (skill, outside). Folders made unreadable are given back their permissions at the end."""
    outside = tmp / "outside"
    (outside / "lib").mkdir(parents=True)
    (outside / "secret.md").write_text(f"# Secret\n\n{SECRET}\n")
    (outside / "lib" / "tool.py").write_text(f'"""{SECRET}"""\nif __name__ == "__main__":\n    print(1)\n')
    (outside / "requirements.txt").write_text(f"{SECRET.lower()}-package==1.0\n")
    (outside / "SKILL.md").write_text(f"---\nname: skillmd-outside\ndescription: {SECRET}\n---\n")

    def make(name: str) -> tuple[Path, Path]:
        skill = tmp / "skills" / name
        shutil.copytree(CORPUS / name, skill)
        if CASES[name].setup:
            CASES[name].setup(skill, outside)
        return skill, outside

    try:
        yield make
    finally:
        for top, dirs, names in os.walk(tmp / "skills"):
            for name in dirs + names:
                path = Path(top, name)
                if not path.is_symlink() and not stat.S_IMODE(path.lstat().st_mode):
                    path.chmod(0o700)


def filled(text: str, skill: Path, outside: Path) -> str:
    return text.replace("{skill}", str(skill)).replace("{outside}", str(outside))


def outcome(name: str, skill: Path, outside: Path) -> str:
    """'' when loading the placed skill gives exactly the case's error, or its warnings and paths with nothing
    from outside; else what differed."""
    from mcp_cli.errors import SourceError
    from mcp_cli.sources.skill.folder import load

    case = CASES[name]
    try:
        tree, warnings = load(skill)
    except SourceError as exc:
        return "" if str(exc) == filled(case.error, skill, outside) else f"error {exc}"
    if case.error:
        return "loaded, but should fail"
    if warnings != [filled(w, skill, outside) for w in case.warnings]:
        return f"warnings {warnings}"
    if [" ".join(p) for p, _ in tree.walk()] != case.paths:
        return "other paths"
    return "" if SECRET not in tree.to_json() and str(outside) not in tree.to_json() else "outside reached"
