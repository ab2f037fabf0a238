"""The result envelope every surface returns, and what an answer costs in tokens."""

from __future__ import annotations

import base64
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
    `omitted` counts output a handler did not keep, so the budget note can say how much there was.
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
    part: dict[str, Any] | None = None  # an answer cut to its budget: what it shows, of how much, the next call
    value: Any = None  # the JSON value `output` was written from, when a pipeline's stage has it (not parsed again)

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
        for key in ("error", "message", "exit_code", "stderr", "data", "part"):
            value = getattr(self, key)
            if value not in (None, ""):
                out[key] = value
        return out

    def to_mcp(self, structured: bool = False) -> dict[str, Any]:
        """This result as a CallToolResult in wire form: passed-through content items (as received, after the
        message of a failure), or the text. With `structured`, the `structured()` object as structuredContent too;
        without, what a program needs besides the text (`ok`, `command`, `error`, `exit_code`, `data`) goes in
        `_meta` under META, which hosts do not show their model: hosts that get structuredContent show the model only
        it (Claude Code, VS Code), as escaped JSON, and drop the text and images. A plain dict: the SDK validates it
        once on the way out."""
        if self.content is not None:
            content = [{"type": "text", "text": self.message}] if self.message else []
            content += self.content
        else:
            content = [{"type": "text", "text": self.text()}]
        out: dict[str, Any] = {"resultType": "complete", "content": content, "isError": not self.ok}
        if structured:
            out["structuredContent"] = self.structured()
        else:
            out["_meta"] = {META: {k: v for k, v in self.structured().items() if k not in _IN_TEXT}}
        return out


META = "mcp-cli/result"  # the `_meta` key of a result sent without structuredContent (`Result.to_mcp`)
_IN_TEXT = ("output", "message", "stderr")  # what the text content carries already

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
        "part": {"type": "object", "description": "An answer cut to its token budget: `shown`, `of`, `next` call."},
    },
    "required": ["ok", "command", "output"],
}


KEEP = 8_000_000  # characters of one answer kept whole (its next parts come from it); a handler counts what it drops
CHARS_PER_TOKEN = 3  # about: o200k_base reads JSON and logs at about 3.3 characters a token, prose and code at about 4
# What o200k_base makes at least one token of, near enough: up to 5 letters, up to 3 digits, a character that is not
# ASCII, a punctuation mark, a line break, a space or two before a digit
_PIECE = re.compile(r"[A-Za-z]{1,5}|\d{1,3}|[^\x00-\x7f]|[^\w\s]|_|\n|[ \t](?=[ \t]?\d)")


def tokens(text: str) -> int:
    """The tokens `text` costs a model, estimated without a tokenizer: its pieces (`_PIECE`), at least a quarter of its
    characters. On JSON, TOON, logs, diffs, code and prose it is 1.0 to 1.4 times the o200k_base count (bench/tasks.py);
    it under-counts random strings (hex 0.96x, base64 0.6x)."""
    return max(len(text) // 4, len(_PIECE.findall(text)))


def fits(text: str, budget: int) -> bool:
    """Whether `text` is within `budget` tokens, estimated only when its length leaves it in doubt."""
    return len(text) <= budget or (len(text) <= 4 * budget and tokens(text) <= budget)


def wire_text(text: str) -> str:
    """`text` as JSON can carry it: lone surrogates (from undecodable bytes) become U+FFFD."""
    return text if text.isascii() else _SURROGATE.sub("\ufffd", text)


def has_surrogate(text: str) -> bool:
    """Whether `text` holds a lone surrogate, which JSON cannot carry."""
    return not text.isascii() and _SURROGATE.search(text) is not None


# Leading bytes of common binary formats and their MIME types (offset, bytes, type): what a command's output is
_MAGIC: list[tuple[int, bytes, str]] = [
    (0, b"\x89PNG\r\n\x1a\n", "image/png"),
    (0, b"\xff\xd8\xff", "image/jpeg"),
    (0, b"GIF8", "image/gif"),
    (8, b"WEBP", "image/webp"),
    (0, b"BM", "image/bmp"),
    (0, b"II*\x00", "image/tiff"),
    (0, b"MM\x00*", "image/tiff"),
    (0, b"\x00\x00\x01\x00", "image/vnd.microsoft.icon"),
    (0, b"%PDF-", "application/pdf"),
    (0, b"PK\x03\x04", "application/zip"),
    (0, b"\x1f\x8b", "application/gzip"),
    (0, b"BZh", "application/x-bzip2"),
    (0, b"\xfd7zXZ\x00", "application/x-xz"),
    (0, b"7z\xbc\xaf\x27\x1c", "application/x-7z-compressed"),
    (0, b"(\xb5/\xfd", "application/zstd"),
    (0, b"SQLite format 3\x00", "application/vnd.sqlite3"),
    (0, b"ID3", "audio/mpeg"),
    (8, b"WAVE", "audio/wav"),
    (0, b"OggS", "audio/ogg"),
    (0, b"fLaC", "audio/flac"),
    (4, b"ftyp", "video/mp4"),
    (0, b"\x1aE\xdf\xa3", "video/webm"),
    (0, b"\x00asm", "application/wasm"),
    (0, b"\x7fELF", "application/x-executable"),
    (0, b"PAR1", "application/vnd.apache.parquet"),
]


def sniff(data: bytes) -> str:
    """The MIME type of binary `data` from its leading bytes; application/octet-stream when none is known."""
    return next((mime for at, magic, mime in _MAGIC if data[at : at + len(magic)] == magic), "application/octet-stream")


def blob(data: bytes, uri: str) -> dict[str, Any]:
    """An MCP embedded resource content item carrying `data` (base64), with its sniffed MIME type."""
    encoded = base64.b64encode(data).decode("ascii")
    return {"type": "resource", "resource": {"uri": uri, "mimeType": sniff(data), "blob": encoded}}
