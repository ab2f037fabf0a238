"""`mcp-cli run` through the keep-alive daemon (the caller's side), `mcp-cli daemon status|stop`, and the daemon
process's entry point (`python -m mcp_cli.cli.daemon SOCKET SPEC`).

One daemon per key: the source (resolved), the options that shape its tree, the working folder and the
environment (less what differs between shells of one session: PWD, OLDPWD, SHLVL, _) and this mcp-cli. So the
daemon is the very process the call would have been, kept: its upstream servers start where and with what they
would have, and nothing one caller sets leaks into another's call. Its socket is `<folder>/<key digest>.sock` in the
user's runtime folder (MCP_CLI_RUNTIME_DIR, else $XDG_RUNTIME_DIR/mcp-cli, else <tmp>/mcp-cli-<uid>; 0700, the
socket 0600); the daemon answers only its own user (SO_PEERCRED). A call hands the daemon its argv and its stdin,
stdout and stderr themselves (SCM_RIGHTS), so what the call writes, reads and asks is the caller's own, and gets
back the exit status.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .. import __version__
from .serve import CONFIG_FLAGS, CONFIG_OPTIONS

NO_DAEMON_ENV = "MCP_CLI_NO_DAEMON"  # 1: `run` works in its own process
IDLE_ENV = "MCP_CLI_DAEMON_IDLE"  # seconds without a call after which a daemon stops
DIR_ENV = "MCP_CLI_RUNTIME_DIR"  # where the sockets are (default: see `folder`)
IDLE = 300.0
START_WAIT = 30.0  # seconds a new daemon has to take calls
_VOLATILE = {"PWD", "OLDPWD", "SHLVL", "_"}  # differ between the shells of one session and change no call


class Unavailable(Exception):
    """The daemon cannot take this call (the message says why); the call runs in-process."""


def wanted(no_daemon: bool) -> bool:
    """Whether a call goes to the daemon: not asked otherwise, and the OS can pass descriptors (not Windows)."""
    return not no_daemon and os.environ.get(NO_DAEMON_ENV, "") in ("", "0") and hasattr(socket, "send_fds")


def idle_timeout(given: float | None) -> float:
    """`--daemon-idle`, else $MCP_CLI_DAEMON_IDLE, else IDLE seconds."""
    if given is not None:
        return given
    try:
        return float(os.environ.get(IDLE_ENV) or IDLE)
    except ValueError:
        return IDLE


def folder(create: bool = True) -> Path:
    """The user's folder for daemon sockets, made 0700 if missing; Unavailable if it is not this user's alone."""
    if os.environ.get(DIR_ENV):
        base = Path(os.environ[DIR_ENV])
    elif os.environ.get("XDG_RUNTIME_DIR"):
        base = Path(os.environ["XDG_RUNTIME_DIR"]) / "mcp-cli"
    else:
        base = Path(tempfile.gettempdir()) / f"mcp-cli-{os.getuid()}"
    try:
        if create:
            base.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = os.lstat(base)
    except OSError as exc:
        raise Unavailable(f"cannot use the runtime folder {base}: {exc.strerror or exc}") from None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise Unavailable(f"the runtime folder {base} is not a folder of this user's alone (mode 0700)")
    return base


def key(source: str, options: dict[str, Any]) -> dict[str, Any]:
    """What a daemon is for (see the module's docstring); `refresh` is a call's, not a daemon's."""
    path = Path(source)
    env = sorted((k, v) for k, v in os.environ.items() if k not in _VOLATILE)
    return {
        "source": str(path.resolve()) if path.exists() else source,
        "options": {k: v for k, v in sorted(options.items()) if k != "refresh"},
        "cwd": os.getcwd(),
        "env": hashlib.sha256(json.dumps(env).encode()).hexdigest(),
        "mcp_cli": [sys.executable, str(Path(__file__).resolve().parent.parent), __version__],
    }


def digest(source: str) -> str:
    """The source's content: a file's bytes; a folder's files by name, size and modification time."""
    path, h = Path(source), hashlib.sha256()
    try:
        if path.is_file():
            h.update(path.read_bytes())
        elif path.is_dir():
            for p in sorted(path.rglob("*")):
                if p.is_file():
                    info = p.stat()
                    h.update(f"{p.relative_to(path)}\0{info.st_size}\0{info.st_mtime_ns}\n".encode())
    except OSError:
        pass  # loading it says what is wrong
    return h.hexdigest()


def call_tokens(argv: list[str]) -> list[str] | None:
    """The tool's tokens of `mcp-cli run [options] TREE ARGV...` (ARGV may start with `--`); None when mcp-cli's
    options come after TREE (`run TREE --server x -- ...`), which is a mistake."""
    if argv[:1] == ["--"]:
        return argv[1:]
    if "--" in argv and CONFIG_FLAGS.intersection(t.partition("=")[0] for t in argv[: argv.index("--")]):
        return None
    return argv


def run_fast(args: list[str]) -> None:
    """`mcp-cli run ARGS` through the daemon, without loading the full command line: exits with the call's
    status; returns when the call is not for the daemon (--no-daemon, --help, anything unusual) or it could not take
    it, and the command line runs it in-process."""
    parsed = _parse(args)
    if parsed is None:
        return
    source, options, tokens, no_daemon, idle = parsed
    if wanted(no_daemon):
        status = forward(source, options, tokens, idle_timeout(idle))
        if status is not None:
            sys.stdout.flush()
            raise SystemExit(status)


def _parse(args: list[str]) -> tuple[str, dict[str, Any], list[str], bool, float | None] | None:
    """`run`'s options, TREE and tokens, read as its command line reads them (CONFIG_OPTIONS, --no-daemon,
    --daemon-idle, --budget: put before the tokens); None for anything else, which that command line handles (help,
    errors)."""
    kinds = {flag: (kind, key) for _, flag, _, kind, _, _, key in CONFIG_OPTIONS}
    kinds["--daemon-idle"] = (float, "idle")
    kinds["--budget"] = (str, "budget")
    options: dict[str, Any] = {key: default for _, _, _, _, default, _, key in CONFIG_OPTIONS}
    no_daemon, idle, i = False, None, 0
    budget: list[str] = []
    while i < len(args) and args[i].startswith("-"):
        flag, eq, value = args[i].partition("=")
        i += 1
        if flag == "--no-daemon" and not eq:
            no_daemon = True
            continue
        if flag not in kinds or (kinds[flag][0] is bool and eq):
            return None
        kind, key = kinds[flag]
        if kind is bool:
            options[key] = True
            continue
        if not eq:
            if i == len(args):
                return None
            value, i = args[i], i + 1
        try:
            if kind is list:
                options[key] = [*(options[key] or []), value]
            elif key == "idle":
                idle = float(value)
            elif key == "budget":  # the call's own (checked by the runtime: engine/answers.py)
                budget = ["--budget", value]
            else:
                options[key] = kind(value)
        except ValueError:
            return None
    tokens = call_tokens(args[i + 1 :])
    if i == len(args) or tokens is None:
        return None
    return args[i], options, [*budget, *tokens], no_daemon, idle


def forward(source: str, options: dict[str, Any], tokens: list[str], idle: float) -> int | None:
    """The exit status of the call run by the source's daemon (started if none runs); None, after one line of
    warning, when the daemon cannot start or died before answering: the caller runs the call in its own process."""
    spec = key(source, options)
    request = {"op": "run", "argv": tokens, "refresh": bool(options.get("refresh")), "idle": idle,
               "streams": [[s.encoding, s.errors] for s in (sys.stdin, sys.stdout, sys.stderr)]}  # fmt: skip
    try:
        with _connected(spec) as conn:
            sys.stdout.flush()
            socket.send_fds(conn, [_line(request)], [0, 1, 2])
            answer = _read(conn)
    except (Unavailable, OSError, ValueError) as exc:  # ValueError: an answer that is not JSON
        why = str(exc) if isinstance(exc, Unavailable) else f"failed ({exc})"
        print(f"mcp-cli: warning: the daemon {why}; running this call in-process", file=sys.stderr)
        return None
    if "status" not in answer:
        print("mcp-cli: warning: the daemon ended before answering; running this call in-process", file=sys.stderr)
        return None
    return int(answer["status"])


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def _read(conn: socket.socket) -> dict[str, Any]:
    """The daemon's one-line answer ({} if it closed the connection first)."""
    data = b""
    while not data.endswith(b"\n"):
        chunk = conn.recv(65536)
        if not chunk:
            return {}
        data += chunk
    answer = json.loads(data)
    return answer if isinstance(answer, dict) else {}


def _socket(path: Path) -> socket.socket | None:
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(str(path))
    except OSError:
        conn.close()
        return None
    return conn


@contextlib.contextmanager
def _connected(spec: dict[str, Any]) -> Iterator[socket.socket]:
    """A connection to the daemon for `spec`, started (under a lock, so concurrent callers share one) if none runs."""
    base = folder()
    name = hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:24]
    path = base / f"{name}.sock"
    conn = _socket(path)
    if conn is None:
        import fcntl

        with open(base / f"{name}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            conn = _socket(path) or _start(path, spec)
    with conn:
        yield conn


def _start(path: Path, spec: dict[str, Any]) -> socket.socket:
    """Start the daemon for `spec` at `path` and connect to it."""
    log = path.with_suffix(".log")
    with open(log, "wb") as errors:
        proc = subprocess.Popen(
            [sys.executable, "-m", "mcp_cli.cli.daemon", str(path), json.dumps(spec)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=errors, start_new_session=True,
        )  # fmt: skip
    deadline = time.monotonic() + START_WAIT
    while time.monotonic() < deadline:
        conn = _socket(path)
        if conn is not None:
            return conn
        if proc.poll() is not None:
            said = log.read_text(errors="replace").strip().splitlines()
            raise Unavailable(f"could not start ({said[-1] if said else f'exit status {proc.returncode}'})")
        time.sleep(0.01)
    raise Unavailable(f"did not start within {START_WAIT:g} s")


def ask(op: str, source: str | None = None) -> list[dict[str, Any]]:
    """Every running daemon's answer to `op`: status, or stop (only `source`'s daemons, if given); sockets nobody
    listens on are removed."""
    if source is not None and Path(source).exists():
        source = str(Path(source).resolve())
    try:
        base = folder(create=False)
    except Unavailable:
        return []
    answers = []
    for path in sorted(base.glob("*.sock")):
        conn = _socket(path)
        if conn is None:
            path.unlink(missing_ok=True)
            continue
        with conn:
            conn.sendall(_line({"op": op, "source": source}))
            answer = _read(conn)
            if answer.get("stopped"):
                while conn.recv(4096):  # the daemon closes the connection as it exits, its servers stopped
                    pass
        if answer and answer.get("stopped", True):
            answers.append(answer)
    return answers


def _daemon_main(path: str, spec_json: str) -> None:
    """The daemon process: listen first (callers wait for the socket), then load the tree on the first call."""
    from ..surfaces import daemon as surface
    from . import serve as serving

    spec = json.loads(spec_json)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)  # a dead daemon's (its callers hold the start lock)
    old = os.umask(0o177)
    try:
        listener.bind(path)
    finally:
        os.umask(old)
    listener.listen(64)
    source = spec["source"]
    surface.serve(
        listener,
        describe={"source": source, "options": spec["options"], "cwd": spec["cwd"], "socket": path},
        load=lambda refresh: serving.load(
            source, {**spec["options"], "refresh": refresh, "progress": True, "one_shot": True}
        ),
        digest=lambda: digest(source),
        idle=idle_timeout(None),
        setup_logging=serving.setup_logging,
    )


if __name__ == "__main__":
    _daemon_main(*sys.argv[1:3])
