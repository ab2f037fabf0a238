"""Subprocess commands: an argument list (never a shell), cwd, env, timeout; stdout, stderr and status captured.

Reference: `{"kind": "subprocess", "command": ["{python}", "x.py"], "cwd": ".", "env": {}, "inherit": [],
"timeout": 60}`. The call's tokens (already parsed and validated) are appended verbatim. `{python}` is this
interpreter and `{base}` the tree's folder, in `command` and `env` values. `cwd` is relative to that folder;
without it the command runs where the caller works (an MCP client's first root, else the server's own working
directory). The environment is the safe part of the server's (SAFE_ENV: no credentials), the variables `inherit`
names, then `env`; a `PYTHONPATH` in `env` goes before the inherited one. A Python script that fails because a
module is missing is told in one line, naming the tree's `requirements.txt` when there is one.
"""

from __future__ import annotations

import fnmatch
import os
import re
import subprocess
import sys
from pathlib import Path

import anyio
from anyio.abc import ByteReceiveStream

from ..children import ended, guarded, kill_group, started
from ..errors import HandlerError, HandlerTimeout
from ..result import Result
from ..tree import Tree
from .base import Call, timeout_of

_STDERR_TAIL = 2_000


async def _drain(stream: ByteReceiveStream | None, keep: int, sink: list, tail: bool = False) -> None:
    """Read a stream to its end, keeping its first `keep` bytes (its last, with `tail`);
    sink = [bytearray, total bytes seen]."""
    if stream is None:
        return
    async for chunk in stream:
        sink[1] += len(chunk)
        if tail:
            sink[0] = (sink[0] + chunk)[-keep:]
        elif (room := keep - len(sink[0])) > 0:
            sink[0] += chunk[:room]


_MISSING_MODULE = re.compile(r"^ModuleNotFoundError: No module named '([^']+)'", re.MULTILINE)


# What a command inherits from the server's environment unless its reference names more (`inherit`): enough to
# find programs, write temporary files and speak the user's language; no credentials.
SAFE_ENV = ("PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "LC_*", "TZ", "TERM", "TMPDIR", "TEMP",
            "TMP", "XDG_*", "PYTHONPATH", "VIRTUAL_ENV", "SYSTEMROOT", "COMSPEC", "PATHEXT", "HTTP_PROXY",
            "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy", "SSL_CERT_FILE", "SSL_CERT_DIR",
            "REQUESTS_CA_BUNDLE")  # fmt: skip


def _environment(ref: dict, base: str) -> dict[str, str]:
    """The safe part of this process's environment and the variables `inherit` names (patterns allowed), with the
    reference's `env` on top; a PYTHONPATH there goes before the inherited one."""
    patterns = [*SAFE_ENV, *ref.get("inherit", [])]
    inherited = {k: v for k, v in os.environ.items() if any(fnmatch.fnmatchcase(k, p) for p in patterns)}
    own = {k: str(v).replace("{python}", sys.executable).replace("{base}", base) for k, v in ref.get("env", {}).items()}
    if "PYTHONPATH" in own and inherited.get("PYTHONPATH"):
        own["PYTHONPATH"] += os.pathsep + inherited["PYTHONPATH"]
    return {**inherited, **own}


class SubprocessHandler:
    def __init__(self, ref: dict, tree: Tree) -> None:
        command = ref.get("command")
        if not command or not isinstance(command, list):
            raise ValueError("subprocess handler reference needs a 'command' list")
        base = str(tree.base_dir or Path.cwd())
        self.command = [str(x).replace("{python}", sys.executable).replace("{base}", base) for x in command]
        self.launch = guarded(self.command)
        self.cwd = str(Path(base, ref["cwd"])) if "cwd" in ref else None
        self.env = _environment(ref, base)
        requirements = Path(base, "requirements.txt")
        self.requirements = requirements if tree.base_dir and requirements.is_file() else None
        self.timeout = timeout_of(ref, tree)
        self.keep = tree.settings.max_output * 4 + 4

    async def run(self, call: Call) -> Result:
        argv = self.launch + call.tokens
        out, err = [bytearray(), 0], [bytearray(), 0]
        try:
            proc = await anyio.open_process(
                argv,
                cwd=self.cwd or call.cwd,
                env=self.env,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError as exc:
            raise HandlerError(f"cannot start `{call.path}` ({self.command[0]}): {exc.strerror or exc}") from None
        started(proc.pid)
        try:
            with anyio.move_on_after(self.timeout) as scope:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(_drain, proc.stdout, self.keep, out)
                    tg.start_soon(_drain, proc.stderr, _STDERR_TAIL * 4, err, True)
                await proc.wait()
        finally:
            ended(proc.pid)
            if proc.returncode is None or scope.cancelled_caught:  # and what it left running in the background
                kill_group(proc.pid)
                with anyio.CancelScope(shield=True):
                    await proc.wait()
            await proc.aclose()
        if scope.cancelled_caught:
            raise HandlerTimeout(
                f"`{call.path}` did not finish within {self.timeout:g} s and was stopped. "
                "Try a smaller input, or raise the timeout in the tree's settings."
            )
        stdout = out[0].decode("utf-8", errors="replace")
        stderr = err[0].decode("utf-8", errors="replace")
        if err[1] > _STDERR_TAIL:
            stderr = (
                f"[stderr cut: its last {_STDERR_TAIL:,} characters of {err[1]:,} bytes]\n" + stderr[-_STDERR_TAIL:]
            )
        code = proc.returncode
        result = Result(ok=code == 0, output=stdout, exit_code=code, stderr=stderr, omitted=out[1] - len(out[0]))
        if code != 0:
            signal_note = f" (killed by signal {-code})" if code < 0 else ""
            result.error, result.message = "exit", f"Error: `{call.path}` exited with status {code}{signal_note}."
            missing = _MISSING_MODULE.search(stderr)
            if missing:
                result.stderr, result.message = "", self._missing(call.path, missing.group(1))
        return result

    def _missing(self, path: str, module: str) -> str:
        """One line for a script that cannot import a module: what is missing and how to install it."""
        fix = (
            f"install the skill's requirements: pip install -r {self.requirements}"
            if self.requirements
            else f"install the package that provides `{module}`"
        )
        return f"Error: `{path}` needs the Python module `{module}`, which is not installed; {fix}"
