"""`mcp-cli` commands, each in a process of its own forked from one that has imported mcp-cli once
(multiprocessing's forkserver): the real entry point of `python -m mcp_cli` (`mcp_cli.__main__.main`), with its own
argv, stdin (/dev/null), stdout, stderr and exit status, in the test session's environment and folder. Only Python's
start and mcp-cli's imports are shared: about 1.3 s of CPU a command, which a corpus of 45 skills, built and served,
paid 90 times (tests/test_malformed_skills.py). An uncaught exception prints its traceback on stderr and exits 1,
as it would from `python -m mcp_cli`.

Not for what starts differently: a command's imports (serving never imports typer) or its time to start are
tested with `python -m mcp_cli` itself. This module must not import tests/conftest.py (the forkserver imports it)."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

# Imported once, in the forkserver: every command's imports (`build`'s typer app and generators, `serve`'s server).
PRELOAD = [
    "tests.forked",
    "mcp_cli.__main__",
    "mcp_cli.cli.app",
    "mcp_cli.cli.serve",
    "mcp_cli.generators",
    "mcp_cli.sources.loader",
    "mcp_cli.surfaces.mcp_server",
]


def _main(argv: list[str], out: str, err: str, env: dict[str, str], cwd: str) -> None:
    """In the forked process (multiprocessing has already put /dev/null on its stdin): the environment `env`, the
    folder `cwd`, stdout and stderr to the files `out` and `err`, then `mcp-cli argv`. Its SystemExit is the
    process's exit status."""
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    for fd, path in ((1, out), (2, err)):
        opened = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(opened, fd)
        os.close(opened)
    sys.argv = ["mcp-cli", *argv]
    from mcp_cli.__main__ import main

    main()


def mcp_cli(
    *argv: str, timeout: float, env: Mapping[str, str] | None = None, cwd: str | os.PathLike[str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`mcp-cli argv` in a forked process, with stdin at /dev/null, the environment `env` (default: this
    process's) and the folder `cwd` (default: this process's): its exit status, stdout and stderr (text). A command
    still running after `timeout` seconds is killed and fails the test."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(PRELOAD)  # before the forkserver starts (the first command); then ignored
    with tempfile.TemporaryDirectory(prefix="mcp-cli-forked-") as tmp:
        out, err = Path(tmp, "out"), Path(tmp, "err")
        process = context.Process(
            target=_main,
            args=(list(argv), str(out), str(err), dict(os.environ if env is None else env), str(cwd or os.getcwd())),
        )
        process.start()
        process.join(timeout)
        if process.exitcode is None:
            process.kill()
            process.join()
            raise subprocess.TimeoutExpired(["mcp-cli", *argv], timeout, err.read_text(errors="replace"))
        return subprocess.CompletedProcess(["mcp-cli", *argv], process.exitcode, out.read_text(), err.read_text())
