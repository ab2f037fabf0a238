"""Where `jq` filters run: worker processes (`jq_worker.py`) that hold nothing of the server's.

A filter is a program the caller wrote, and libjq can read its process's environment (`env`, `$ENV`), and loop or
backtrack for as long as it likes. So no filter runs in the server: each runs in a worker process started with no
environment, in the filesystem's root, its stderr discarded, under a memory limit, and is given its input and
nothing else. A filter that outlives its time limit has its worker killed (the call answers `timeout`); a worker that
dies is replaced; the server's event loop only waits. Idle workers are kept for the next filter (IDLE at most); at
most AT_ONCE filters run at a time, the others wait their turn within their own time limit.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from contextlib import suppress
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
from anyio.abc import Process

from ..errors import HandlerError, HandlerTimeout
from ..handlers.processes import ended, guarded, kill_group, started
from . import jq_worker

WORKER = Path(jq_worker.__file__)  # imported (never run here) so that a built package's runtime carries it
IDLE = 2  # workers kept waiting for the next filter
AT_ONCE = 8  # filters running at a time, server-wide


class JqError(Exception):
    """What jq said of a filter and its input (a runtime error, the input not JSON)."""


class _Worker:
    def __init__(self, process: Process) -> None:
        self.process = process
        self.answered = False  # its last request was answered whole

    async def run(self, source: str, text: str) -> list[Any]:
        """The outputs of `source` over `text`; JqError for what jq refuses; HandlerError when the worker died."""
        data = text.encode("utf-8", "surrogatepass")
        self.answered = False
        stdin, stdout = self.process.stdin, self.process.stdout
        assert stdin is not None and stdout is not None
        await stdin.send(json.dumps({"filter": source, "size": len(data)}).encode() + b"\n" + data)
        buffer = bytearray()
        while b"\n" not in buffer:
            buffer += await stdout.receive()
        line, _, rest = bytes(buffer).partition(b"\n")
        header = json.loads(line)
        if "error" in header:
            self.answered = True
            raise JqError(header["error"])
        body, size = bytearray(rest), header["size"]
        while len(body) < size:
            body += await stdout.receive()
        self.answered = True
        return _outputs(bytes(body))

    def kill(self) -> None:
        kill_group(self.process.pid)
        ended(self.process.pid)


def _outputs(body: bytes) -> list[Any]:
    """The worker's JSON array of outputs (JqError for one nested deeper than Python reads)."""
    try:
        return list(json.loads(body))
    except RecursionError:
        raise JqError("its output nests too deeply to be read; take a part of it (.a.b)") from None


class JqPool:
    """The server's jq workers (one pool a process: `POOL`)."""

    def __init__(self) -> None:
        self._idle: list[_Worker] = []
        self._limiter = anyio.CapacityLimiter(AT_ONCE)
        self._loop: object = None  # the event loop its workers' pipes and its limiter belong to

    async def _start(self) -> _Worker:
        path = os.pathsep.join(p for p in sys.path if p)  # the one variable it gets: where `jq` is installed
        process = await anyio.open_process(
            guarded([sys.executable, str(WORKER)]),
            env={"PYTHONPATH": path},
            cwd=os.path.abspath(os.sep),
            stderr=subprocess.DEVNULL,  # jq's `debug` and `stderr` write nowhere
            start_new_session=True,
        )
        started(process.pid)
        return _Worker(process)

    async def run(self, source: str, text: str, timeout: float, what: str) -> list[Any]:
        """The outputs of the jq filter `source` over `text`, within `timeout` seconds (HandlerTimeout naming
        `what` after that); JqError for what jq refuses."""
        loop = anyio.lowlevel.current_token()
        if loop != self._loop:  # a new event loop (tests run several): the old one's workers cannot be used
            self.close()
            self._limiter, self._loop = anyio.CapacityLimiter(AT_ONCE), loop
        worker: _Worker | None = None
        try:
            with anyio.fail_after(timeout):
                async with self._limiter:
                    worker = self._idle.pop() if self._idle else await self._start()
                    return await worker.run(source, text)
        except TimeoutError:
            raise HandlerTimeout(
                f"`{what}` did not finish within {timeout:g} s and was stopped. Give it a smaller "
                "input (| head N before it), or a filter that ends sooner."
            ) from None
        except (OSError, anyio.EndOfStream, anyio.BrokenResourceError, ValueError, KeyError) as exc:
            raise HandlerError(
                f"`{what}` stopped: its worker process ended ({type(exc).__name__}); it may have run "
                "out of memory. Give it a smaller input."
            ) from None
        finally:
            if worker is not None:  # one that answered takes the next filter; one cut off mid-way is stopped
                self._keep(worker) if worker.answered else worker.kill()

    def _keep(self, worker: _Worker) -> None:
        if len(self._idle) < IDLE and worker.process.returncode is None:
            self._idle.append(worker)
        else:
            worker.kill()

    def close(self) -> None:
        """Stop the idle workers (from any event loop: their pipes are left to the collector)."""
        for worker in self._idle:
            with suppress(Exception):
                worker.kill()
        self._idle.clear()

    async def aclose(self) -> None:
        """Stop the idle workers and close their pipes (in the event loop that started them)."""
        idle, self._idle = self._idle, []
        for worker in idle:
            worker.kill()
            with suppress(Exception):
                await worker.process.aclose()


POOL = JqPool()
