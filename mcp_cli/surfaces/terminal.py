"""The shell surface: one argv against a runtime for a caller with a terminal's three streams (`mcp-cli run`, in its
own process or in the keep-alive daemon, which is handed the caller's streams). The command's output goes to the
caller's stdout, what went wrong and the command's stderr to its stderr, and the answer is the exit status the call
should end with. A script reads the caller's stdin; on a terminal or into a file it writes the caller's stdout
itself, byte for byte and whole (a person watching, `> out.png`), while into a pipe or socket (an agent's shell
tool, which reads what it is given) its text is an answer fitted to the budget like any other, with the note and the
`--more` call for the next part (binary output is still written whole)."""

from __future__ import annotations

import base64
import os
import shlex
import shutil
import stat
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from ..engine.runtime import Runtime
from ..errors import exit_code
from ..handlers import CallScope
from ..result import Result
from .relay import Terminal

if TYPE_CHECKING:
    from ..tree import Tree


def runtime(tree: Tree) -> Runtime:
    """A runtime for shell callers: the next parts of a cut answer kept as files in the user's cache folder, so the
    `--more` call reads them in whichever process serves it (this one, the next, a daemon), and its notes give that
    call as a shell runs it: `mcp-cli run SOURCE -- --more ...` (an exported skill's script passes `--prog`)."""
    from ..engine.kept import Files
    from ..sources.discovery import cache_dir

    made = Runtime(tree)
    made.kept = Files(cache_dir() / "answers")
    if tree.origin is not None:
        made.prog = shlex.join([*mcp_cli(), "run", *tree.origin, "--"])
    return made


def mcp_cli() -> list[str]:
    """How a shell runs this mcp-cli: `mcp-cli` when that is the one on PATH, else its full path, else `python -m`."""
    folder = Path(sys.executable).parent
    script = next((p for p in (folder / "mcp-cli", folder / "mcp-cli.exe") if p.is_file()), None)
    if script is None:
        return [sys.executable, "-m", "mcp_cli"]
    found = shutil.which("mcp-cli")
    return ["mcp-cli"] if found and Path(found).resolve() == script.resolve() else [str(script)]


async def answer(runtime: Runtime, tokens: list[str], stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    """Run `tokens`, write what the caller sees, and return the exit status."""
    terminal = (stdin.fileno(), None if read_by_program(stdout) else stdout.fileno())
    relay = Terminal(stdin, stderr)  # an upstream's questions are asked there, its progress shown
    result = await runtime.call(tokens, CallScope(local_files=True, terminal=terminal, relay=relay))
    output, binary = result.output, _binary(result)
    if output and (result.exit_code is None or result.part) and not output.endswith("\n"):
        output += "\n"  # help and a note end their line; a script's output stays as it wrote it
    if binary is not None:
        stdout.flush()
        stdout.buffer.write(binary)
    else:
        stdout.write(output)
    stdout.flush()
    said = "\n\n".join(p.rstrip("\n") for p in (result.message, result.stderr) if p.strip())
    if said:  # what went wrong, and the command's stderr
        stderr.write(said + "\n")
        stderr.flush()
    if result.exit_code is not None:
        return result.exit_code if 0 <= result.exit_code < 256 else 1
    return 0 if result.ok else exit_code(result.error)


def read_by_program(stdout: TextIO) -> bool:
    """Whether `stdout` is a pipe or a socket: read by a program (an agent's shell tool), not a terminal or a file."""
    try:
        mode = os.fstat(stdout.fileno()).st_mode
    except (OSError, ValueError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def _binary(result: Result) -> bytes | None:
    """A script's binary output that was read (not written to the caller itself), as it was."""
    for item in result.content or []:
        if item.get("type") == "resource" and "blob" in item.get("resource", {}) and result.exit_code is not None:
            return base64.b64decode(item["resource"]["blob"])
    return None
