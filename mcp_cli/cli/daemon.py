"""`mcp-cli run` through the keep-alive daemon (the caller's side), `mcp-cli daemon status|stop`, and the daemon
process's entry point (`python -m mcp_cli.cli.daemon SOCKET SPEC`).

One daemon per key: the source (resolved), the options that shape its tree, the working folder and the
environment (less what differs between shells of one session: PWD, OLDPWD, SHLVL, _) and this mcp-cli. So the
daemon is the very process the call would have been, kept: its upstream servers start where and with what they
would have, and nothing one caller sets leaks into another's call. Its socket is `<folder>/<key digest>.sock` in the
user's runtime folder (MCP_CLI_RUNTIME_DIR, else $XDG_RUNTIME_DIR/mcp-cli, else <tmp>/mcp-cli-<uid>; 0700, the
socket 0600); the daemon answers only its own user (SO_PEERCRED). A call hands the daemon its argv and its stdin,
stdout and stderr themselves (SCM_RIGHTS), so what the call writes, reads and asks is the caller's own, and gets
back the exit status. Options that do not shape the tree (--startup-timeout, --budget, --refresh, --daemon-idle)
travel with the call, not in the key.

At most once: the daemon answers `{"accepted": true}` before it does anything with a call. Until then the caller may
run the call itself (the daemon could not take it); after it, a daemon that ends without the exit status leaves the
call's fate unknown, which the caller says (exit status 1) and never runs it again.
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
from typing import Any, BinaryIO, NoReturn

from .. import __version__
from .serve import CONFIG_FLAGS, CONFIG_OPTIONS

NO_DAEMON_ENV = "MCP_CLI_NO_DAEMON"  # 1: `run` works in its own process
IDLE_ENV = "MCP_CLI_DAEMON_IDLE"  # seconds without a call after which a daemon stops
DIR_ENV = "MCP_CLI_RUNTIME_DIR"  # where the sockets are (default: see `folder`)
IDLE = 300.0
START_WAIT = 30.0  # seconds a new daemon has to take calls
CANCEL_WAIT = 10.0  # seconds an interrupted caller waits for the daemon to cancel its call
PER_CALL = {"refresh", "startup"}  # `run` options that shape no tree: sent with the call, not part of a daemon's key
INTERRUPTED = 130  # the exit status of a call ended by Ctrl-C (128 + SIGINT), as a shell reports it
_ANSWER = 1 << 20  # bytes of one answer line, at most
_VOLATILE = {"PWD", "OLDPWD", "SHLVL", "_"}  # differ between the shells of one session and change no call


class Unavailable(Exception):
    """The daemon cannot take this call (the message says why); the call runs in-process."""


class Lost(Exception):
    """The daemon accepted the call and ended without its exit status: whether it ran is unknown."""


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
    """What a daemon is for (see the module's docstring); PER_CALL options are a call's, not a daemon's."""
    path = Path(source)
    env = sorted((k, v) for k, v in os.environ.items() if k not in _VOLATILE)
    return {
        "source": str(path.resolve()) if path.exists() else source,
        "options": {k: v for k, v in sorted(options.items()) if k not in PER_CALL},
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
    it, and the command line runs it in-process. Ctrl-C ends it with one line and INTERRUPTED."""
    try:
        parsed = _parse(args)
        if parsed is None:
            return
        source, options, tokens, no_daemon, idle = parsed
        if wanted(no_daemon):
            status = forward(source, options, tokens, idle_timeout(idle))
            if status is not None:
                sys.stdout.flush()
                raise SystemExit(status)
    except KeyboardInterrupt:
        interrupted("run")


def interrupted(command: str) -> NoReturn:
    """End a command the user interrupted (Ctrl-C): one line on stderr, exit status INTERRUPTED, no traceback, and no
    wait for threads still blocked (on stdin, say)."""
    with contextlib.suppress(OSError, ValueError):
        sys.stdout.flush()
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(f"mcp-cli: {command}: interrupted\n")
        sys.stderr.flush()
    os._exit(INTERRUPTED)


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
    warning, when the daemon did not accept the call: the caller runs it in its own process. A daemon that ends after
    accepting the call is said in one line (exit status 1): the call is never run twice."""
    if any(s is None for s in (sys.stdin, sys.stdout, sys.stderr)):
        return None  # a standard stream closed: nothing to hand over
    spec = key(source, options)
    streams = [[s.encoding, s.errors] for s in (sys.stdin, sys.stdout, sys.stderr)]
    request = {
        "op": "run",
        "argv": tokens,
        "refresh": bool(options.get("refresh")),
        "startup": options.get("startup"),
        "idle": idle,
        "streams": streams,
    }
    try:
        with _connected(spec) as conn:
            sys.stdout.flush()
            socket.send_fds(conn, [_line(request)], [0, 1, 2])
            return _exchange(conn)
    except (Unavailable, OSError, ValueError) as exc:  # ValueError: an answer that is not JSON
        why = str(exc) if isinstance(exc, Unavailable) else f"failed ({exc})"
        print(f"mcp-cli: warning: the daemon {why}; running this call in-process", file=sys.stderr)
        return None
    except Lost as exc:
        print(f"mcp-cli: run: {exc}", file=sys.stderr)
        return 1


def _exchange(conn: socket.socket) -> int:
    """The call's exit status, read from the daemon; Unavailable (or OSError, ValueError) before the daemon accepted
    the call, Lost after. Ctrl-C hangs up, which cancels the call, and waits (CANCEL_WAIT s at most) for the daemon
    to have stopped it before the caller exits."""
    answers = conn.makefile("rb")
    accepted = False
    try:
        answer = _read(answers)
        if answer.get("accepted"):
            accepted = True
            answer = _read(answers)
        if isinstance(answer.get("status"), int):
            return int(answer["status"])
        if not accepted:
            raise Unavailable(
                f"refused the call ({answer['error']})" if answer.get("error") else "ended before answering"
            )
    except KeyboardInterrupt:
        with contextlib.suppress(OSError, ValueError):
            conn.shutdown(socket.SHUT_WR)  # the daemon cancels the call
            conn.settimeout(CANCEL_WAIT)
            while conn.recv(4096):  # it closes the connection once the call is stopped
                pass
        raise
    except (OSError, ValueError) as exc:
        if not accepted:
            raise
        raise Lost(
            f"the daemon failed during the call ({exc}); whether the call ran is unknown, and it was not run again"
        ) from None
    raise Lost(
        f"the daemon ended during the call (see {_log_of(conn)}); whether the call ran is unknown, and it was "
        "not run again"
    )


def _log_of(conn: socket.socket) -> str:
    """The log of the daemon at the other end of `conn`."""
    try:
        return str(Path(conn.getpeername()).with_suffix(".log"))
    except (OSError, TypeError):
        return "its log"


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def _read(answers: BinaryIO) -> dict[str, Any]:
    """The daemon's next one-line answer ({} if it closed the connection first)."""
    data = answers.readline(_ANSWER)
    if not data.endswith(b"\n"):
        return {}
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
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=errors,
            start_new_session=True,
        )
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
    """Every running daemon's answer to `op`, status or stop, of `source`'s daemons only if given; sockets nobody
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
            answer = _read(conn.makefile("rb"))
            if answer.get("stopped"):
                while conn.recv(4096):  # the daemon closes the connection as it exits, its servers stopped
                    pass
        if answer and answer.get("stopped", True) and (op != "status" or source in (None, answer.get("source"))):
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
    source, options = spec["source"], spec["options"]
    surface.serve(
        listener,
        describe={"source": source, "options": options, "cwd": spec["cwd"], "socket": path},
        load=lambda refresh, startup, pool: serving.load(
            source,
            {**options, "refresh": refresh, "startup": startup, "progress": True, "one_shot": True, "pool": pool},
        ),
        digest=lambda: digest(source),
        logins=lambda: logins(source, options),
        idle=idle_timeout(None),
        setup_logging=serving.setup_logging,
    )


def logins(source: str, options: dict[str, Any]) -> dict[str, object]:
    """What each server of a config source that logs in with OAuth has stored (`TokenFile.login`): it changes with
    `mcp-cli login` and `logout`, not with a refresh. Empty for other sources."""
    from ..errors import SourceError
    from ..handlers.oauth import TokenFile, server_url
    from ..handlers.server_config import BadConfig, UnsetVariable
    from ..sources import mcp_config

    path = Path(source)
    try:
        if not path.is_file() or not mcp_config.looks_like_config(path):
            return {}
        servers, _ = mcp_config.read(path, options.get("only"), options.get("skip"))
    except (SourceError, OSError):
        return {}
    found: dict[str, object] = {}
    for server in servers:
        with contextlib.suppress(UnsetVariable, BadConfig):
            url = server_url(server.upstream.expanded())
            if url:
                found[server.name] = TokenFile(url).login()
    return found


if __name__ == "__main__":
    _daemon_main(*sys.argv[1:3])
