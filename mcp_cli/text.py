"""Words and lines: names split into words, kebab-case, one-line summaries, two-column listings.

One place for each, so that a command's name, its search words and its summary agree everywhere.
"""

from __future__ import annotations

import re

WIDTH = 100
# An acronym (with digits and a plural `s`: EC2, PRs), a capitalised or lowercase word (with digits: s3, v2),
# a lone capital.
_WORD = re.compile(r"[A-Z]{2,}[0-9]*s?(?![a-z])|[A-Z]?[a-z0-9]+|[A-Z]")
_FIRST_SENTENCE = re.compile(r"(.+?[.!?])(?:\s|$)")


def words(name: str) -> list[str]:
    """`getPullRequest_files` -> get, pull, request, files; `HTTPServer` -> http, server; `getPRs` -> get, prs."""
    return [w.lower() for w in _WORD.findall(name)]


def kebab(name: str) -> str:
    """`fill_fillable_fields`, `FillFillableFields`, `fill fillable fields` -> `fill-fillable-fields`."""
    return "-".join(words(name)) or "command"


def one_line(text: str, limit: int = 90) -> str:
    """The first sentence (or line) of `text`, cut to `limit` characters."""
    text = " ".join(text.strip().split("\n\n", 1)[0].split())
    m = _FIRST_SENTENCE.match(text)
    line = m.group(1) if m else text
    return line if len(line) <= limit else line[: limit - 3].rstrip() + "..."


def first_sentence(markdown: str, limit: int = 90) -> str:
    """The first sentence of the first paragraph that is not a heading."""
    for para in re.split(r"\n\s*\n", markdown):
        lines = [x for x in para.strip().splitlines() if not x.lstrip().startswith("#")]
        if lines and " ".join(lines).strip():
            return one_line(" ".join(lines), limit)
    return ""


def columns(rows: list[tuple[str, str]], indent: int = 2, widest: int = 26) -> list[str]:
    """Two-column rows: name, two or more spaces, text; a name longer than `widest` puts its text on the next
    line."""
    width = min(max((len(n) for n, _ in rows), default=0), widest)
    out = []
    for name, text in rows:
        if not text:
            out.append(" " * indent + name)
        elif len(name) <= width:
            out.append(" " * indent + name.ljust(width) + "  " + text)
        else:
            out.append(" " * indent + name)
            out.append(" " * (indent + width + 2) + text)
    return out
