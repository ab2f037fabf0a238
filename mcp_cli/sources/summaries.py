"""What a server or a tool is for, in a line, where it does not say so itself.

A server's own words come first: its `serverInfo` description, else its title, when they say something (two words
at least besides its name). Else its line is made from what its tools do: the things they act on
(`grouping.profile`) and, where they act on one thing only, their verbs (`Get, list, convert rates.`); where that
says too little, from the first sentence of its `instructions` (`mcp_tools`). A tool without a description gets one
from its name and parameters (`list_events` with `limit`, `cursor` -> `List events (limit, cursor).`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from typing import Any

from ..search.lexicon import NAME_VERBS, STOP
from ..text import first_sentence, one_line, words
from . import grouping

PARAMS = 3  # parameters named in a description made from a tool's name


def says_something(text: str, name: str = "") -> bool:
    """Whether a summary tells something: two words at least that are not the `name`'s (not `Ticker.` of ticker)."""
    own = set(words(name))
    return len([w for w in words(text) if w not in own]) >= 2


def of_server(info: Mapping[str, Any], name: str, keys: tuple[str, ...] = ("description", "title")) -> str:
    """What a server says it is for, in one line: the first sentence of the first of its `keys` (serverInfo
    description, title, instructions) that says something; '' when none does."""
    for text in (info.get(key) for key in keys):
        line = first_sentence(text, 200) if isinstance(text, str) else ""
        if says_something(line, name):
            return line
    return ""


def brand(descriptions: list[str], name: str, info: Mapping[str, Any] | None = None) -> str:
    """The name a server's tools call what they work on, where its key `name` does not say it: the capitalised
    words (`Pipedrive`, `Outlook Mail`, `Word`) that at least half its tools' descriptions use inside a sentence,
    else the words of its `serverInfo` name where it names an MCP server (`pipedrive-mcp` -> `Pipedrive`; not
    `FastMCP`, a framework's default); '' when neither says more than the key.
    A key like `mcp` or `srv` then reads `Pipedrive: contacts, deals, company.`"""
    own, key = set(words(name)), _compact(name)
    counts: Counter[str] = Counter()
    for text in descriptions:
        counts.update({m for m in _BRAND.findall(first_sentence(text, 300)) if _new(m, own, key)})
    if counts:
        found, times = max(counts.items(), key=lambda kv: (kv[1], len(kv[0])))
        if times * 2 >= len(descriptions) and not found.isupper():
            return found
    server = words(info.get("name") or "") if info and isinstance(info.get("name"), str) else []
    said = [w for w in server if w not in _SERVER_WORDS]
    named = len(said) < len(server) and _compact(" ".join(server)) != "fastmcp"  # `pipedrive-mcp`, not `listed`
    return " ".join(said).title() if named and said and _new(" ".join(said), own, key) else ""


def _compact(text: str) -> str:
    return "".join(words(text))


def _new(brand: str, own: set[str], key: str) -> bool:
    """Whether a brand says more than a server's key: none of its words is the key's (`Outlook Mail` of
    `outlook-mail`, `Terraform Cloud` of `terraform`), nor is it spelt inside it (`GitLab` of `gitlab`, `PDFs` of
    `pdf-reader`), and it is more than stop words."""
    said = set(words(brand))
    compact = _compact(brand)
    return bool(said - STOP) and not said & own and compact.rstrip("s") not in key and key not in compact


# a capitalised word or run of them after a sentence's first word: `in Outlook Mail`, `a Word document`
_BRAND = re.compile(r"(?<=\w[ (])[A-Z][\w-]*(?: [A-Z][\w-]*)*")
_SERVER_WORDS = frozenset({"mcp", "server", "servers", "model", "context", "protocol", "tool", "tools", "api"})


def of_tool(name: str, params: list[str]) -> str:
    """A description made from a tool's name and parameters: `List events (limit, cursor).`; '' for a name of no
    words."""
    said = " ".join(words(name))
    if not said:
        return ""
    shown = ", ".join(params[:PARAMS]) + (", ..." if len(params) > PARAMS else "")
    return f"{said[:1].upper()}{said[1:]}" + (f" ({shown})." if shown else ".")


def of_tools(tools: list[str], name: str = "", things: int = 2) -> str:
    """A line made from what tools do: the things they act on, most acted on first (those `name` says left out);
    for one thing, the verbs acting on it (`Get, list rates.`); '' when their names tell neither."""
    counts, spelled = grouping.profile(tools)
    said = {grouping.singular(w) for w in words(name)}
    nouns = [n for n, _ in counts.most_common() if not set(n.split("-")) <= said][:things] or list(counts)[:1]
    if len(nouns) == 1:
        parts = set(nouns[0].split("-"))
        acting = [ws for ws in map(words, tools) if parts <= {grouping.singular(w) for w in ws}]
        verbs = list(dict.fromkeys(w for ws in acting for w in ws if w in NAME_VERBS))[:3]
        return _line(", ".join(verbs) + " " + spelled[nouns[0]]) if verbs else _line(spelled[nouns[0]])
    return _line(", ".join(spelled[n] for n in nouns))


def gist(text: str, most: int = 5) -> str:
    """The first `most` words of a text's first sentence (without stop words at the cut), `...` when there are
    more: a row's summary."""
    line = one_line(text, 200).rstrip(".")
    cut = line.split()
    kept = cut[:most]
    while len(cut) > most and len(kept) > 1 and kept[-1].lower().strip(",;:") in STOP:  # not `... for...`
        kept.pop()
    return _line(" ".join(kept).rstrip(",;:") + ("..." if len(cut) > most else ""))


def _line(text: str) -> str:
    text = text.strip()
    return f"{text[:1].upper()}{text[1:]}" + ("" if not text or text.endswith((".", "...")) else ".")


FIELDS = 6  # fields of an output schema a `Returns:` line names


def of_output(schema: object) -> str:
    """What a tool's output schema says it returns, in a line: its own description's first sentence, else its shape
    (`a JSON object: id, url, created_at`, `a JSON array of objects: name, size, ...`); '' when it says nothing."""
    if not isinstance(schema, dict):
        return ""
    said = schema.get("description") or schema.get("title")
    if isinstance(said, str) and said.strip():
        return first_sentence(said, 200)
    kind, items = schema.get("type"), schema.get("items")
    if kind == "array" and isinstance(items, dict):
        inner = of_output({k: v for k, v in items.items() if k not in ("description", "title")})
        return f"a JSON array of {inner.removeprefix('a JSON ').replace('object:', 'objects:', 1)}" if inner else ""
    properties = schema.get("properties")
    if isinstance(properties, dict) and properties:
        names = list(properties)
        return "a JSON object: " + ", ".join(names[:FIELDS]) + (", ..." if len(names) > FIELDS else "")
    return f"a JSON {kind}" if isinstance(kind, str) and kind not in ("object", "null") else ""
