"""Subprocess commands: an argument list (never a shell), cwd, env, timeout; stdout, stderr and status captured.

Reference: `{"kind": "subprocess", "command": ["{python}", "x.py"], "cwd": ".", "env": {}, "timeout": 60}`.
The call's tokens (already parsed and validated) are appended verbatim. `{python}` is this interpreter and
`{base}` the tree's folder; `cwd` is relative to that folder, and without it the server's own.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import anyio
from anyio.abc import ByteReceiveStream

from ..errors import HandlerError, HandlerTimeout
from ..result import Result
from ..tree import Tree
from .base import Call, timeout_of

_STDERR_TAIL = 2_000


async def _drain(stream: ByteReceiveStream | None, keep: int, sink: list) -> None:
    """Read a stream to its end, keeping the first `keep` bytes; sink = [bytearray, total bytes seen]."""
    if stream is None:
        return
    async for chunk in stream:
        sink[1] += len(chunk)
        room = keep - len(sink[0])
        if room > 0:
            sink[0] += chunk[:room]


def _kill(proc: anyio.abc.Process) -> None:
    """Kill the process and everything it started (it leads its own session)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


class SubprocessHandler:
    def __init__(self, ref: dict, tree: Tree) -> None:
        command = ref.get("command")
        if not command or not isinstance(command, list):
            raise ValueError("subprocess handler reference needs a 'command' list")
        base = str(tree.base_dir or Path.cwd())
        self.command = [str(x).replace("{python}", sys.executable).replace("{base}", base) for x in command]
        self.cwd = str(Path(base, ref["cwd"])) if "cwd" in ref else None
        self.env = {**os.environ, **{k: str(v) for k, v in ref.get("env", {}).items()}}
        self.timeout = timeout_of(ref, tree)
        self.keep = tree.settings.max_output * 4 + 4

    async def run(self, call: Call) -> Result:
        argv = self.command + call.tokens
        out, err = [bytearray(), 0], [bytearray(), 0]
        try:
            proc = await anyio.open_process(
                argv, cwd=self.cwd, env=self.env, stdin=subprocess.DEVNULL, start_new_session=True
            )
        except OSError as exc:
            raise HandlerError(f"cannot start `{call.path}` ({argv[0]}): {exc.strerror or exc}") from None
        try:
            with anyio.move_on_after(self.timeout) as scope:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(_drain, proc.stdout, self.keep, out)
                    tg.start_soon(_drain, proc.stderr, _STDERR_TAIL * 8, err)
                await proc.wait()
        finally:
            if proc.returncode is None:
                _kill(proc)
                with anyio.CancelScope(shield=True):
                    await proc.wait()
            await proc.aclose()
        if scope.cancelled_caught:
            raise HandlerTimeout(
                f"`{call.path}` did not finish within {self.timeout:g} s and was stopped. "
                "Try a smaller input, or raise the timeout in the tree's settings."
            )
        stdout = out[0].decode("utf-8", errors="replace")
        stderr = err[0].decode("utf-8", errors="replace")[-_STDERR_TAIL:]
        code = proc.returncode
        result = Result(ok=code == 0, output=stdout, exit_code=code, stderr=stderr, omitted=out[1] - len(out[0]))
        if code != 0:
            signal_note = f" (killed by signal {-code})" if code < 0 else ""
            result.error, result.message = "exit", f"Error: `{call.path}` exited with status {code}{signal_note}."
        return result
