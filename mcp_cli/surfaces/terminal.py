"""The shell surface: one argv against a runtime for a caller with a terminal's three streams (`mcp-cli run`, in its
own process or in the keep-alive daemon, which is handed the caller's streams). The command's output goes to the
caller's stdout (a script's byte for byte: it writes there itself, and reads the caller's stdin), what went wrong and
the command's stderr to its stderr, and the answer is the exit status the call should end with."""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

from ..engine.runtime import Runtime
from ..errors import exit_code
from ..handlers.relay import CURRENT
from ..handlers.subprocess import IN_TERMINAL
from .relay import Terminal

if TYPE_CHECKING:
    from ..tree import Tree


def runtime(tree: Tree) -> Runtime:
    """A runtime for shell callers: the next parts of a cut answer kept as files in the user's cache folder, so the
    `--more` call reads them in whichever process serves it (this one, the next, a daemon)."""
    from ..engine.kept import Files
    from ..sources.discovery import cache_dir

    made = Runtime(tree)
    made.kept = Files(cache_dir() / "answers")
    return made


async def answer(runtime: Runtime, tokens: list[str], stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    """Run `tokens`, write what the caller sees, and return the exit status."""
    IN_TERMINAL.set((stdin.fileno(), stdout.fileno()))
    CURRENT.set(Terminal(stdin, stderr))  # an upstream's questions are asked there, its progress shown
    result = await runtime.call(tokens, local_files=True)
    output = result.output
    if output and result.exit_code is None and not output.endswith("\n"):
        output += "\n"  # help ends its line; a script's output stays as it wrote it
    stdout.write(output)
    stdout.flush()
    said = "\n\n".join(p.rstrip("\n") for p in (result.message, result.stderr) if p.strip())
    if said:  # what went wrong, and the command's stderr
        stderr.write(said + "\n")
        stderr.flush()
    if result.exit_code is not None:
        return result.exit_code if 0 <= result.exit_code < 256 else 1
    return 0 if result.ok else exit_code(result.error)
