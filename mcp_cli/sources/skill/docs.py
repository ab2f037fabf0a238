"""A skill's documents as doc topics: the SKILL.md body, references/*.md, and other .md files SKILL.md links to.

Links are resolved case-insensitively (real skills get the case wrong); links outside the skill are ignored, and
only files `files.walk` accepts are read (a link to a refused file was warned about there).
"""

from __future__ import annotations

import re
from pathlib import Path

from ...help import one_line
from ...tree import Group, Topic
from . import files
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
        exact = here / part
        try:
            if not here.is_dir():
                return None
            here = (
                exact
                if exact.exists()
                else next((p for p in sorted(here.iterdir()) if p.name.lower() == part.lower()), None)
            )
        except OSError:  # a folder that cannot be listed: `files.walk` says so
            return None
        if here is None:
            return None
    return None if here.is_dir() else here


def summary_of(text: str) -> str:
    """A topic's one-line summary: its first heading, else its first sentence."""
    m = _HEADING.search(text)
    first_text = next((p for p in re.split(r"\n\s*\n", text) if p.strip() and not p.lstrip().startswith("#")), "")
    return one_line(m.group(1) if m else first_text)


def topics(skill_dir: Path, body: str, warnings: list[str], listing: list[Path] | None = None) -> list[Topic]:
    """The SKILL.md body first (as `skill`), then references/ and linked documents in a stable order. `listing` is
    the skill's files as `files.walk` gives them (walked here when not given)."""
    listing = files.walk(skill_dir, warnings) if listing is None else listing
    readable = set(listing)
    found = sorted(
        p
        for p in listing
        if len(p.relative_to(skill_dir).parts) > 1
        and p.relative_to(skill_dir).parts[0].lower() == "references"
        and p.suffix.lower() == ".md"
    )
    for link in _LINK.findall(body):
        path = _resolve(skill_dir, link)
        if path is None:
            if not re.match(r"^[a-z]+:", link, re.I):
                warnings.append(f"SKILL.md: links to {link}, which is not in the skill folder")
        elif path not in readable:
            continue
        elif path.resolve() not in [f.resolve() for f in found] and path.name.lower() != "skill.md":
            found.append(path)
    out = [Topic(name="skill", summary="How to use this skill (SKILL.md).", text=body.strip())] if body.strip() else []
    for path in found:
        try:
            text = files.read_text(skill_dir, path, warnings, what="a document")
        except files.Refused as exc:
            files.note(warnings, f"{exc}; it is not served as a document")
            continue
        name = kebab(path.stem)
        if any(t.name == name for t in out):
            name = kebab(f"{path.parent.name}-{path.stem}")
        out.append(Topic(name=name, summary=summary_of(text) or path.name, text=text.strip()))
    return out


def docs_group(name: str, items: list[Topic]) -> Group:
    listing = ", ".join(t.name for t in items)
    return Group(name=name, summary=f"Reference documents: {listing}.", children=list(items))
