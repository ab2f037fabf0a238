"""Which files of a skill folder mcp-cli may read, serve or copy: the one gate loading and building go through.

A skill is the regular files under its folder, each taken by its real path (symlinks resolved):

- a file or folder whose real path leaves the skill folder is refused (`references/x.md -> /etc/passwd`);
- only regular files are read: devices, named pipes (FIFOs) and sockets are refused and never opened;
- a symlinked folder is followed only when it stays inside and does not lead back to a folder it is in
  (`scripts/loop -> .` is refused, not walked 40 levels deep); a symlink to a symlink that loops is refused;
- a file over `MAX_FILE` (50 MiB) is refused; a document or script mcp-cli reads into the tree (SKILL.md,
  references, scripts, mcp-cli.yaml) over `MAX_TEXT` (4 MiB) is not read (it is still copied by a build);
- more than `MAX_FILES` (10,000) files or `MAX_TOTAL` (500 MiB) in all is an error: that is a data set or a
  virtual environment, not a skill;
- what a build never copies is not part of the skill: dot-files and dot-folders (`.git`), `__pycache__`, `*.pyc`,
  `node_modules`.

Every refusal is a warning naming the file and the reason (`references/x.md: refused, a symlink to /etc/passwd,
outside the skill folder`). A read checks again when it opens the file (its real path, its type, its size, the
same file the check saw) and never reads past its limit, so a file swapped for a device after the walk is not
read either.
"""

from __future__ import annotations

import codecs
import errno
import fnmatch
import os
import stat
from collections.abc import Callable
from pathlib import Path

from ...errors import SourceError
from ...result import has_surrogate, wire_text

MAX_FILE = 50 * 2**20  # one file of a skill, read or copied
MAX_TEXT = 4 * 2**20  # a document or script read into the tree
MAX_FILES = 10_000
MAX_TOTAL = 500 * 2**20
SKIPPED = (".*", "__pycache__", "*.pyc", "node_modules")  # never part of a skill (nor of a build's copy)

_FLAGS = os.O_RDONLY | sum(getattr(os, f, 0) for f in ("O_NONBLOCK", "O_NOFOLLOW", "O_CLOEXEC", "O_BINARY"))


class Refused(OSError):
    """A file of a skill that is not read. str(): `REL: refused, REASON` (or another verb, or none)."""

    def __init__(self, rel: str, reason: str, verb: str = "refused") -> None:
        super().__init__(f"{rel}: {verb}, {reason}" if verb else f"{rel}: {reason}")
        self.rel, self.reason, self.verb = rel, reason, verb


def note(warnings: list[str], message: str) -> None:
    """Add a warning once (the walk and a reader may both find the same file)."""
    if message not in warnings:
        warnings.append(message)


def is_skipped(name: str) -> bool:
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in SKIPPED)


def size_text(n: int) -> str:
    """`300 MiB`, `5.5 MiB`, `1,024 bytes`."""
    return f"{n / 2**20:.1f}".removesuffix(".0") + " MiB" if n >= 2**20 else f"{n:,} bytes"


def _relative(root: Path, path: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def _inside(real_root: str, real: str) -> bool:
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISFIFO, "a named pipe (FIFO)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "a special file"


def _check(real_root: str, path: Path, rel: str) -> tuple[str, os.stat_result]:
    """The real path and status of a folder or regular file inside the skill; Refused for anything else."""
    link = os.path.islink(path)
    real = os.path.realpath(path)
    if not _inside(real_root, real):
        if link:
            raise Refused(rel, f"a symlink to {real}, outside the skill folder")
        raise Refused(rel, f"its real path {real} is outside the skill folder")
    try:
        st = os.stat(path)
    except OSError as exc:
        if link and exc.errno == errno.ELOOP:
            raise Refused(rel, "a symlink that loops (its chain of links leads back to itself)") from None
        if link and exc.errno == errno.ENOENT:
            raise Refused(rel, f"a broken symlink (to {os.readlink(path)}, which does not exist)", "skipped") from None
        raise Refused(rel, f"cannot be read ({exc.strerror or exc})", "skipped") from None
    if stat.S_ISDIR(st.st_mode):
        return real, st
    if not stat.S_ISREG(st.st_mode):
        target = f"a symlink to {_relative(Path(real_root), Path(real))}, " if link else ""
        raise Refused(rel, f"{target}{_kind(st.st_mode)}; only regular files are read")
    if st.st_size > MAX_FILE:
        raise Refused(rel, f"{size_text(st.st_size)}, over the {size_text(MAX_FILE)} limit for a file in a skill")
    if not os.access(real, os.R_OK):
        raise Refused(rel, "not readable (permission denied)", "skipped")
    return real, st


TOO_MUCH = (
    "a skill folder holds a SKILL.md, scripts and documents. Move data sets, virtual environments and build "
    "output out of it."
)


def walk(root: Path, warnings: list[str]) -> list[Path]:
    """Every file of the skill folder `root` that may be read or copied, as `root / relative path`, in a stable
    order (each folder's entries sorted by name, a folder's files before the next entry). Refusals are warnings.
    Raises SourceError when the folder holds more than MAX_FILES files or MAX_TOTAL bytes."""
    root = Path(root)
    real_root = os.path.realpath(root)
    found: list[Path] = []
    total = 0
    folders = 0  # folders listed: links may reach one folder many times, each time counts

    def visit(folder: Path, walked: tuple[str, ...]) -> None:
        nonlocal total, folders
        folders += 1
        if folders > MAX_FILES:
            raise SourceError(f"{root}: more than {MAX_FILES:,} folders (at {_relative(root, folder)}); {TOO_MUCH}")
        try:
            with os.scandir(folder) as it:
                names = sorted(entry.name for entry in it)
        except OSError as exc:
            why = f"a folder that cannot be listed ({(exc.strerror or str(exc)).lower()})"
            note(warnings, str(Refused(_relative(root, folder), why, "skipped")))
            return
        for name in names:
            if is_skipped(name):
                continue
            path = folder / name
            rel = _relative(root, path)
            if has_surrogate(name):  # served names and built files must be text
                note(warnings, str(Refused(wire_text(rel), "a name that is not UTF-8", "skipped")))
                continue
            try:
                real, st = _check(real_root, path, rel)
            except Refused as exc:
                note(warnings, str(exc))
                continue
            if stat.S_ISDIR(st.st_mode):
                if any(real == w or w.startswith(real.rstrip(os.sep) + os.sep) for w in walked):
                    shown = _relative(Path(real_root), Path(real))
                    shown = "the skill folder itself" if shown == "." else shown
                    note(warnings, str(Refused(rel, f"a symlink to {shown}, a folder it is in (following it loops)")))
                    continue
                visit(path, (*walked, real))
                continue
            found.append(path)
            total += st.st_size
            if len(found) > MAX_FILES or total > MAX_TOTAL:
                over = f"more than {MAX_FILES:,} files" if len(found) > MAX_FILES else f"over {size_text(MAX_TOTAL)}"
                raise SourceError(f"{root}: {over} (at {rel}); {TOO_MUCH}")

    visit(root, (real_root,))
    return found


def _open(root: Path, path: Path, limit: int, what: str) -> tuple[bytes, os.stat_result]:
    rel = _relative(root, path)
    real, st = _check(os.path.realpath(root), path, rel)
    if stat.S_ISDIR(st.st_mode):
        raise Refused(rel, "a folder, not a file", "")
    if st.st_size > limit:
        raise Refused(rel, f"{size_text(st.st_size)}, over the {size_text(limit)} limit for {what}", "")
    try:
        fd = os.open(real, _FLAGS)
    except OSError as exc:
        raise Refused(rel, f"cannot be read ({exc.strerror or exc})", "") from None
    with os.fdopen(fd, "rb") as f:
        now = os.fstat(f.fileno())
        if not stat.S_ISREG(now.st_mode) or (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
            raise Refused(rel, "it changed while it was being read", "")
        data = f.read(limit + 1)
    if len(data) > limit:
        raise Refused(rel, f"over the {size_text(limit)} limit for {what}", "")
    return data, st


def read_bytes(root: Path, path: Path, limit: int = MAX_FILE, what: str = "a file in a skill") -> bytes:
    """The bytes of `path`, a file of the skill folder `root`, if the rules allow it; Refused otherwise."""
    return _open(Path(root), Path(path), limit, what)[0]


def decode(data: bytes, rel: str, warnings: list[str]) -> str:
    """Text from a file's bytes: UTF-8 (a BOM is dropped; UTF-16 with a BOM is read too). Bytes that are not
    UTF-8 are replaced, with a warning; a file with NUL bytes is binary and Refused."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data.decode("utf-16", errors="replace")
    if b"\0" in data:
        raise Refused(rel, "a binary file (it has NUL bytes), not text", "")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        note(
            warnings,
            f"{rel}: not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start}); "
            "bytes that are not UTF-8 read as U+FFFD. Save the file as UTF-8.",
        )
        return data.decode("utf-8-sig", errors="replace")


def read_text(root: Path, path: Path, warnings: list[str], what: str = "a document", limit: int = MAX_TEXT) -> str:
    """The text of `path`, a file of the skill folder `root` (see `decode`); Refused when it may not be read."""
    root, path = Path(root), Path(path)
    return decode(read_bytes(root, path, limit, what), _relative(root, path), warnings)


def copy(root: Path, dest: Path, exclude: Callable[[str], bool] = lambda rel: False) -> list[str]:
    """Copy every file of the skill folder `root` that may be copied (see `walk`) into `dest`, as regular files
    (a symlink inside the skill becomes a copy of its target), keeping modification times and the executable
    bit. `exclude(relative posix path)` leaves more out. Returns the warnings for what was refused."""
    root, dest = Path(root), Path(dest)
    warnings: list[str] = []
    for path in walk(root, warnings):
        rel = _relative(root, path)
        if exclude(rel):
            continue
        data, st = _open(root, path, MAX_FILE, "a file in a skill")
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        os.chmod(target, 0o755 if st.st_mode & 0o111 else 0o644)
        os.utime(target, ns=(st.st_mtime_ns, st.st_mtime_ns))
    return warnings
