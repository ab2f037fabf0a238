"""A skill's documents as doc topics: the SKILL.md body (`skill`), every .md file in a sub-folder of the skill, and
each .md file beside SKILL.md that a document names.

Documents are named the way authors write them: Markdown links (inline or reference-style), paths in backticks
(`agents/grader.md`), plain mentions ("see FORMS.md"), and paths under a placeholder for the skill folder
(`{baseDir}/FORMS.md`, `${CLAUDE_SKILL_DIR}/FORMS.md`). A name resolves against the naming document's folder, then
the skill folder, case-insensitively (real skills get the case wrong). A .md file beside SKILL.md that no document
names (a README or LICENSE for the repository) is not a topic. Only files `files.walk` accepts are read.

A Markdown link to a .md file that is not in the skill is a warning naming the document; a link inside code is not a
link, and a mention in prose may name a file the skill does not ship (one the user writes), so neither is warned.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections import Counter
from pathlib import Path, PurePosixPath

import yaml

from ...engine import markdown
from ...text import kebab, one_line
from ...tree import Group, Topic
from . import files as files

_SUFFIXES = (".md", ".markdown")
_PLACEHOLDER = r"(?:\$\{?\w+\}?|\{\{?\s*\w+\s*\}\}?)/"  # {baseDir}/, ${CLAUDE_SKILL_DIR}/, $SKILL_DIR/, {{dir}}/
# a path starts where no path does (`(?<!...)`): tried at each start, not at each character of a long word
_MENTION = re.compile(rf"(?<![\w.-])(?<![\w.-]/)(?:{_PLACEHOLDER})?(?:[\w.-]+/)*[\w.-]+\.(?:md|markdown)\b", re.I)
_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*:", re.I)


class _Index:
    """The skill's readable .md files by relative path, exactly and case-insensitively."""

    def __init__(self, skill_dir: Path, listing: list[Path]) -> None:
        self.skill_dir = skill_dir
        self.rel = {p: p.relative_to(skill_dir).as_posix() for p in listing if p.suffix.lower() in _SUFFIXES}
        self.exact = {r: p for p, r in self.rel.items()}
        self.lower: dict[str, Path] = {}
        for path, rel in self.rel.items():
            self.lower.setdefault(rel.lower(), path)

    def candidates(self, ref: str, folder: str) -> list[str]:
        """The relative paths `ref`, written in a document in `folder`, may mean (none that leave the skill)."""
        bare = re.sub(rf"^{_PLACEHOLDER}", "", ref)
        bases = [""] if bare != ref else [folder, ""]
        out = [posixpath.normpath(posixpath.join(base, bare)) for base in bases]
        return [r for r in dict.fromkeys(out) if not r.startswith(("../", "/")) and r != ".."]

    def find(self, ref: str, folder: str) -> Path | None:
        for rel in self.candidates(ref, folder):
            path = self.exact.get(rel) or self.lower.get(rel.lower())
            if path is not None:
                return path
        return None


def _named(index: _Index, rel: str, text: str, warnings: list[str]) -> list[Path]:
    """The documents the document `rel` names; its links to .md files the skill does not have are warned about."""
    folder = posixpath.dirname(rel)
    mentions = dict.fromkeys(m.group() for m in _MENTION.finditer(text))
    found = [p for ref in mentions if (p := index.find(ref, folder)) is not None]
    # links also name what a mention cannot spell: `[x](<my file.md>)`, `[x](my%20file.md)`
    for link in dict.fromkeys(markdown.parse(text).links):
        target = re.split(r"[#?]", link, maxsplit=1)[0].strip()
        if not target.lower().endswith(_SUFFIXES) or _SCHEME.match(target):
            continue
        path = index.find(target, folder)
        if path is not None:
            found.append(path)
        elif not any(os.path.lexists(index.skill_dir / c) for c in index.candidates(target, folder)):
            files.note(warnings, f"{rel}: links to {target}, which is not in the skill folder")  # refused: said
    return found


def summary_of(text: str) -> str:
    """A topic's one-line summary: its front matter's description, else its title, else its first sentence."""
    doc = markdown.parse(text)
    try:
        front = yaml.safe_load(doc.front) if doc.front else None
    except yaml.YAMLError:
        front = None
    about = front.get("description") if isinstance(front, dict) else None
    return one_line(about if isinstance(about, str) and about.strip() else doc.root.heading or doc.first_paragraph)


def _name(text: str) -> str:
    return kebab(text) if text.isascii() else markdown.slug(text) or "document"


def _names(rels: list[str]) -> list[str]:
    """Topic names: a file's stem in kebab-case; its path (`agents-grader`) when stems collide; then numbered."""
    stems = [_name(PurePosixPath(r).stem) for r in rels]
    counts = Counter(stems)
    taken = {"skill"}
    out = []
    for rel, stem in zip(rels, stems, strict=True):
        name = stem if counts[stem] == 1 and stem != "skill" else _name(rel.rsplit(".", 1)[0])
        base, n = name, 1
        while name in taken:
            n += 1
            name = f"{base}-{n}"
        taken.add(name)
        out.append(name)
    return out


def topics(skill_dir: Path, body: str, warnings: list[str], listing: list[Path] | None = None) -> list[Topic]:
    """The SKILL.md body first (as `skill`), then the documents in sub-folders (by path), then those beside
    SKILL.md in the order they are first named. `listing` is the skill's files as `files.walk` gives them (walked
    here when not given)."""
    index = _Index(skill_dir, files.walk(skill_dir, warnings) if listing is None else listing)
    nested = sorted((p for p, r in index.rel.items() if "/" in r), key=index.rel.__getitem__)
    seen = set(nested)
    queue: list[Path | None] = [None, *nested]  # None: SKILL.md, whose body is given; grows as documents are named
    docs: list[tuple[str, str, str]] = []  # (relative path, text, summary)
    for path in queue:
        if path is None:
            rel, text = "SKILL.md", body.strip()
        else:
            rel = index.rel[path]
            try:
                text = files.read_text(skill_dir, path, warnings, what="a document").strip()
            except files.Refused as exc:
                files.note(warnings, f"{exc}; it is not served as a document")
                continue
            docs.append((rel, text, summary_of(text) or rel))
        for named in _named(index, rel, text, warnings):
            if named not in seen and index.rel[named].lower() != "skill.md":
                seen.add(named)
                queue.append(named)
    out = [Topic(name="skill", summary="How to use this skill (SKILL.md).", text=body.strip())] if body.strip() else []
    for name, (_, text, summary) in zip(_names([d[0] for d in docs]), docs, strict=True):
        out.append(Topic(name=name, summary=summary, text=text))
    return out


def docs_group(name: str, items: list[Topic]) -> Group:
    listing = ", ".join(t.name for t in items)
    return Group(name=name, summary=f"Reference documents: {listing}.", children=list(items))
