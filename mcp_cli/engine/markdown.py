"""Markdown structure, read with markdown-it-py: a document's sections, its links, and its text cut into pages.

Headings (`#` and setext `===`/`---` underlines) open sections; a heading inside a code fence of any length,
indented code, an HTML block, a list or a quote does not. A YAML front matter block at the top is text. Every line
of a document belongs to exactly one section's own text (its heading up to its first sub-heading), so showing
sections and pages never loses text.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any
from urllib.parse import unquote

from markdown_it import MarkdownIt

_BLOCKS = MarkdownIt("commonmark").enable("table").disable("inline")  # structure only: fast on big documents
_INLINE = MarkdownIt("commonmark")
_KEPT = {"fence", "code_block", "html_block"}  # blocks a page is not cut inside when they fit in one
_FIELD = re.compile(r"^[A-Za-z_][\w-]*\s*:")


def slug(text: str) -> str:
    """`Filling forms (PDF)` -> `filling-forms-pdf`: lowercase words joined with `-`, at most 40 characters."""
    return re.sub(r"[\W_]+", "-", text.lower()).strip("-")[:40].strip("-")


def plain(inline: str) -> str:
    """The text of inline markdown, without its markup: `Fill **forms** with `x`` -> `Fill forms with x`."""
    tokens = _INLINE.parseInline(inline)
    return "".join(
        " " if c.type in ("softbreak", "hardbreak") else c.content
        for t in tokens
        for c in t.children or []
        if c.type in ("text", "code_inline", "softbreak", "hardbreak")
    ).strip()


@dataclass
class Section:
    """A heading and what follows it up to the next heading of its level or above: lines `start` to `end`."""

    heading: str
    level: int
    start: int
    end: int = 0
    slug: str = ""
    children: list[Section] = field(default_factory=list)

    @property
    def own_end(self) -> int:
        """Where the section's own text ends: at its first sub-section."""
        return self.children[0].start if self.children else self.end

    def count(self) -> int:
        """Sections below this one, at any depth."""
        return sum(1 + c.count() for c in self.children)


@dataclass
class Document:
    """A parsed markdown text. `root` is the whole document (titled by its first line when that is a heading);
    `front` the YAML text of its front matter."""

    lines: list[str]
    root: Section
    front: str
    first_paragraph: str
    _linked: list[str]  # inline text with a link in it
    _references: list[str]  # the targets of reference definitions (`[name]: path.md`)
    _starts: frozenset[int]  # lines where a block begins: good places to cut
    _kept: dict[int, tuple[int, int]]  # a line inside a fence, HTML block or front matter: that block's lines
    _sizes: list[int]  # characters before each line

    @functools.cached_property
    def links(self) -> list[str]:
        """The targets of its links outside code, inline and reference-style (read on demand: help needs none)."""
        inline = [
            c.attrGet("href")
            for src in self._linked
            for t in _INLINE.parseInline(src)
            for c in t.children or []
            if c.type == "link_open"
        ]
        return [unquote(str(href)) for href in [*inline, *self._references] if href]

    def text(self, start: int, end: int) -> str:
        return "\n".join(self.lines[start:end]).strip("\n")

    def pages(self, start: int, end: int, room: int) -> list[str]:
        """Lines `start` to `end` cut into pages of at most `room` characters: at a line boundary, where possible
        not inside a fenced block, and at a block boundary when that keeps the page at least half full. Only a line
        longer than a page is cut inside, and a fenced block only when it is longer than a page."""
        out: list[str] = []
        s = start
        while s < end:
            if len(self.lines[s]) >= room:
                line = self.lines[s]
                out += [line[i : i + room] for i in range(0, len(line), room)]
                s += 1
                continue
            e = s
            while e < end and self._sizes[e + 1] - self._sizes[s] <= room:
                e += 1
            if e < end:
                e = max(range(s + 1, e + 1), key=lambda i: self._cut(s, i, room))
            out.append(self.text(s, e))
            s = e
        return [p for p in out if p.strip()]

    def _cut(self, start: int, i: int, room: int) -> tuple[bool, bool, int]:
        """The score of ending before line `i` a page that begins at line `start`, higher is better: first not
        splitting a block that fits in a page, then a block boundary that leaves the page at least half full, then
        the latest line."""
        block = self._kept.get(i)
        splits = block is not None and self._sizes[block[1]] - self._sizes[block[0]] <= room
        at_block = i in self._starts or not self.lines[i - 1].strip()
        return not splits, at_block and self._sizes[i] - self._sizes[start] >= room // 2, i


def _front_matter(lines: list[str]) -> int:
    """The number of lines of a YAML front matter block at the top (`---`, `key: ...` lines, `---`), 0 if none."""
    if len(lines) < 3 or lines[0].rstrip() != "---" or not _FIELD.match(lines[1]):
        return 0
    return next((i + 1 for i in range(2, len(lines)) if lines[i].rstrip() in ("---", "...")), 0)


@functools.lru_cache(maxsize=16)
def parse(text: str) -> Document:
    """The structure of a markdown text (the last few are kept: a topic is read at each call)."""
    lines = re.sub(r"\r\n?", "\n", text).split("\n")
    skip = _front_matter(lines)
    env: dict[str, Any] = {}
    tokens = _BLOCKS.parse("\n".join(lines[skip:]), env)
    starts, kept = set(), dict.fromkeys(range(1, skip), (0, skip))
    headings, linked, first_paragraph = [], [], ""
    for i, tok in enumerate(tokens):
        if tok.map is None:
            continue
        a, b = tok.map[0] + skip, tok.map[1] + skip
        starts.add(a)
        if tok.type in _KEPT:
            kept.update(dict.fromkeys(range(a + 1, b), (a, b)))
        elif tok.type == "heading_open" and tok.level == 0:
            headings.append((int(tok.tag[1]), a, plain(tokens[i + 1].content)))
        elif tok.type == "inline":
            if "](" in tok.content:
                linked.append(tok.content)
            if not first_paragraph and tokens[i - 1].type == "paragraph_open":
                first_paragraph = plain(tok.content)
    references = [ref["href"] for ref in env.get("references", {}).values()]
    root = _outline(lines, skip, headings)
    sizes = [0, *accumulate(len(line) + 1 for line in lines)]
    front = "\n".join(lines[1 : skip - 1]) if skip else ""
    return Document(lines, root, front, first_paragraph, linked, references, frozenset(starts), kept, sizes)


def _outline(lines: list[str], skip: int, headings: list[tuple[int, int, str]]) -> Section:
    """The section tree: the document, titled by its first heading when that is its first line; each later
    heading nests under the nearest heading above it of a higher level (a second title-level heading is a
    section of the document, not a sibling of it)."""
    first = next((i for i in range(skip, len(lines)) if lines[i].strip()), len(lines))
    root = Section("", 0, 0, len(lines))
    if headings and headings[0][1] == first:
        (root.level, _, root.heading), headings = headings[0], headings[1:]
    stack = [root]
    for level, start, heading in headings:
        while len(stack) > 1 and stack[-1].level >= level:
            stack.pop().end = start
        section = Section(heading, level, start)
        stack[-1].children.append(section)
        stack.append(section)
    for section in stack[1:]:
        section.end = len(lines)
    _name(root)
    return root


def _name(section: Section) -> None:
    """Slugs unique among siblings: `usage`, `usage-2`; a heading with no word in it is `section-N`."""
    used: set[str] = set()
    for k, child in enumerate(section.children, 1):
        base = child.slug = slug(child.heading) or f"section-{k}"
        n = 1
        while child.slug in used:
            n += 1
            child.slug = f"{base}-{n}"
        used.add(child.slug)
        _name(child)
