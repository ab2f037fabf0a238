"""Help for scripts whose arguments pass through: a summary and usage text from their comments.

The header is the comment blocks at the top (after a shebang, coding line or inline script metadata), without
licence blocks and editor or linter directives. Set-up lines (`set -e`, `shopt`, `trap`, `IFS=`, imports) do not
end the top, so a usage block after `set -euo pipefail` or after the imports is found. A comment right over a
line of code annotates it and is left out when it is one line that is not a sentence (`# Exit on error` over
`set -e`, `# Detect Node version`), or when a header came before it. A JavaScript header is a `/** ... */`
(JSDoc) or `//` block; `@usage`, `@example` and `@description` tags read as usage, examples and description.

`NOT_RUN` finds a script saying it is not meant to be run directly (such a script is not a command).
"""

from __future__ import annotations

import re

# Lines that set a script up before its work starts; comments over them describe them, not the script.
_SET_UP = re.compile(
    r"(set|shopt|trap|umask|readonly|declare|source|\.|import)\s|IFS=|export\s+\w+=|from\s+\S+\s+import\s"
)
_DIRECTIVE = re.compile(
    r"^(-\*-.*-\*-|(vim?|ex):.*|shellcheck\s.*|eslint.*|@ts-.*|prettier-.*|[-=*#~_ ]{3,}|"
    r"coding[:=].*)$"
)
_LEGAL = re.compile(r"(?i)\W*(copyright|\(c\)|©|spdx-license|licensed under|license:)")  # a licence header
_USAGE_LINE = re.compile(r"\s*(usage|examples?)\s*(:|$)", re.IGNORECASE)
_TAG = re.compile(r"^@(\w+)\s*(.*)$")
_USAGE_FUNCTION = re.compile(
    r"""(?s)(?:function\s+)?usage\s*(?:\(\))?\s*\{[^}]*?<<-?\s*['"]?(\w+)['"]?\n(.*?)\n\s*\1\b"""
)
_USAGE_ECHO = re.compile(r"""(?m)^[ \t]*(?:echo|printf)\s+(?:-e\s+)?["'][^"'\n]*?\b([Uu]sage:[^"'\n]*)""")

# "This module is not meant to be run directly", "don't execute this directly", "meant to be imported"
NOT_RUN = re.compile(
    r"(?:\bnot|\bnever|n't)\s+(?:be\s+|(?:meant|intended|designed|supposed)\s+to\s+be\s+)?"
    r"(?:run|execute|executed|invoke|invoked|call|called|use|used)\s+(?:(?:this|it|the\s+\w+)\s+)?"
    r"(?:directly|standalone|on\s+its\s+own|as\s+a\s+script)"
    r"|\b(?:meant|intended|designed|only)\s+to\s+be\s+imported|\bimport\s+(?:it|this(?:\s+module)?)\s+instead\b",
    re.IGNORECASE,
)


def comments(source: str, marker: str = "#") -> str:
    """The header comment block of a script, without its markers (see the module's docstring)."""
    blocks: list[list[str]] = [[]]
    in_metadata = False
    for i, line in enumerate(source.splitlines()):
        stripped = line.strip()
        if (i == 0 and stripped.startswith("#!")) or in_metadata and stripped != marker + " ///":
            continue
        if stripped.startswith(marker + " /// ") or stripped == marker + " ///":  # inline script metadata
            in_metadata = not in_metadata
        elif stripped.startswith(marker):
            text = stripped[len(marker) :]
            text = text[1:] if text.startswith(" ") else text
            if not text.strip() or not _DIRECTIVE.match(text.strip()):
                blocks[-1].append(text.rstrip())
        elif not stripped:
            blocks.append([])
        else:  # a line of code: a comment right over it annotates it (`# Exit on error` over `set -e`)
            if _annotates(blocks):
                blocks[-1] = []
            if not _SET_UP.match(stripped):  # the script's work starts
                break
            blocks.append([])
    return "\n\n".join(t for t in map(_text, blocks) if t)


def _annotates(blocks: list[list[str]]) -> bool:
    """Whether the last block, right over a line of code, is about that line: one line that is not a sentence
    (`# Detect Node version`), or anything once a header came before it."""
    last = [line for line in blocks[-1] if line.strip()]
    if any(_USAGE_LINE.match(line) for line in last):
        return False
    return (len(last) == 1 and not last[0].rstrip().endswith((".", "!", "?", ":"))) or any(map(_text, blocks[:-1]))


def _text(block: list[str]) -> str:
    """A comment block's text; '' for a licence header."""
    text = "\n".join(block).strip()
    return "" if _LEGAL.match(text) else text


def shell_usage(source: str) -> str:
    """A shell script's help: its header comments, and a usage text from a `usage()` here-document or an
    `echo "Usage: ..."` line when the header has none."""
    header = comments(source, "#")
    if any(_USAGE_LINE.match(line) for line in header.splitlines()):
        return header
    m = _USAGE_FUNCTION.search(source)
    found = m.group(2).strip() if m else ""
    if not found:
        found = "\n".join(e.group(1).strip() for e in _USAGE_ECHO.finditer(source))
    return "\n\n".join(t for t in (header, found) if t)


def js_usage(source: str) -> str:
    """A JavaScript script's help: its leading `/** ... */` (JSDoc) or `//` comment block, tags made readable."""
    text = re.sub(r"^#!.*\n", "", source.lstrip("\ufeff"))
    text = re.sub(r"""^(\s*(['"])use strict\2;?\s*\n)""", "", text).lstrip()
    if text.startswith("/*"):
        end = text.find("*/")
        raw = text[2:end] if end >= 0 else ""
        lines = [re.sub(r"^\s*\*+ ?", "", line).rstrip() for line in raw.lstrip("*").splitlines()]
    else:
        return comments(text, "//")
    out: list[str] = []
    for line in lines:
        m = _TAG.match(line.strip())
        if not m:
            out.append(line)
        elif m.group(1) in ("usage", "example", "examples"):
            out += ["", "Usage:" if m.group(1) == "usage" else "Example:"] + (["  " + m.group(2)] if m.group(2) else [])
        elif m.group(1) in ("description", "desc", "summary", "file", "fileoverview", "overview") and m.group(2):
            out.append(m.group(2))
        elif m.group(1) in ("param", "arg", "argument", "option", "returns", "return", "throws"):
            out.append(f"  {m.group(1)} {m.group(2)}".rstrip())
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip()


def summary(text: str) -> str:
    """The first paragraph of a help text that is not a usage line, on one line."""
    for para in re.split(r"\n\s*\n", text.strip()):
        lines = [x for x in para.strip().splitlines() if not _USAGE_LINE.match(x)]
        if lines:
            return " ".join(" ".join(lines).split())
    return ""
