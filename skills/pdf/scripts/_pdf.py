"""Shared helpers of the pdf scripts: opening PDFs with clear errors, page ranges, one-line failures.

Not an entry point: the scripts import it (it sits next to them, so `import _pdf` works when they run).
"""

from __future__ import annotations

import difflib
import sys
from pathlib import Path
from typing import Any, NoReturn


def fail(cause: str, fix: str = "") -> NoReturn:
    """Print `error: <cause>. <what to do>` on one line to stderr and exit 1."""
    message = " ".join(f"error: {cause.rstrip('.')}. {fix}".split())
    print(message.strip(), file=sys.stderr)
    sys.exit(1)


def existing(path: str) -> Path:
    p = Path(path)
    if not p.exists():
        fail(f"{path} does not exist", f"Check the path; relative paths start from {Path.cwd()}.")
    if p.is_dir():
        fail(f"{path} is a folder, not a PDF file", "Give the path of a .pdf file.")
    with p.open("rb") as f:
        if b"%PDF" not in f.read(1024):
            fail(f"{path} is not a PDF (no %PDF header)", "Give a PDF file.")
    return p


def reader(path: str, password: str | None = None) -> Any:
    """A pypdf PdfReader, decrypted when needed, or a one-line error."""
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    p = existing(path)
    try:
        doc = PdfReader(str(p))
    except (PdfReadError, ValueError, OSError) as exc:
        fail(f"{path} cannot be read as a PDF ({exc})", "The file may be damaged; try re-saving it.")
    if doc.is_encrypted:
        if password is None:
            fail(f"{path} is encrypted", "Give its password with --password.")
        try:
            if not doc.decrypt(password):
                fail(f"wrong password for {path}", "Check the password given with --password.")
        except Exception as exc:  # pypdf raises several kinds for unsupported encryption
            fail(f"{path} cannot be decrypted ({exc})", "Check the password.")
    return doc


def plumber(path: str, password: str | None = None) -> Any:
    """A pdfplumber document, or a one-line error (encrypted files need --password)."""
    import pdfplumber

    doc = reader(path, password)  # the same checks and messages as pypdf
    del doc
    try:
        return pdfplumber.open(str(path), password=password or "")
    except Exception as exc:
        fail(f"{path} cannot be opened ({exc})", "Check the file and its password.")


def pages(spec: str | None, count: int) -> list[int]:
    """1-based page numbers from `1,3-5` (all pages when None), each checked against the page count."""
    if not spec or spec.strip().lower() == "all":
        return list(range(1, count + 1))
    out: list[int] = []
    for part in spec.split(","):
        part = part.strip()
        try:
            if "-" in part:
                first, last = (int(x) for x in part.split("-", 1))
            else:
                first = last = int(part)
        except ValueError:
            fail(f"bad page range {spec!r}", "Use page numbers and ranges like 1,3-5.")
        if first < 1 or last < first:
            fail(f"bad page range {part!r} in {spec!r}", "Pages count from 1 and ranges go upwards, like 2-4.")
        if last > count:
            fail(f"page {last} is past the end; the document has {count} pages", f"Use pages 1-{count}.")
        out.extend(range(first, last + 1))
    return out


def output(path: str, inputs: list[str] = ()) -> Path:
    """A file to write: its folder is created, and it may not be one of the inputs."""
    p = Path(path)
    if any(p.resolve() == Path(i).resolve() for i in inputs):
        fail(f"--out {path} is also an input", "Write to a new file.")
    p.parent.mkdir(parents=True, exist_ok=True)
    return p


def folder(path: str) -> Path:
    p = Path(path)
    if p.exists() and not p.is_dir():
        fail(f"{path} exists and is not a folder", "Give a folder for --out-dir.")
    p.mkdir(parents=True, exist_ok=True)
    return p


def closest(name: str, names: list[str]) -> str:
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.5)
    return f"Did you mean {', '.join(close)}?" if close else f"Known: {', '.join(names[:12])}."


def deliver(body: str, out: str | None, inputs: list[str], summary: str) -> None:
    """Print `body`, or with --out write it to that file and print only `wrote PATH: summary`."""
    if not out:
        print(body)
        return
    target = output(out, inputs)
    target.write_text(body + "\n", encoding="utf-8")
    print(f"wrote {target}: {summary}")
