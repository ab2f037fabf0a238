"""Errors a call can end in. Each class has its `kind` (the result's `error`) and the `exit_code` of `mcp-cli run`;
an error carries what was wrong, close names as data ("Did you mean ...?"), and where it happened, so that the help
shown with it is rendered only when the error is.

`KINDS` is the one list of kinds a result can carry (the table of docs/tool.md follows it; a test checks).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence


class CallError(Exception):
    """A bug in mcp-cli or a broken tree; the server keeps serving. (The base of every error below.)"""

    kind = "internal"
    exit_code = 1

    def __init__(self, message: str, suggestions: Sequence[str] = (), usage: Callable[[], str] | str = "") -> None:
        super().__init__(message)
        self.message = message
        self.suggestions = list(suggestions)
        self.usage = usage  # the help to show with it, or what renders that help

    def render(self) -> str:
        """`Error: <message> Did you mean ...?`, then the help that teaches the fix."""
        usage = self.usage() if callable(self.usage) else self.usage
        return f"Error: {self.message}{did_you_mean(self.suggestions)}" + (f"\n\n{usage}" if usage else "")


class BadRequest(CallError):
    """The tool arguments are malformed: both or neither of argv and command, bad quoting, NUL characters or lone
    surrogates, a message the server cannot read."""

    kind, exit_code = "bad_request", 2


def unsplittable(command: str) -> BadRequest:
    """The error for a `command` string that cannot be split like a POSIX shell would: where the quote left open
    is (or the backslash at the end), and how to write it instead."""
    quote, at, i = "", -1, 0
    while i < len(command):
        ch = command[i]
        if quote == "'":
            quote = "" if ch == "'" else quote
        elif ch == "\\":
            i += 1  # the next character is escaped
        elif ch == quote:
            quote = ""
        elif not quote and ch in "'\"":
            quote, at = ch, i
        i += 1
    instead = "or send `argv` instead, one string per argument"
    if not quote:
        return BadRequest(
            f"cannot split `command` like a shell: it ends with a backslash that escapes nothing; "
            f"remove it, write \\\\ for a backslash, {instead}."
        )
    before = command[:at]
    head = before.split()[-1] if before and not before[-1].isspace() else ""
    word = head + command[at:].split(maxsplit=1)[0]  # the quote's word (split: linear, however long)
    word = word if len(word) <= 60 else word[:57] + "..."
    other, name = ("'", "single") if quote == '"' else ('"', "double")
    return BadRequest(
        f"cannot split `command` like a shell: the {quote} at character {at + 1} (in `{word}`) opens a quote that "
        f"is never closed. Put the text that holds it in {name} quotes ({other}{word}{other}), write \\{quote} for "
        f"the quote, {instead}."
    )


class NotFound(CallError):
    """A group, command or topic name that does not exist."""

    kind, exit_code = "not_found", 2


class UsageError(CallError):
    """Bad flags, missing or mistyped values: the argv does not fit the command."""

    kind, exit_code = "usage", 2


class HandlerError(CallError):
    """The command could not run or failed: it raised, could not start, or its server is unavailable."""

    kind = "handler"


class HandlerTimeout(CallError):
    """The command did not finish within its time limit."""

    kind = "timeout"


class ExitStatus(CallError):
    """A script exited with a non-zero status (`exit_code` holds it). Not raised: the result keeps the output."""

    kind = "exit"


class UpstreamError(CallError):
    """An upstream MCP tool answered with an error (its content is passed through). Not raised: the result keeps
    the content."""

    kind = "upstream"


ERRORS: tuple[type[CallError], ...] = (
    BadRequest,
    NotFound,
    UsageError,
    HandlerError,
    HandlerTimeout,
    ExitStatus,
    UpstreamError,
    CallError,
)
KINDS = {e.kind: e for e in ERRORS}  # each class's docstring says what its kind means


def exit_code(kind: str | None) -> int:
    """The exit status of `mcp-cli run` for a result's `error` kind (0 for none)."""
    return 0 if kind is None else next((e.exit_code for e in ERRORS if e.kind == kind), 1)


def close_to(word: str, candidates: Sequence[str]) -> list[str]:
    """The candidates closest to a mistyped word, ignoring case (at most three, closest first)."""
    import difflib

    folded = {c.lower(): c for c in reversed(candidates)}  # the first spelling of a name wins
    return [folded[c] for c in difflib.get_close_matches(word.lower(), list(folded), n=3, cutoff=0.6)]


def did_you_mean(names: Sequence[str]) -> str:
    """' Did you mean `x` or `y`?', or '' for no names."""
    return " Did you mean " + " or ".join(f"`{c}`" for c in names) + "?" if names else ""


class SourceError(Exception):
    """A source (tree file, module, skill folder, MCP config) could not be loaded; the message names it."""


class Unsafe(ValueError):
    """Settings a server will not listen with over HTTP (its guard, its scopes file); the message names the fix."""
