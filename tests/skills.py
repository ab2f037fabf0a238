"""Skill folders that tests write: a SKILL.md and the files a test gives, so each test states only what differs."""

from pathlib import Path


def write_skill(
    folder: Path, description: str, files: dict[str, str] | None = None, body: str = "", name: str = ""
) -> Path:
    """`folder` as a skill: a SKILL.md whose frontmatter has `name` (default: the folder's name) and `description`,
    then `body`; and each of `files` ({path in the skill: its text}), folders made as needed. Returns `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name or folder.name}\ndescription: {description}\n---\n{body}")
    for path, text in (files or {}).items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(text)
    return folder
