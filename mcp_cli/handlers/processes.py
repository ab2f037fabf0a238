"""Child processes (skill scripts, upstream servers) never outlive the server, and the server exits without
waiting for what it abandoned (`exit_process`).

Each child leads its own process group, so stopping it stops what it started. On Linux each child also gets
the parent-death signal (through util-linux `setpriv`, which sets it and execs the command), so even a server
killed with SIGKILL takes its children with it; elsewhere children see stdin close and are expected to exit.
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from typing import NoReturn


@functools.cache
def _setpriv() -> str | None:
    """util-linux `setpriv`, if it is there and knows --pdeathsig (2.33 and later)."""
    path = shutil.which("setpriv") if sys.platform.startswith("linux") else None
    if path is None:
        return None
    try:
        probe = subprocess.run([path, "--pdeathsig", "KILL", "--", "true"], capture_output=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    return path if probe.returncode == 0 else None


def guarded(argv: list[str]) -> list[str]:
    """`argv` so that the process it starts is killed when this process dies (where the OS allows).
    A command that cannot be found is left as it is, so that starting it fails with the usual error."""
    setpriv = _setpriv()
    if not setpriv or not argv or shutil.which(argv[0]) is None:
        return list(argv)
    return [setpriv, "--pdeathsig", "KILL", "--", *argv]


OWN_PREFIX = "MCP_CLI_"  # the server's own settings and token: never handed to a child
_withheld: set[str] = set()  # and the variables holding the tokens it checks (`withhold`)


def withhold(name: str) -> None:
    """Keep the variable `name` (a token the server checks: its own, a scope's) from every child it starts."""
    _withheld.add(name)


def handed(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment (or `environ`) as a child may have it: without the server's own variables
    (OWN_PREFIX) and the tokens it checks (`withhold`), which a client could otherwise read through any child
    that shows its environment."""
    return {
        k: v
        for k, v in (os.environ if environ is None else environ).items()
        if k not in _withheld and not k.startswith(OWN_PREFIX)
    }


def private() -> None:
    """Keep this process's memory and /proc entries (`/proc/PID/environ`, where its tokens are) from the other
    processes of its user, the servers and scripts it starts among them (Linux: not dumpable; a no-op elsewhere).
    Its children are dumpable again once they exec."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    try:
        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE, 0
    except (OSError, AttributeError):
        pass


_running: set[int] = set()  # process groups of running children started here


def started(pid: int) -> None:
    _running.add(pid)


def ended(pid: int) -> None:
    _running.discard(pid)


def kill_all() -> None:
    """Kill every running child's process group (on the way out, whatever the tasks that own them do)."""
    for pid in list(_running):
        kill_group(pid)
        _running.discard(pid)


def kill_group(pid: int, sig: int = signal.SIGKILL) -> None:
    """Kill a child that leads its own process group, and everything it started (`sig`: another signal)."""
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


_stopping: list[threading.Thread] = []  # threads still stopping servers (each stop bounded), joined on the way out
STOP_WAIT = 10.0  # seconds `exit_process` waits for them, at most


def stopping(thread: threading.Thread) -> None:
    """Have the process wait for `thread`, which stops child processes (exiting first would leave them running),
    at most STOP_WAIT seconds on the way out: in `exit_process`, or at a normal exit."""
    if not _stopping:
        atexit.register(join_stopping)
    _stopping.append(thread)


def join_stopping() -> None:
    """Wait for the threads still stopping children (STOP_WAIT seconds in all, at most)."""
    deadline = time.monotonic() + STOP_WAIT
    for thread in _stopping:
        thread.join(max(0.0, deadline - time.monotonic()))


def exit_process(code: int = 0) -> NoReturn:
    """Flush and exit without joining worker threads, which an abandoned (hung) handler may still occupy; threads
    still stopping children (`stopping`) get STOP_WAIT seconds in all."""
    join_stopping()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)
