"""The keep-alive daemon behind `mcp-cli run`: one source's tree and its upstream sessions, kept between calls.

Each connection carries one request line (JSON), checked: a malformed one (not an object, wrong types, an unknown
encoding, over 1 MiB) is answered `{"error": ...}`, logged, and the daemon serves on. `run` comes with the caller's
stdin, stdout and stderr (SCM_RIGHTS); it is answered `{"accepted": true}` before anything is done with it (so the
caller runs it itself only when it was not accepted: at most once), runs through the same code as an in-process `run`
(`terminal.answer`) and is answered `{"status": N}` once the call has written its output; a caller that hangs up
cancels its call, never the session it used. `status` and `stop` are answered with what runs. The tree is loaded on
the first call, in that call's streams; what loading wrote to stderr (its warnings) is written again on each later
call, as a fresh process would. It is loaded again when the source's content changed or a call asks for --refresh
(calls under way finish on the old one), and read again, its sessions kept, while some of its servers are
unavailable or when an OAuth login of its servers changed. With no call for the idle timeout, on `stop` or on
SIGTERM, the daemon stops its servers, removes its socket and exits; killed outright, its servers get the
parent-death signal (handlers.processes). Only its own user may connect (SO_PEERCRED).
"""

from __future__ import annotations

import codecs
import io
import json
import logging
import math
import os
import signal
import socket
import struct
import sys
import time
import traceback
from collections.abc import Callable
from contextlib import suppress
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NoReturn, TextIO, cast

import anyio
from anyio.abc import SocketAttribute, SocketListener, SocketStream, TaskGroup, TaskStatus, UNIXSocketStream

from ..engine.runtime import Runtime
from ..handlers.processes import exit_process, join_stopping, kill_all
from ..handlers.upstream import Upstreams
from . import terminal

if TYPE_CHECKING:
    from ..tree import Tree

log = logging.getLogger("mcp_cli")
# The current call's (stdout, stderr): where this process's sys.stdout and sys.stderr (so its log lines) write.
STREAMS: ContextVar[tuple[TextIO, TextIO] | None] = ContextVar("mcp_cli_daemon_streams", default=None)
_REQUEST = 1 << 20  # bytes of a request line, at most


class _CallStream(io.TextIOBase):
    """sys.stdout or sys.stderr in the daemon: the current call's stream, else (or once it is closed) its own."""

    def __init__(self, index: int, own: TextIO) -> None:
        self._index, self._own = index, own

    def _target(self) -> TextIO:
        streams = STREAMS.get()
        return streams[self._index] if streams and not streams[self._index].closed else self._own

    def write(self, text: str) -> int:
        try:
            return self._target().write(text)
        except (OSError, ValueError):
            return self._own.write(text)

    def flush(self) -> None:
        with suppress(OSError, ValueError):
            self._target().flush()

    def isatty(self) -> bool:
        with suppress(OSError, ValueError):
            return self._target().isatty()
        return False

    def fileno(self) -> int:
        return self._target().fileno()


class _Tee(io.TextIOBase):
    """A call's stderr while it loads the tree, kept to be written again on later calls."""

    def __init__(self, stream: TextIO) -> None:
        self.stream, self.kept = stream, io.StringIO()

    def write(self, text: str) -> int:
        self.kept.write(text)
        return self.stream.write(text)

    def flush(self) -> None:
        self.stream.flush()

    def isatty(self) -> bool:
        return self.stream.isatty()

    def fileno(self) -> int:
        return self.stream.fileno()


@dataclass
class _Loaded:
    """A loaded tree, served by its runtime until retired and unused."""

    runtime: Runtime
    digest: str  # the source's content it was loaded from
    logins: dict[str, object]  # its servers' stored OAuth logins then
    unavailable: bool  # some of its servers could not list their tools
    preamble: str  # what loading it wrote on stderr
    users: int = 0
    retire: anyio.Event = field(default_factory=anyio.Event)
    closed: anyio.Event = field(default_factory=anyio.Event)


class Daemon:
    def __init__(
        self,
        describe: dict[str, Any],
        load: Callable[[bool, float | None, Upstreams], Tree],
        digest: Callable[[], str],
        logins: Callable[[], dict[str, object]],
        idle: float,
    ) -> None:
        self.describe, self._load, self._digest, self._logins, self.idle = describe, load, digest, logins, idle
        self._loaded: _Loaded | None = None  # the tree calls get
        self._held: list[_Loaded] = []  # it, and those retired but still closing
        self._lock = anyio.Lock()
        self._tg: TaskGroup | None = None
        self._done = anyio.Event()
        self.calls = self.served = 0
        self.last = time.monotonic()

    async def main(self, listener: SocketListener) -> None:
        async with anyio.create_task_group() as tg:
            self._tg = tg
            tg.start_soon(self._idle)
            tg.start_soon(self._signals)
            tg.start_soon(listener.serve, self._connection, tg)
            await self._done.wait()
            with suppress(OSError):
                os.unlink(self.describe["socket"])  # no new caller finds this daemon
            tg.cancel_scope.cancel()

    async def _close(self) -> None:
        """Stop the servers of every tree loaded (calls under way finish first)."""
        for loaded in self._held:
            loaded.retire.set()
        for loaded in list(self._held):
            await loaded.closed.wait()

    async def stop(self) -> None:
        await self._close()
        self._done.set()

    async def _idle(self) -> None:
        while True:
            await anyio.sleep(min(1.0, max(0.05, self.idle / 4)))
            if not self.calls and time.monotonic() - self.last >= self.idle:
                await self.stop()

    async def _signals(self) -> None:
        with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT, signal.SIGHUP) as signals:
            async for _ in signals:
                await self.stop()

    async def _connection(self, conn: SocketStream) -> None:
        fds: list[int] = []
        try:
            async with conn:
                if not _same_user(conn.extra(SocketAttribute.raw_socket)):
                    return  # another user's: the socket's mode keeps them out, and so does this
                assert isinstance(conn, UNIXSocketStream)
                data, fds = await conn.receive_fds(65536, 3)
                while data and not data.endswith(b"\n") and len(data) < _REQUEST:
                    data += await conn.receive()
                try:
                    request = _request(data, len(fds))
                except ValueError as exc:  # said to the log and the caller, who runs the call itself if it can
                    log.warning("refused a request: %s", exc)
                    with suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                        await conn.send(_line({"error": str(exc)}))
                    return
                if isinstance(request, _Run):
                    fds, given = [], fds
                    await self._run(conn, request, given)
                elif request["op"] == "status":
                    await conn.send(_line(self.status()))
                else:  # stop
                    mine = request.get("source") in (None, self.describe["source"])
                    said = self.status()
                    if mine:
                        await self._close()
                        os.dup(conn.extra(SocketAttribute.raw_socket).fileno())  # kept: the caller's EOF is our exit
                    await conn.send(_line({**said, "stopped": mine}))
                    if mine:
                        self._done.set()
        except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
            log.info("a connection ended early: %s", exc or type(exc).__name__)
        except Exception:  # never the daemon's end: other calls go on
            log.exception("a connection failed")
        finally:
            for fd in fds:
                os.close(fd)

    def status(self) -> dict[str, Any]:
        loaded = self._loaded
        return {
            **self.describe,
            "pid": os.getpid(),
            "idle": round(time.monotonic() - self.last, 1) if not self.calls else 0.0,
            "idle_timeout": self.idle,
            "calls": self.served,
            "running": self.calls,
            "servers": sorted(loaded.runtime.tree.upstreams) if loaded else [],
            "processes": _descendants(os.getpid()),
            "memory": _rss(os.getpid()),
        }

    async def _run(self, conn: SocketStream, request: _Run, fds: list[int]) -> None:
        (ienc, ierr), (oenc, oerr), (eenc, eerr) = request.streams
        stdin = open(fds[0], encoding=ienc, errors=ierr)  # closed once the call is answered
        stdout = open(fds[1], "w", encoding=oenc, errors=oerr)
        stderr = open(fds[2], "w", encoding=eenc, errors=eerr)
        self.calls += 1
        self.idle = request.idle or self.idle
        STREAMS.set((stdout, stderr))
        status: int | None = None
        try:
            await conn.send(_line({"accepted": True}))  # from now on the caller never runs this call itself
            async with anyio.create_task_group() as tg:

                async def hangup() -> None:  # the caller gone (Ctrl-C, killed): its call is cancelled
                    with suppress(anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                        while True:
                            await conn.receive()
                    tg.cancel_scope.cancel()

                tg.start_soon(hangup)
                status = await self._call(request, stdin, stdout, stderr)
                tg.cancel_scope.cancel()
        finally:
            self.calls -= 1
            self.served += 1
            self.last = time.monotonic()
            for stream in (stdin, stdout, stderr):
                with suppress(OSError, ValueError):
                    stream.close()
        if status is not None:
            with suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                await conn.send(_line({"status": status}))

    async def _call(self, request: _Run, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
        try:
            got = await self._current(request, stdout, stderr)
            if isinstance(got, int):
                return got
            loaded, fresh = got
            if not fresh and loaded.preamble:
                stderr.write(loaded.preamble)
                stderr.flush()  # before what the command writes itself
            loaded.users += 1
            try:
                return await terminal.answer(loaded.runtime, request.argv, stdin, stdout, stderr)
            finally:
                loaded.users -= 1
        except Exception:  # what an in-process run would show
            stderr.write(traceback.format_exc())
            return 1

    async def _current(self, request: _Run, stdout: TextIO, stderr: TextIO) -> tuple[_Loaded, bool] | int:
        """The loaded tree (and whether this call loaded it, its warnings written), or the exit status of a source
        that does not load. It is loaded again when its source changed (or the call asks: --refresh), and then its
        servers restart. When a login of its servers changed (`mcp-cli login`, `logout`) or some are unavailable,
        it is read again as a fresh process would, keeping the sessions of the servers whose login did not change."""
        async with self._lock:
            digest = await anyio.to_thread.run_sync(self._digest)
            logins = await anyio.to_thread.run_sync(self._logins)
            loaded = self._loaded
            if loaded is not None and (request.refresh or loaded.digest != digest):
                loaded.retire.set()
                loaded = self._loaded = None
            if loaded is not None and loaded.logins == logins and not loaded.unavailable:
                return loaded, False
            tee = _Tee(stderr)
            assert self._tg is not None
            # the sessions its servers were listed through are the ones its calls use (kept ones, if it is kept,
            # but those of the servers whose login changed: ended first, they are listed and called anew)
            kept = loaded.runtime.tree.sessions if loaded is not None else None
            pool = kept if isinstance(kept, Upstreams) else Upstreams(tg=self._tg)
            changed: set[str] = set()
            if loaded is not None:
                changed = {n for n in logins.keys() | loaded.logins.keys() if logins.get(n) != loaded.logins.get(n)}
                await loaded.runtime.restart(changed)

            def load() -> Tree | int:
                STREAMS.set((stdout, cast(TextIO, tee)))
                try:
                    return self._load(request.refresh, request.startup, pool)
                except SystemExit as exc:  # a broken source, said on stderr
                    return exc.code if isinstance(exc.code, int) else 1

            tree = await anyio.to_thread.run_sync(load)
            await anyio.to_thread.run_sync(join_stopping)  # servers that missed their start-up budget: stopped
            if isinstance(tree, int):
                if pool is not kept:
                    await pool.close()
                return tree
            if loaded is not None and loaded.runtime.tree.upstreams:  # its servers' sessions are kept
                loaded.runtime.adopt(tree)
                loaded.preamble, loaded.logins, loaded.unavailable = tee.kept.getvalue(), logins, _unavailable(tree)
                return loaded, True
            if loaded is not None:  # no server of it runs: nothing to keep
                loaded.retire.set()
            self._loaded = await self._tg.start(self._hold, tree, digest, logins, tee.kept.getvalue())
            return self._loaded, True

    async def _hold(
        self, tree: Tree, digest: str, logins: dict[str, object], preamble: str, *, task_status: TaskStatus[_Loaded]
    ) -> None:
        STREAMS.set(None)  # what the runtime starts in the background writes to no one call
        loaded = _Loaded(terminal.runtime(tree), digest, logins, _unavailable(tree), preamble)
        self._held.append(loaded)
        try:
            async with loaded.runtime:
                task_status.started(loaded)
                await loaded.retire.wait()
                while loaded.users:
                    await anyio.sleep(0.05)
        finally:
            self._held.remove(loaded)
            loaded.closed.set()


@dataclass
class _Run:
    """A `run` request, checked (`_request`)."""

    argv: list[str]
    streams: list[tuple[str | None, str | None]]  # the encoding and errors of the caller's stdin, stdout, stderr
    refresh: bool = False
    startup: float | None = None  # --startup-timeout, for a load this call makes
    idle: float | None = None  # the daemon's idle timeout from now on


def _request(data: bytes, fds: int) -> _Run | dict[str, Any]:
    """A request line with `fds` descriptors, checked: a `run` request, or a `status` or `stop` one; ValueError
    saying what is wrong with anything else."""
    if not data.endswith(b"\n"):
        raise ValueError(f"no request line within {_REQUEST} bytes" if len(data) >= _REQUEST else "no whole line")
    request = json.loads(data)  # a ValueError for what is not JSON, or not UTF-8
    if not isinstance(request, dict):
        raise ValueError(f"a JSON {type(request).__name__}, not an object")
    op = request.get("op")
    if op in ("status", "stop"):
        if not isinstance(request.get("source"), str | None):
            raise ValueError("`source` is not a string")
        return request
    if op != "run":
        raise ValueError(f"unknown op {_short(op)}")
    argv, streams = request.get("argv"), request.get("streams")
    if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
        raise ValueError("`argv` is not a list of strings")
    if not isinstance(streams, list) or len(streams) != 3 or fds != 3:
        raise ValueError(f"a call comes with 3 streams and their descriptors, not {_short(streams)} and {fds}")
    checked: list[tuple[str | None, str | None]] = []
    for stream in streams:
        if not isinstance(stream, list) or len(stream) != 2 or not all(isinstance(v, str | None) for v in stream):
            raise ValueError(f"a stream is [encoding, errors], not {_short(stream)}")
        try:
            if stream[0] is not None:
                codecs.lookup(stream[0])
            if stream[1] is not None:
                codecs.lookup_error(stream[1])
        except LookupError as exc:
            raise ValueError(f"a stream's {exc}") from None
        checked.append((stream[0], stream[1]))
    if not isinstance(request.get("refresh", False), bool):
        raise ValueError("`refresh` is not true or false")
    return _Run(argv, checked, request.get("refresh", False), _seconds(request, "startup"), _seconds(request, "idle"))


def _seconds(request: dict[str, Any], name: str) -> float | None:
    value = request.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < math.inf:
        raise ValueError(f"`{name}` is not a number of seconds above 0")
    return float(value)


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _unavailable(tree: Tree) -> bool:
    """Whether some of a tree's servers could not list their tools (shown as unavailable groups)."""
    return any(node.kind == "group" and node.summary.startswith("Unavailable") for _, node in tree.walk())


def _same_user(conn: socket.socket) -> bool:
    """Whether the peer runs as this user (where the OS says: SO_PEERCRED)."""
    if not hasattr(socket, "SO_PEERCRED"):
        return True
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return bool(struct.unpack("3i", creds)[1] == os.getuid())


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def _rss(pid: int) -> int:
    """Resident memory of a process, in bytes (0 if unknown)."""
    with suppress(OSError, ValueError):
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    return 0


def _descendants(pid: int) -> list[dict[str, Any]]:
    """The processes under `pid` (Linux /proc): pid, resident memory, command line."""
    found: list[dict[str, Any]] = []
    with suppress(OSError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                for child in map(int, f.read().split()):
                    with suppress(OSError):
                        with open(f"/proc/{child}/cmdline", "rb") as c:
                            argv = c.read().rstrip(b"\0").replace(b"\0", b" ").decode(errors="replace")
                        found.append({"pid": child, "memory": _rss(child), "command": argv})
                        found += _descendants(child)
    return found


def serve(
    listener: socket.socket,
    describe: dict[str, Any],
    load: Callable[[bool, float | None, Upstreams], Tree],
    digest: Callable[[], str],
    logins: Callable[[], dict[str, object]],
    idle: float,
    setup_logging: Callable[[], None],
) -> NoReturn:
    """Serve calls on `listener` (bound and listening) until idle, stopped or signalled; then exit."""
    sys.stdout, sys.stderr = _CallStream(0, sys.stdout), _CallStream(1, sys.stderr)
    setup_logging()
    daemon = Daemon(describe, load, digest, logins, idle)

    async def main() -> None:
        await daemon.main(await SocketListener.from_socket(listener))

    try:
        anyio.run(main)
    finally:
        kill_all()
    exit_process(0)
