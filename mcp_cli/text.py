"""Words and lines: names split into words, kebab-case, one-line summaries, two-column listings.

One place for each, so that a command's name, its search words and its summary agree everywhere.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

WIDTH = 100
SUMMARY = 70  # characters of a summary on a listing's or search's row
# An acronym (with digits and a plural `s`: EC2, PRs), a capitalised or lowercase word (with digits: s3, v2),
# a lone capital.
_WORD = re.compile(r"[A-Z]{2,}[0-9]*s?(?![a-z])|[A-Z]?[a-z0-9]+|[A-Z]")


def words(name: str) -> list[str]:
    """`getPullRequest_files` -> get, pull, request, files; `HTTPServer` -> http, server; `getPRs` -> get, prs."""
    return [w.lower() for w in _WORD.findall(name)]


def kebab(name: str) -> str:
    """`fill_fillable_fields`, `FillFillableFields`, `fill fillable fields` -> `fill-fillable-fields`; accents
    dropped (`créer_problème` -> `creer-probleme`), other scripts left out: ASCII, for names a model API reads."""
    return "-".join(words(latin(name))) or "command"


def command_name(name: str) -> str:
    """A tool's command name: `kebab`, but words of other scripts kept as they are, lower-cased (`获取用户` stays,
    `get_Пользователь` -> `get-пользователь`): argv takes any text. `command` when there is no letter or digit."""
    parts: list[str] = []
    for run in re.findall(r"[^\W_]+", latin(name)):  # runs of letters and digits, any script
        parts += words(run) if run.isascii() else [run.lower()]
    return "-".join(parts) or "command"


# Latin letters that have no decomposition (NFKD leaves them whole)
_LETTERS = str.maketrans(
    {
        "ß": "ss",
        "æ": "ae",
        "Æ": "AE",
        "œ": "oe",
        "Œ": "OE",
        "ø": "o",
        "Ø": "O",
        "đ": "d",
        "Đ": "D",
        "ł": "l",
        "Ł": "L",
        "þ": "th",
        "Þ": "TH",
        "ð": "d",
        "Ð": "D",
        "ı": "i",
    }
)


def latin(text: str) -> str:
    """`text` with accents dropped from Latin letters (`é` -> e, `ß` -> ss, `ﬁ` -> fi, full-width `Ａ` -> A); a
    character of another script stays whole (`が` keeps its mark)."""
    out = []
    for ch in text.translate(_LETTERS):
        bare = "".join(c for c in unicodedata.normalize("NFKD", ch) if not unicodedata.combining(c))
        out.append(bare if bare.isascii() else ch)
    return "".join(out)


def spellings(flags: list[str]) -> list[str]:
    """Flags without those that only spell an earlier one another way (`--fullPath`, `--full_path` after
    `--full-path`): what help shows and suggests; every spelling is accepted."""
    seen: set[str] = set()
    out = []
    for f in flags:
        key = "-".join(words(f)) or f
        if key not in seen:
            out.append(f)
            seen.add(key)
    return out


def one_line(text: str, limit: int = 90) -> str:
    """The first sentence of the first paragraph of `text`, on one line, `clip`ped to `limit` characters."""
    return clip(sentence(" ".join(text.strip().split("\n\n", 1)[0].split())), limit)


def sentence(line: str) -> str:
    """The first sentence of a line: up to the first `.`, `!` or `?` before a space or the end, outside brackets
    and not ending an abbreviation (`e.g.`); the whole line when there is none."""
    return next((line[:end] for end, is_sentence in _cuts(line) if is_sentence), line)


def clip(text: str, limit: int) -> str:
    """`text` on one line, whole when it fits `limit` characters; else cut after its last sentence that fits (when
    that keeps half of it), or after a word, with `...`. Never inside brackets or a `code` span: an open one is
    cut away with what follows it."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cuts = [(end, is_sentence) for end, is_sentence in _cuts(text[: limit + 1]) if end <= limit]
    whole = max((end for end, is_sentence in cuts if is_sentence), default=0)
    if whole >= limit // 2:
        return text[:whole]
    words_end = max((end for end, _ in cuts if end <= limit - 3), default=0)
    if not words_end:  # one long word, or brackets open all along: cut where it must
        words_end = text[: limit - 2].rfind(" ") if " " in text[: limit - 2] else limit - 3
    return text[:words_end].rstrip(" ,;:-") + "..."


_OPEN, _CLOSE = "([{", ")]}"
_ABBREVIATIONS = {"e.g.", "i.e.", "etc.", "vs.", "cf.", "approx.", "incl.", "esp."}


def _cuts(text: str) -> Iterator[tuple[int, bool]]:
    """Where `text` may be cut outside brackets and `code` spans: (end of the part kept, whether a sentence ends
    there). Word ends (before a space, or at the end of `text`) and sentence ends."""
    depth, code = 0, False
    for i, ch in enumerate(text):
        if ch == "`":
            code = not code
        elif not code and ch in _OPEN:
            depth += 1
        elif not code and ch in _CLOSE:
            depth = max(depth - 1, 0)
        at_end = i + 1 == len(text) or text[i + 1] == " "
        if depth or code or not at_end:
            continue
        word = text[: i + 1].rsplit(" ", 1)[-1].lower()
        yield i + 1, ch in ".!?" and word not in _ABBREVIATIONS


def first_sentence(markdown: str, limit: int = 90) -> str:
    """The first sentence of the first paragraph that is not a heading."""
    for para in re.split(r"\n\s*\n", markdown):
        lines = [x for x in para.strip().splitlines() if not x.lstrip().startswith("#")]
        if lines and " ".join(lines).strip():
            return one_line(" ".join(lines), limit)
    return ""


def named(names: list[str], limit: int = 12) -> str:
    """`a, b, c` for the first `limit` names, then `and N more` for the rest."""
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


def columns(rows: list[tuple[str, str]], indent: int = 2, widest: int = 26) -> list[str]:
    """Two-column rows: name, two or more spaces, text; the text of a name longer than `widest` follows it after two
    spaces, out of the column, rather than on a line of its own."""
    width = min(max((len(n) for n, _ in rows), default=0), widest)
    out = []
    for name, text in rows:
        if not text:
            out.append(" " * indent + name)
        else:
            out.append(" " * indent + name.ljust(width) + "  " + text)
    return out


def rows(named: list[tuple[str, str]], widest: int = 26) -> list[str]:
    """One row per entry of a listing or of search: its name, and its summary on one line."""
    return columns([(name, one_line(summary, SUMMARY)) for name, summary in named], widest=widest)
