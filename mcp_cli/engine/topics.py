"""Reading a document through argv: a path of section names, and `--part N` for an answer in several parts.
Wrong names and parts are errors here; the text itself is rendered by `help`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import NotFound, UsageError, close_to
from ..tree import Topic
from ..types import whole_option
from . import help as helptext

if TYPE_CHECKING:  # markdown-it is imported on the first document read, not at every start
    from . import markdown


def read(prog: str, topic: Topic, rest: list[str], budget: int, cap: int) -> str:
    """A topic, or one of its sections by a path of names (`rest`, plus `--part N`): no text and no section is
    left out (see `help.topic_pages`)."""
    from . import markdown

    doc = markdown.parse(topic.text)
    names, part = _args(prog, rest)
    section, where = _section(prog, doc, names)
    pages = helptext.topic_pages(prog, topic, doc, section, where, budget, cap)
    if part > len(pages):
        raise UsageError(f"`{where}` has {len(pages)} part{'s' * (len(pages) > 1)}; --part takes 1 to {len(pages)}.")
    return helptext.page(pages, part, where)


def _args(prog: str, rest: list[str]) -> tuple[list[str], int]:
    """Section names and the part asked for (`--part N` or `--part=N`); `-h`/`--help` change nothing."""
    names, part, tokens = [], 1, iter(rest)
    for token in tokens:
        if token in ("-h", "--help"):
            continue
        if token == "--part" or token.startswith("--part="):
            value = token.partition("=")[2] if "=" in token else next(tokens, "")
            part = whole_option(value, "--part takes a part number (1, 2, ...)", 1, 2)
        elif token.startswith("-"):
            raise UsageError(f"`{prog}` takes section names and --part N; unknown option {token}.")
        else:
            names.append(token)
    return names, part


def _section(prog: str, doc: markdown.Document, names: list[str]) -> tuple[markdown.Section, str]:
    """The section a path of names leads to, and its full path. At each level the longest run of names that is a
    section's name joined by `-` (`fill form` for `fill-form`) wins, then the longest that starts one."""
    section, path, i = doc.root, [prog], 0
    while i < len(names):
        where = " ".join(path)
        if not section.children:
            raise NotFound(f"`{where}` has no sections; run `{where}` to read it.")
        found = _child(section, names[i:])
        if found is None:
            key, slugs = "-".join(names[i:]).lower(), [c.slug for c in section.children]
            near = [s for s in slugs if s.startswith(names[i].lower())]
            close = close_to(key, slugs) or close_to(names[i], slugs)
            could = " It could be " + ", ".join(f"`{s}`" for s in near) + "." if near and not close else ""
            listing = helptext.section_listing(doc, section, where, 10_000)[0]
            raise NotFound(f"`{where}` has no section `{key}`.{could}", close, listing)
        section, used = found
        path.append(section.slug)
        i += used
    return section, " ".join(path)


def _child(section: markdown.Section, names: list[str]) -> tuple[markdown.Section, int] | None:
    """The sub-section the first names lead to, and how many names that took; None when none or several do."""
    for match in (str.__eq__, str.startswith):
        for k in range(len(names), 0, -1):
            key = "-".join(names[:k]).lower()
            hits = [c for c in section.children if match(c.slug, key)]
            if len(hits) == 1:
                return hits[0], k
    return None
