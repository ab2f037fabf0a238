"""Help text at every level: root, group, command, doc topic. Plain text, deterministic, stable order (DESIGN.md)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import cache, partial
from typing import TYPE_CHECKING

from ..text import WIDTH, clip, columns, first_sentence, one_line, rows, sentence, spellings
from ..tree import Command, Group, Node, Param, Topic
from ..types import VALUE_TYPES
from .schema import JSON_ALL

if TYPE_CHECKING:  # markdown-it is imported on the first document read, not at every start
    from . import markdown


PIPES = "Pipe with |: jq, head, tail, each, save (`each --help`); run several with ; or &&."  # the grammar, in as few
# tokens as root help allows (docs/pipelines.md)
_HINTS = (
    ("readOnlyHint", "read-only"),
    ("destructiveHint", "destructive"),
    ("idempotentHint", "idempotent"),
)  # openWorldHint is left out: true is the protocol's default and almost every tool says it


def lead(node: Node, text: str) -> tuple[str, str]:
    """What a help says of a node first (a group's title, a command's first line under its usage), and the rest of
    `text` (its description) to show after it: the text's first sentence whole and what follows it, when the node's
    summary is that sentence or a clip of it; else the summary, and the whole text."""
    text, summary = text.strip(), one_line(node.summary, 10_000)
    first = sentence(" ".join(text.split("\n\n", 1)[0].split()))
    if summary and (first == summary or summary.endswith("...") and first.startswith(summary[:-3])):
        end = re.match(rf"\s*(?:\S+\s+){{{len(first.split()) - 1}}}\S+", text)
        return first, text[end.end() if end else 0 :].strip()
    return clip(summary, 200), text


def title(prog: str, about: str) -> str:
    return f"{prog} - {about}" if about else prog


SHORTEST = 24  # characters a row's summary is cut to, at the least, before a listing shows names only


def _listings(heading: str, nodes: Sequence[Node], calls: bool = False) -> list[Callable[[], list[str]]]:
    """A heading and one row per node, from the richest rendering to the leanest, each giving up what tells least:
    with `calls`, under each command's row what its usage line has after its name (its required options, how many
    others: an agent can call one straight from the listing); then summaries go before usage lines (a command's row
    is its name and that line); then, without usage lines, summaries are cut shorter and shorter; last, names only,
    wrapped, with a pointer. Each is rendered when first asked for, once."""
    calls = calls and any(isinstance(n, Command) for n in nodes)

    def rendered(width: int | None, usages: bool) -> list[str]:
        lines = [f"{heading}:"]
        named = [(n.name, n.summary if width is None else clip(n.summary, width) if width else "") for n in nodes]
        for node, row in zip(nodes, rows(named), strict=True):
            if usages and isinstance(node, Command) and width == 0:
                lines += usage(node.name, node, counted=True).splitlines()
            else:
                takes = arguments(node) if usages and isinstance(node, Command) else ""
                lines += [row, *takes.splitlines()]
        return lines

    def names() -> list[str]:
        row, out = "", [f"{heading} ({len(nodes)}, summaries left out to fit):"]
        for name in (n.name for n in nodes):
            if row and len(row) + len(name) + 2 > WIDTH:
                out.append(row)
                row = ""
            row = f"{row}, {name}" if row else f"  {name}"
        return [*out, row]

    ways = [(None, True), (0, True)] if calls else []
    ways += [(width, False) for width in (None, 60, 52, 44, 36, SHORTEST)]
    return [*(cache(partial(rendered, width, usages)) for width, usages in ways), cache(names)]


def callable_within(commands: Sequence[Command], budget: int) -> bool:
    """Whether a group's commands fit `budget` characters of its listing as usage lines at least (no summaries):
    a group that does not is split (sources)."""
    return _size(_listings("Commands", commands, True)[1]()) <= budget


def _size(lines: list[str]) -> int:
    """Characters of lines, each with its newline."""
    return sum(len(line) + 1 for line in lines)


def group_help(prog: str, group: Group, is_root: bool, budget: int) -> str:
    """Help of a group: title (without a summary that only names children: the listing names them all), usage,
    description, its children by kind; at the root, where to go next (and that options may come as one `--json`
    object, where commands take it: their own help leaves it out)."""
    groups = [n for n in group.children if isinstance(n, Group)]
    commands = [n for n in group.children if isinstance(n, Command)]
    topics = [n for n in group.children if isinstance(n, Topic)]
    word = "domain" if is_root else "group"
    if groups:
        usage, nxt = f"{prog} <{word}> <command> [options]", f"Run `{prog} <{word}> --help` for {word} help."
        if commands or topics:
            nxt = f"Run `{prog} <name> --help` for more."
    elif commands and not groups and not topics:
        usage, nxt = f"{prog} <command> [options]", f"Run `{prog} <command> --help` for command help."
    elif topics and not groups and not commands:
        usage, nxt = f"{prog} <topic>", f"Run `{prog} <topic>` to read one."
    else:
        usage, nxt = f"{prog} <name> ...", f"Run `{prog} <name> --help` for more."
    head, about = lead(group, group.description)
    items = {x.strip(" .").lower() for x in head.split(",")} - {""}
    lines = [prog if items <= {n.name for n in group.children} else title(prog, head), "", "Usage:", f"  {usage}", ""]
    about = about.split("\n\n")[0]  # a listing needs the gist, not the whole story
    if about:
        lines += [about, ""]
    sections = [
        (h, n)
        for h, n in (("Domains" if is_root else "Groups", groups), ("Commands", commands), ("Topics", topics))
        if n
    ]
    room = budget - sum(len(x) + 1 for x in lines) - (len(PIPES) + 1) * is_root
    ways = [_listings(h, n, h == "Commands") for h, n in sections]
    at = [0] * len(ways)  # the rendering each section shows: the largest gives up the most telling part first
    while sum(_size(w[i]()) for w, i in zip(ways, at, strict=True)) > room:
        leaner = [k for k in range(len(ways)) if at[k] + 1 < len(ways[k])]
        if not leaner:
            break
        k = max(leaner, key=lambda j: _size(ways[j][at[j]]()))
        at[k] += 1
    full = [w[i]() for w, i in zip(ways, at, strict=True)]
    for part in full:
        lines += part + [""]
    if not group.children:
        lines += ["(nothing here yet)", ""]
    if is_root:
        lines.append(PIPES)
        lines.append(nxt + " Options may also come as one `--json` object (or @FILE)." * _takes_json(group))
    return "\n".join(lines).rstrip("\n") + "\n"


def _takes_json(group: Group) -> bool:
    """Whether a command under `group` takes `--json`; it stops at the first that does (root help of 10,000 tools)."""
    stack: list[Node] = list(group.children)
    while stack:
        node = stack.pop()
        if isinstance(node, Group):
            stack.extend(node.children)
        elif isinstance(node, Command) and any(p.name == JSON_ALL for p in node.params):
            return True
    return False


DETAIL = 6  # the indent of the lines under an option


CHOICES = 40  # characters of a parameter's choices written out in a usage line (`{a,b}`); longer: CHOICE


def metavar(p: Param, spelled: int = CHOICES) -> str:
    """How a parameter's value is named: its choices where they take at most `spelled` characters, else `CHOICE`,
    else its type's name."""
    if p.metavar:
        return p.metavar
    if p.choices is not None and len(",".join(map(str, p.choices))) <= spelled:
        return "{" + ",".join(map(str, p.choices)) + "}"
    if p.choices is not None:
        return "CHOICE"
    return p.name.upper().replace("-", "_") if p.positional else VALUE_TYPES[p.type].metavar


def _nargs_form(p: Param, mv: str) -> str:
    n = "?" if p.positional and p.nargs is None and not p.required else p.nargs
    if n == "?":
        return f"[{mv}]"
    if n == "*":
        return f"[{mv} ...]"
    if n == "+":
        return f"{mv} [{mv} ...]"
    if n == "...":
        return "..."
    if isinstance(n, int):
        return " ".join([mv] * n)
    return mv


def _invocation(p: Param, long_only: bool = True, spelled: int = CHOICES) -> str:
    """How a parameter is written: `--out PATH`, `-v`, `--flag/--no-flag`, `FILE [FILE ...]` (choices of up to
    `spelled` characters written out)."""
    if p.positional:
        return _nargs_form(p, metavar(p, spelled))
    flags = [max(spellings(p.flags), key=len)] if long_only else spellings(p.flags)
    if p.action == "negatable":
        return " | ".join(f"{f}/--no-{f.lstrip('-')}" for f in flags)
    if not p.takes_value:
        return ", ".join(flags)
    value = _nargs_form(p, metavar(p, spelled))
    return ", ".join(f"{f} {value}" for f in flags) if long_only else ", ".join(flags) + f" {value}"


def _options(cmd: Command) -> list[Param]:
    """The options a command's help shows: all but `--json`, which every wrapped tool takes (root help says so)."""
    return [p for p in cmd.params if not p.positional and p.name != JSON_ALL]


def usage(prog: str, cmd: Command, counted: bool = False) -> str:
    """argparse-style usage: the required options, exclusive ones joined with `|`, then `[options]` for the others
    (the Options list shows each), then positionals; wrapped. `counted`, as a listing writes it: the others each
    in brackets where the line still fits its width (`[--depth INT]`: an agent calls it without its help), else
    their names (`[options: --bold --italic --color]`), else how many they are (`[3 options]`)."""
    return _wrapped(f"  {prog}", _pieces(cmd, counted, len(prog) + 2), len(prog) + 2)


def arguments(cmd: Command, lines: int = 1) -> str:
    """What a listing or a search answer writes under a command's row: its usage line without the path the row
    already names (`--issue-key TEXT [--fields TEXT]`), indented under the row; empty for a command that takes
    nothing. Its optional options are shown whole, else by their names, else counted, whichever fits in `lines`
    lines, and choices of up to CHOICES characters a line are written out (a search answer, which shows a few
    commands, gives two: an agent sees `--labels` and `--method {get,get_comments,...}` without a `--help`)."""
    pieces = _pieces(cmd, True, 4, WIDTH * lines)
    return _wrapped("   ", pieces, 5) if pieces else ""


def _pieces(cmd: Command, counted: bool, room: int, width: int = WIDTH) -> list[str]:
    """The parts of a usage line after its path, `room` characters of the line taken before them, its optional
    options (when `counted`) in whichever form fits in `width` characters, choices written out as far as a line of
    that width allows (CHOICES characters each WIDTH)."""
    spelled = CHOICES * width // WIDTH
    if cmd.passthrough:
        return ["[ARGS ...]"]
    pieces: list[str] = []
    seen: set[str] = set()
    by_name = {p.name: p for p in cmd.params}
    options = _options(cmd)
    for p in options:
        if p.name in seen:
            continue
        group = next((e for e in cmd.exclusive if p.name in e.params), None)
        if group:
            members = [by_name[n] for n in group.params if n in by_name]
            seen.update(m.name for m in members)
            inner = " | ".join(_invocation(m, spelled=spelled) for m in members)
            pieces.append(f"({inner})" if group.required else f"[{inner}]")
        elif p.required:
            seen.add(p.name)
            pieces.append(_invocation(p, spelled=spelled))
    others = [p for p in options if p.name not in seen]
    positionals = [_invocation(p, spelled=spelled) for p in cmd.params if p.positional]
    if others and counted:
        each = [f"[{_invocation(p, spelled=spelled)}]" for p in others]
        flags = [max(spellings(p.flags), key=len) for p in others]
        named = (
            [f"[options: {flags[0]}", *flags[1:-1], f"{flags[-1]}]"] if len(flags) > 1 else [f"[options: {flags[0]}]"]
        )
        for way in (each, named, [f"[{len(others)} option{'s' * (len(others) > 1)}]"]):
            if room + len(" ".join(["", *pieces, *way, *positionals])) <= width:
                break
        pieces += way
    elif others:
        pieces.append("[options]")
    return pieces + positionals


def _wrapped(first: str, pieces: list[str], indent: int) -> str:
    """`first` then the pieces, a space before each, wrapped at WIDTH with later lines indented by `indent`."""
    lines, line = [], first
    for piece in pieces:
        if len(line) + 1 + len(piece) > WIDTH and len(line) > indent:
            lines.append(line)
            line = " " * indent
        line += " " + piece
    lines.append(line)
    return "\n".join(lines)


def _notes(p: Param, cmd: Command) -> str:
    notes = []  # whether it is required shows in the usage line
    if p.metavar and p.type != "string":
        notes.append(p.type)
    if p.choices is not None and (p.metavar or metavar(p) == "CHOICE") and not p.details:  # details list them
        notes.append("one of: " + ", ".join(map(str, p.choices)))
    if p.action == "append":
        notes.append("repeatable")
    if p.action == "count":
        notes.append("repeatable, counts")
    empty = p.default is None or p.default is False or (isinstance(p.default, (str, list, dict)) and not p.default)
    if not empty and p.action != "store_false" and "default" not in p.help.lower():
        notes.append(f"default: {p.default}")
    others = [n for e in cmd.exclusive if p.name in e.params for n in e.params if n != p.name]
    if others:
        names = {q.name: _invocation(q).split(" ")[0] for q in cmd.params}
        notes.append("not with " + ", ".join(names.get(n, n) for n in others))
    return f"({'; '.join(notes)})" if notes else ""


def command_help(prog: str, cmd: Command, budget: int = 10**9, full: bool = False) -> str:
    """Help of a command, in click's order: usage, description, every parameter with type, default, required.
    Over `budget` characters (unless `full`), descriptions are cut to their first sentence, with a pointer."""
    text = _command_help(prog, cmd, short=False)
    if full or len(text) <= budget:
        return text
    return (
        _command_help(prog, cmd, short=True) + f"\nDescriptions are cut to fit; `{prog} --help-all` shows them whole.\n"
    )


_RETURNS = re.compile(
    r"(?:^|(?<=[.!?]\s))((?:returns?|outputs?|prints?|responds? with|yields?|gives back)\b[^.!?\n]*)", re.IGNORECASE
)


def returns(cmd: Command) -> str:
    """What a command gives back, in a line, where anything says so: its source's word (`Command.returns`: an MCP
    tool's output schema), else a sentence of its description or usage text that starts with "Returns", "Outputs",
    "Prints" and the like (a tool's description, a script's docstring); '' when nothing does: never guessed."""
    if cmd.returns:
        return clip(cmd.returns, 200)
    found = _RETURNS.search(f"{cmd.description}\n{cmd.usage}")
    if not found:
        return ""
    said = re.sub(r"^returns?\s+", "", found.group(1).strip(), flags=re.IGNORECASE)
    return clip(said[:1].upper() + said[1:] + ".", 200)


def _command_help(prog: str, cmd: Command, short: bool) -> str:
    head, about = lead(cmd, cmd.usage if cmd.passthrough else "")
    if not about:
        head, about = lead(cmd, cmd.description)
    if short and not cmd.passthrough:
        head, about = clip(head, 200), about and first_sentence(about, 200)
    lines = ["Usage:", usage(prog, cmd), ""] + [line for x in (head, about) if x for line in (x, "")]
    said = returns(cmd)
    if said and said.rstrip(".").lower() not in f"{head} {about}".lower():  # said once: not where the text says it
        lines += [f"Returns: {said}", ""]
    if cmd.passthrough:
        return "\n".join([*lines, "Arguments are passed to the command unchanged."]) + "\n"
    for heading, params in (
        ("Arguments", [p for p in cmd.params if p.positional]),
        ("Options", _options(cmd)),
    ):
        if params:
            rows = [
                (
                    _invocation(p, long_only=False),
                    " ".join(
                        x
                        for x in (
                            one_line(p.help, 100) if short else p.help,
                            p.notes and f"[{p.notes}]",
                            _notes(p, cmd),
                        )
                        if x
                    ),
                )
                for p in params
            ]
            lines.append(f"{heading}:")
            for p, row in zip(params, columns(rows), strict=True):  # a row, then the lines under it (choices, fields)
                lines += [row] + [" " * DETAIL + d for d in p.details]
            lines.append("")
    hints = [label for key, label in _HINTS if cmd.annotations.get(key)]
    if hints:
        lines += ["Hints: " + ", ".join(hints) + ".", ""]
    if cmd.examples:
        lines += ["Examples:"] + [f"  {e}" for e in cmd.examples] + [""]
    if cmd.aliases and cmd.schema is None:  # an upstream tool's alias is just its original name
        lines += ["Aliases: " + ", ".join(cmd.aliases), ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def topic_pages(
    prog: str, topic: Topic, doc: markdown.Document, section: markdown.Section, where: str, budget: int, cap: int
) -> list[str]:
    """A topic's section (`where` is its path) in pages of at most `cap` characters: whole when it fits `budget`;
    else its own text, then its sub-sections listed with their sizes. The first page has the topic's title."""
    header = f"{title(prog, one_line(topic.summary, 200))}\n\n" if section is doc.root else ""
    room = max(cap - len(header) - 200, 500)  # 200: the note on parts
    split = bool(section.children) and len(doc.text(section.start, section.end)) > min(budget, room)
    pages = doc.pages(section.start, section.own_end if split else section.end, room)
    if split:
        listing = section_listing(doc, section, where, room)
        if pages and len(pages[-1]) + 2 + len(listing[0]) <= room:
            pages[-1] += "\n\n" + listing.pop(0)
        pages += listing
    pages = pages or [""]
    pages[0] = header + pages[0]
    return pages


def page(pages: list[str], part: int, where: str) -> str:
    """Page `part` (from 1) of several, with a note saying how to read the next."""
    out = pages[part - 1]
    if len(pages) > 1:
        more = f" Run `{where} --part {part + 1}` for the next." if part < len(pages) else " The last part."
        out += f"\n\n[Part {part} of {len(pages)}.{more}]"
    return out.strip("\n") + "\n"


def section_listing(doc: markdown.Document, section: markdown.Section, where: str, room: int) -> list[str]:
    """The sub-sections of a section, one a line with its size, and how to read one: in pieces of at most `room`
    characters when there are too many for one."""
    entries = []
    for c in section.children:
        n = c.count()
        about = f"{len(doc.text(c.start, c.end)):,} chars" + (f", {n} sub-section{'s' * (n > 1)}" if n else "")
        entries.append((c.slug, f"{clip(c.heading, 80) or c.slug} ({about})"))  # a heading may be a paragraph
    run = f"Run `{where} <section>` to read one."
    chunks: list[list[tuple[str, str]]] = [[]]
    used = 0
    for slug, about in entries:
        cost = len(slug) + len(about) + 34  # a row at most: indent, padding to the column, spaces, newline
        if chunks[-1] and used + cost > room - len(run) - 100:
            chunks.append([])
            used = 0
        chunks[-1].append((slug, about))
        used += cost
    size, first, out = len(doc.text(section.start, section.end)), 1, []
    for chunk in chunks:
        span = "" if len(chunks) == 1 else f"{first}-{first + len(chunk) - 1} of {len(entries)}; "
        out.append("\n".join([f"Sections ({span}{size:,} characters in all):", *columns(chunk), "", run]))
        first += len(chunk)
    return out


IN_CONTEXT = 5  # entities named in root help


def in_context(entities: list[tuple[str, list[str]]]) -> str:
    """Root help's line on the session's context: the most recent entities, each with the domains that acted on it
    (`In context: ENG-423 (jira), acme/api (github, gitlab).`)."""
    named = [f"{clip(value, 40)} ({clip(', '.join(domains[:3]), 60)})" for value, domains in entities[:IN_CONTEXT]]
    return "\nIn context: " + ", ".join(named) + ".\n"
