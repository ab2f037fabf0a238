"""Errors a call can end in. Each carries what was wrong and the help that teaches the fix.

`KINDS` is the one list of the `error` values a result can carry; README's table follows it (a test checks).
"""

from __future__ import annotations

KINDS = {
    "bad_request": "the tool arguments are malformed: both or neither of argv and command, bad quoting, "
    "NUL characters or lone surrogates, a message the server cannot read",
    "not_found": "a group, command or topic name that does not exist",
    "usage": "bad flags, missing or mistyped values: the argv does not fit the command",
    "handler": "the command could not run or failed: it raised, could not start, or its server is unavailable",
    "timeout": "the command did not finish within its time limit",
    "exit": "a script exited with a non-zero status (`exit_code` holds it)",
    "upstream": "an upstream MCP tool answered with an error (its content is passed through)",
    "internal": "a bug in mcp-cli or a broken tree; the server keeps serving",
}


class CallError(Exception):
    """A call that cannot succeed. `kind` names the class of problem; `usage` is the help to show with it."""

    kind = "internal"

    def __init__(self, message: str, usage: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.usage = usage

    def render(self) -> str:
        return f"Error: {self.message}" + (f"\n\n{self.usage}" if self.usage else "")


class BadRequest(CallError):
    """The tool arguments themselves are malformed (both/neither of argv and command, bad quoting)."""

    kind = "bad_request"


class NotFound(CallError):
    """A group, command or topic name that does not exist."""

    kind = "not_found"


class UsageError(CallError):
    """Bad flags, missing or mistyped values: the argv does not fit the command."""

    kind = "usage"


class HandlerError(CallError):
    """The handler ran and failed (raised, crashed, exited non-zero, could not start)."""

    kind = "handler"


class HandlerTimeout(CallError):
    """The handler did not finish within its time limit."""

    kind = "timeout"


def did_you_mean(word: str, candidates: list[str]) -> str:
    """' Did you mean `x`?' for the closest candidates to a mistyped word, or ''."""
    import difflib

    close = difflib.get_close_matches(word, candidates, n=3, cutoff=0.6)
    if not close:
        return ""
    return " Did you mean " + " or ".join(f"`{c}`" for c in close) + "?"


class SourceError(Exception):
    """A source (tree file, module, skill folder, MCP config) could not be loaded; the message names it."""
