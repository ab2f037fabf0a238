"""A skill's documents as doc topics: the SKILL.md body, references/*.md, and other .md files SKILL.md links to.

Links are resolved case-insensitively (real skills get the case wrong); links outside the skill are ignored.
"""

from __future__ import annotations

import re
from pathlib import Path

from ...help import one_line
from ...tree import Group, Topic
from .pyast import kebab

_LINK = re.compile(r"\]\(\s*<?([^)\s>#]+\.md)(?:#[^)\s]*)?>?(?:\s+\"[^\"]*\")?\s*\)", re.I)
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.M)


def _resolve(skill_dir: Path, link: str) -> Path | None:
    """The file a relative link points to, matching each path part case-insensitively; None if absent or outside."""
    if re.match(r"^[a-z]+:", link, re.I) or link.startswith("/"):
        return None
    here = skill_dir
    for part in Path(link).parts:
        if part in (".", ""):
            continue
        if part == "..":
            return None
        if not here.is_dir():
            return None
        exact = here / part
        here = (
            exact
            if exact.exists()
            else next((p for p in sorted(here.iterdir()) if p.name.lower() == part.lower()), None)
        )
        if here is None:
            return None
    return here if here.is_file() else None


def summary_of(text: str) -> str:
    """A topic's one-line summary: its first heading, else its first sentence."""
    m = _HEADING.search(text)
    first_text = next((p for p in re.split(r"\n\s*\n", text) if p.strip() and not p.lstrip().startswith("#")), "")
    return one_line(m.group(1) if m else first_text)


def topics(skill_dir: Path, body: str, warnings: list[str]) -> list[Topic]:
    """The SKILL.md body first (as `skill`), then references/ and linked documents in a stable order."""
    found: list[Path] = []
    refs = next((p for p in sorted(skill_dir.iterdir()) if p.is_dir() and p.name.lower() == "references"), None)
    if refs is not None:
        found += sorted(p for p in refs.rglob("*") if p.is_file() and p.suffix.lower() == ".md")
    for link in _LINK.findall(body):
        path = _resolve(skill_dir, link)
        if path is None:
            if not re.match(r"^[a-z]+:", link, re.I):
                warnings.append(f"SKILL.md: links to {link}, which is not in the skill folder")
        elif path.resolve() not in [f.resolve() for f in found] and path.name.lower() != "skill.md":
            found.append(path)
    out = [Topic(name="skill", summary="How to use this skill (SKILL.md).", text=body.strip())] if body.strip() else []
    for path in found:
        text = path.read_text(encoding="utf-8", errors="replace")
        name = kebab(path.stem)
        if any(t.name == name for t in out):
            name = kebab(f"{path.parent.name}-{path.stem}")
        out.append(Topic(name=name, summary=summary_of(text) or path.name, text=text.strip()))
    return out


def docs_group(name: str, items: list[Topic]) -> Group:
    listing = ", ".join(t.name for t in items)
    return Group(name=name, summary=f"Reference documents: {listing}.", children=list(items))
