"""Subprocess commands: an argument list (never a shell), cwd, env, timeout; stdout, stderr and status captured.

Reference (`refs.SubprocessRef`): `{"kind": "subprocess", "command": ["{python}", "x.py"], "cwd": ".", "env": {},
"inherit": [], "timeout": 60}`. The call's tokens (already parsed and validated) are appended verbatim. `{python}` is
this interpreter and `{base}` the tree's folder, in `command` and `env` values. `cwd` is relative to that folder;
without it the command runs where the caller works (an MCP client's first root, else the server's own working
directory). The environment is the safe part of the server's (SAFE_ENV: no credentials, though a script running
as the same user can still read the server's own from /proc), the variables `inherit` names, then `env`; a
`PYTHONPATH` in `env` goes before the inherited one. A Python script that fails because a module is missing is told
in one line, naming the tree's `requirements.txt` when there is one. Output that is not UTF-8 is binary: described
in a line, and sent whole as an embedded resource with its MIME type (up to MAX_BLOB). Under `mcp-cli run`
(`CallScope.terminal`) the command reads its caller's stdin, and writes its caller's stdout itself unless that is a
pipe.

Optional keys:
- `"stdin": true`: the command takes `--stdin TEXT` (or `@FILE`, relative to where it runs), taken out of the
  tokens and written to its standard input; otherwise its input is empty (/dev/null).
- `"dependencies": [...]` and `"requires_python": "..."` (a Python script's inline metadata, PEP 723): it runs
  with `{python}` when this Python meets them (each distribution installed at a version its specifier allows),
  else through `uv run --script` when `uv` is on the command's PATH, else the call fails in one line naming the
  missing ones and how to get them. Which one is logged when the handler is made (`mcp_cli` logger: INFO for
  uv or a failure, which a served skill prints on stderr; DEBUG for this Python).
- `"broken": "why"`: the script cannot run (two `# /// script` blocks, say); a call fails saying why.
- `"before": [{flag: values}, ...]`: one mapping per subcommand word at the end of `command`; those options (and
  their values), wherever given, are moved in front of that word, where argparse reads a parent parser's options.
"""

from __future__ import annotations

import fnmatch
import logging
import math
import os
import platform
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream, Process

from ..errors import ExitStatus, HandlerError, HandlerTimeout, UsageError
from ..refs import SubprocessRef
from ..result import KEEP, Result, blob, sniff
from ..tree import Tree
from ..types import at_file
from .base import WHOLE_MAX, Call, timeout_of
from .processes import ended, guarded, handed, kill_group, started

log = logging.getLogger("mcp_cli")
_STDERR_TAIL = 2_000
_HELD = 1.0  # seconds to finish reading a command's output once it has exited
STDIN_FLAG = "--stdin"  # the option of a command that reads its standard input (reference: "stdin": true)
MAX_BLOB = 8 * 2**20  # bytes of binary output an answer carries (as an embedded resource)


@dataclass
class _Kept:
    """What was read of a stream: the bytes kept, and how many it gave in all."""

    data: bytearray = field(default_factory=bytearray)
    seen: int = 0


async def _drain(stream: ByteReceiveStream | None, keep: int, sink: _Kept, tail: bool = False) -> None:
    """Read a stream to its end, keeping its first `keep` bytes (its last, with `tail`) in `sink`."""
    if stream is None:
        return
    async for chunk in stream:
        sink.seen += len(chunk)
        if tail:
            sink.data = (sink.data + chunk)[-keep:]
        elif (room := keep - len(sink.data)) > 0:
            sink.data += chunk[:room]


async def _feed(stream: ByteSendStream | None, data: bytes) -> None:
    """Write a command's standard input and close it (a command that stops reading early is not an error)."""
    if stream is None:
        return
    try:
        await stream.send(data)
    except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
        pass
    finally:
        await stream.aclose()


async def _exited(proc: Process) -> None:
    """Return once `proc` has exited: `wait()`, which on some Pythons also waits for its pipes to close (what it
    left running may hold them), raced against a poll of its status."""
    async with anyio.create_task_group() as tg:

        async def waiting() -> None:
            await proc.wait()
            tg.cancel_scope.cancel()

        tg.start_soon(waiting)
        while proc.returncode is None:
            await anyio.sleep(0.1)
        tg.cancel_scope.cancel()


def _decoded(out: _Kept) -> tuple[str, bool]:
    """A command's output as text, and whether it is binary (not UTF-8), which is then described in a line: it is
    sent as an embedded resource when it is whole and at most MAX_BLOB bytes."""
    data = bytes(out.data)
    try:
        return data.decode("utf-8"), False
    except UnicodeDecodeError as exc:
        if out.seen > len(data) and exc.start >= len(data) - 3 and exc.reason == "unexpected end of data":
            return data.decode("utf-8", errors="replace"), False  # text cut inside a character
    mime = sniff(data)
    if out.seen > len(data):
        return (
            f"[binary output: {out.seen:,} bytes ({mime}), more than the {MAX_BLOB:,} an answer carries, so not "
            "sent; have the command write it to a file, or run it in a shell: mcp-cli run TREE -- ... > FILE]",
            True,
        )
    return f"[binary output: {out.seen:,} bytes ({mime}), sent as an embedded resource]", True


def _installed(requirement: str) -> bool:
    """Whether this Python has what a requirement (`requests>=2`, `rich[jupyter]`, `x; python_version<'3.11'`) asks:
    the distribution installed at a version its specifier allows, and the distributions its extras add. A
    requirement whose marker excludes this Python is met; a direct reference (`x @ URL`) is not. Without
    `packaging` (a built server need not have it), only whether the distribution is installed."""
    from importlib import metadata  # only for scripts with inline dependencies: not at every start

    try:
        from packaging.requirements import InvalidRequirement, Requirement
    except ImportError:
        name = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
        return name is not None and _version(name.group(1)) is not None
    try:
        req = Requirement(requirement)
    except InvalidRequirement:
        return False
    if req.marker is not None and not req.marker.evaluate({"extra": ""}):
        return True
    version = _version(req.name)
    if version is None or req.url or not req.specifier.contains(version, prereleases=True):
        return False
    for extra in req.extras:
        for line in metadata.requires(req.name) or []:
            needed = Requirement(line)
            if needed.marker is not None and "extra" in str(needed.marker) and needed.marker.evaluate({"extra": extra}):
                needed.marker = None
                if not _installed(str(needed)):
                    return False
    return True


def _version(distribution: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def _python_meets(specifier: str) -> bool:
    """Whether this Python's version is one a `requires-python` specifier allows (unknown without `packaging`)."""
    try:
        from packaging.specifiers import InvalidSpecifier, SpecifierSet
    except ImportError:
        return True
    try:
        return SpecifierSet(specifier).contains(platform.python_version(), prereleases=True)
    except InvalidSpecifier:
        return False


def _runner(missing: list[str], uv: str | None) -> str:
    """How a script with inline metadata runs, said in a line."""
    if not missing:
        return "runs with this Python, which has its inline dependencies"
    said = ", ".join(missing)
    return f"runs through uv, as this Python lacks {said}" if uv else f"cannot run: needs {said}, and uv is not on PATH"


_MISSING_MODULE = re.compile(r"^ModuleNotFoundError: No module named '([^']+)'", re.MULTILINE)


# What a command inherits from the server's environment unless its reference names more (`inherit`): enough to
# find programs, write temporary files and speak the user's language; no credentials.
SAFE_ENV = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "LC_*",
    "TZ",
    "TERM",
    "TMPDIR",
    "TEMP",
    "TMP",
    "XDG_*",
    "PYTHONPATH",
    "VIRTUAL_ENV",
    "SYSTEMROOT",
    "COMSPEC",
    "PATHEXT",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
)


def _environment(ref: SubprocessRef, base: str) -> dict[str, str]:
    """The safe part of this process's environment and the variables `inherit` names (patterns allowed), with the
    reference's `env` on top; a PYTHONPATH there goes before the inherited one."""
    patterns = [*SAFE_ENV, *ref.inherit]
    inherited = {k: v for k, v in handed().items() if any(fnmatch.fnmatchcase(k, p) for p in patterns)}
    own = {k: str(v).replace("{python}", sys.executable).replace("{base}", base) for k, v in ref.env.items()}
    if "PYTHONPATH" in own and inherited.get("PYTHONPATH"):
        own["PYTHONPATH"] += os.pathsep + inherited["PYTHONPATH"]
    return {**inherited, **own}


class SubprocessHandler:
    def __init__(self, ref: SubprocessRef, tree: Tree) -> None:
        base = str(tree.base_dir or Path.cwd())
        self.command = [x.replace("{python}", sys.executable).replace("{base}", base) for x in ref.command]
        self.launch = guarded(self.command)
        self.cwd = None if ref.cwd is None else str(Path(base, ref.cwd))
        self.env = _environment(ref, base)
        requirements = Path(base, "requirements.txt")
        self.requirements = requirements if tree.base_dir and requirements.is_file() else None
        self.timeout = timeout_of(ref, tree)
        self.keep = max(KEEP, MAX_BLOB + 1)  # text is fitted to its budget later, binary whole or not
        self.stdin = ref.stdin
        self.before = ref.before
        self.missing: list[str] = []
        self.broken = ref.broken
        if ref.dependencies is not None:
            self.missing = [d for d in ref.dependencies if not _installed(d)]
            if ref.requires_python is not None and not _python_meets(ref.requires_python):
                self.missing.append(f"Python {ref.requires_python}")
            uv = shutil.which("uv", path=self.env.get("PATH")) if self.missing else None
            if uv:
                self.command = [uv, "run", "--quiet", "--script", *self.command[1:]]
                self.launch = guarded(self.command)
            script = next((x for x in reversed(self.command) if x.endswith(".py")), self.command[-1])
            log.log(logging.INFO if self.missing else logging.DEBUG, "%s: %s", script, _runner(self.missing, uv))
            self.missing = [] if uv else self.missing

    def _arrange(self, call: Call) -> tuple[list[str], bytes | None]:
        """The command line for a call (parent parsers' options moved in front of their subcommand word) and the
        bytes for its standard input (None: it reads nothing)."""
        tokens, rest = list(call.tokens), []
        if "--" in tokens:
            at = tokens.index("--")
            tokens, rest = tokens[:at], tokens[at:]
        stdin: str | None = None
        moved: list[list[str]] = [[] for _ in self.before]
        kept: list[str] = []
        while tokens:
            token = tokens.pop(0)
            flag, eq, _ = token.partition("=")
            if self.stdin and flag == STDIN_FLAG:
                stdin = token[len(flag) + 1 :] if eq else (tokens.pop(0) if tokens else "")
                continue
            level = self._level(flag)
            values: int | None = 0  # None: every token that follows
            if level is not None and not eq:
                values = self.before[level][flag]
            elif level is None and token[:1] == "-" and token[1:2] not in ("-", ""):  # -cVALUE
                level = self._level(token[:2])
            if level is None:
                kept.append(token)
                continue
            moved[level] += [token, *tokens[:values]]
            del tokens[:values]
        words = self.launch[len(self.launch) - len(self.before) :] if self.before else []
        argv = self.launch[: len(self.launch) - len(words)]
        for options, word in zip(moved, words, strict=True):
            argv += [*options, word]
        return argv + kept + rest, None if stdin is None else self._input(stdin, call.cwd)

    def _level(self, flag: str) -> int | None:
        """Which subcommand word an option of a parent parser goes in front of (None: not such an option)."""
        return next((i for i, options in enumerate(self.before) if flag in options), None)

    @staticmethod
    def _input(value: str, cwd: str | None) -> bytes:
        if not value.startswith("@"):
            return value.encode("utf-8")
        try:
            return at_file(os.path.join(cwd or "", value[1:]), "text")
        except ValueError as exc:
            raise UsageError(f"{STDIN_FLAG}: {exc}") from None

    async def run(self, call: Call) -> Result:
        if self.broken:
            raise HandlerError(f"`{call.path}` cannot run: {self.broken}")
        if self.missing:
            names = ", ".join(self.missing)
            packages = [d for d in self.missing if not d.startswith("Python ")]
            quoted = " ".join(f"'{d}'" for d in packages)
            raise HandlerError(
                f"`{call.path}` needs {names} (its inline script metadata), which uv would install, but uv is not on "
                f"PATH; install uv (pip install uv)" + (f" or the packages (pip install {quoted})" if packages else "")
            )
        argv, data = self._arrange(call)
        data = call.stdin if data is None else data
        out, err = _Kept(), _Kept()
        whole = call.scope.whole
        keep = WHOLE_MAX if whole else self.keep
        terminal = None if whole else call.scope.terminal  # a pipeline's stage before the last is read
        try:
            proc = await anyio.open_process(
                argv,
                cwd=self.cwd or call.cwd,
                env=self.env,
                stdin=subprocess.PIPE if data is not None else terminal[0] if terminal else subprocess.DEVNULL,
                stdout=terminal[1] if terminal and terminal[1] is not None else subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as exc:
            raise HandlerError(f"cannot start `{call.path}` ({self.command[0]}): {exc.strerror or exc}") from None
        started(proc.pid)
        held = False  # its output still open when it had exited: held by what it left in the background
        try:
            with anyio.move_on_after(self.timeout) as scope:
                async with anyio.create_task_group() as tg:
                    read = anyio.Event()

                    async def reading() -> None:
                        async with anyio.create_task_group() as streams:
                            streams.start_soon(_drain, proc.stdout, keep, out)
                            streams.start_soon(_drain, proc.stderr, _STDERR_TAIL * 4, err, True)
                            if data is not None:
                                streams.start_soon(_feed, proc.stdin, data)
                        read.set()

                    tg.start_soon(reading)
                    await _exited(proc)
                    scope.deadline = math.inf  # it ended in time; reading what is left is bounded by _HELD
                    with anyio.move_on_after(_HELD):
                        await read.wait()
                    held = not read.is_set()
                    tg.cancel_scope.cancel()
        finally:
            ended(proc.pid)
            if proc.returncode is None or scope.cancelled_caught or held:  # and what it left running
                kill_group(proc.pid)
                with anyio.CancelScope(shield=True):
                    await proc.wait()
            await proc.aclose()
        stdout, binary = _decoded(out)
        stderr = err.data.decode("utf-8", errors="replace")
        if err.seen > _STDERR_TAIL:
            stderr = (
                f"[stderr cut: its last {_STDERR_TAIL:,} characters of {err.seen:,} bytes]\n" + stderr[-_STDERR_TAIL:]
            )
        if held:
            note = "[mcp-cli: it exited, but what it left running kept its output open, and was stopped]"
            stderr = f"{stderr.rstrip()}\n{note}".lstrip()
        if scope.cancelled_caught:
            wrote = "; what it wrote by then follows" if (stdout + stderr).strip() else ""
            message = (
                f"Error: `{call.path}` did not finish within {self.timeout:g} s and was stopped{wrote}. Try a smaller "
                "input, or raise its timeout (`timeout:` in a skill's mcp-cli.yaml, else the tree's settings)."
            )
            return Result(
                ok=False,
                output=stdout,
                error=HandlerTimeout.kind,
                message=message,
                stderr=stderr,
                omitted=out.seen - len(out.data),
            )
        code = proc.returncode
        assert code is not None  # it has exited, or was killed and waited for
        omitted = 0 if binary else out.seen - len(out.data)
        result = Result(ok=code == 0, output=stdout, exit_code=code, stderr=stderr, omitted=omitted)
        if binary and out.seen == len(out.data):
            said = stdout + (f"\n\n[stderr]\n{stderr.rstrip()}" if stderr.strip() else "")
            uri = "mcp-cli://output/" + call.path.replace(" ", "/")
            result.content = [{"type": "text", "text": said}, blob(bytes(out.data), uri)]
        if code != 0:
            signal_note = f" (killed by signal {-code})" if code < 0 else ""
            result.error = ExitStatus.kind
            result.message = f"Error: `{call.path}` exited with status {code}{signal_note}."
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
