"""The result envelope every surface returns, and the output cap."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .errors import KINDS

_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass
class Result:
    """What a call produced.

    `output` is the command's output (or help text); on failure `error` names the kind of problem and
    `message` teaches the fix. `content` holds MCP content items passed through unchanged (upstream tools).
    `omitted` counts output a handler already dropped, so the cap note can say how much there was.
    """

    ok: bool
    output: str = ""
    path: str = ""
    error: str | None = None
    message: str = ""
    exit_code: int | None = None
    stderr: str = ""
    content: list[dict[str, Any]] | None = None
    data: Any = None
    omitted: int = 0

    def text(self) -> str:
        """The text an agent reads: output on success; the message, then stderr and output on failure."""
        parts = [self.message] if self.message else []
        if self.ok:
            parts = [self.output]
            if self.stderr.strip():
                parts.append(f"[stderr]\n{self.stderr.rstrip()}")
        else:
            if self.stderr.strip():
                parts.append(f"[stderr]\n{self.stderr.rstrip()}")
            if self.output.strip():
                parts.append(f"[stdout]\n{self.output.rstrip()}" if self.exit_code is not None else self.output)
        return "\n\n".join(p.rstrip("\n") for p in parts if p) + "\n"

    def structured(self) -> dict[str, Any]:
        """The structuredContent object: `ok`, the command path, the output, and what else applies."""
        out: dict[str, Any] = {"ok": self.ok, "command": self.path, "output": self.output}
        for key in ("error", "message", "exit_code", "stderr", "data"):
            value = getattr(self, key)
            if value not in (None, ""):
                out[key] = value
        return out


SCHEMA: dict[str, Any] = {  # what `Result.structured()` gives, as JSON Schema
    "type": "object",
    "properties": {
        "ok": {"type": "boolean", "description": "Whether the command succeeded."},
        "command": {"type": "string", "description": "The command path run."},
        "output": {"type": "string", "description": "The command's output, or the help text."},
        "error": {"enum": list(KINDS), "description": "On failure, the kind of failure."},
        "message": {"type": "string", "description": "On failure, what was wrong and how to fix it."},
        "exit_code": {"type": "integer", "description": "A script's exit status."},
        "stderr": {"type": "string", "description": "A script's standard error."},
        "data": {"description": "A Python handler's JSON value, or an upstream tool's structured content."},
    },
    "required": ["ok", "command", "output"],
}


def cap(text: str, limit: int, total: int | None = None) -> str:
    """Cut `text` to `limit` characters, with a note of how much was cut. `total` is the real size if known."""
    total = len(text) if total is None else total
    if total <= limit:
        return text
    cut = text[:limit]
    return (
        f"{cut}\n[output cut: showed {len(cut):,} of {total:,} characters, {total - len(cut):,} not shown. "
        "Ask for less (a narrower range or filter) or write the output to a file and read it in parts.]\n"
    )


def wire_text(text: str) -> str:
    """`text` as JSON can carry it: lone surrogates (from undecodable bytes) become U+FFFD."""
    return text if text.isascii() else _SURROGATE.sub("\ufffd", text)


def has_surrogate(text: str) -> bool:
    """Whether `text` holds a lone surrogate, which JSON cannot carry."""
    return not text.isascii() and _SURROGATE.search(text) is not None
