"""Discovery: each configured MCP server's tool list, asked for at start-up or recalled from the cache.

Tool lists are cached on disk (the user cache folder, or `MCP_CLI_CACHE_DIR`) keyed by each server's
configuration, so a start with a warm cache starts no upstream process. Servers are asked concurrently, each
within a start-up budget; one that fails or does not answer in time is reported (why), and its failure is
remembered for FAILED_TTL seconds so that starts in a row do not each wait for it again, as long as what it started
with is the same (`_environment`: a PATH fixed or a variable set is tried at once).

The budget: a server's own `startup_timeout`, else the command's `--startup-timeout`, else
`MCP_CLI_STARTUP_TIMEOUT`, else STARTUP_BUDGET while serving (a client is kept waiting; what missed it is asked
again in the background) or ONE_SHOT_BUDGET for a one-shot command (`run`, `inspect`, ...: someone waits for
that very answer, and nothing asks again).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import shlex
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any, TypedDict

import anyio

from ..compat import cache_dir as cache_dir  # also read here (cli, surfaces)
from ..errors import SourceError
from ..handlers.processes import stopping
from ..handlers.relay import listing
from ..handlers.server_config import BadConfig, ServerConfig, UnsetVariable, expand
from ..handlers.upstream import START_TIMEOUT, StartFailed, Upstreams, describe
from ..text import one_line
from .mcp_config import Server

STARTUP_BUDGET = 5.0  # seconds a server may take to list its tools at start-up (then it is shown as unavailable)
ONE_SHOT_BUDGET = START_TIMEOUT  # the same for one-shot commands, as long as a call would wait for a start
STARTUP_ENV = "MCP_CLI_STARTUP_TIMEOUT"  # a default budget of the user's (slow first starts: npx, uvx)
RETRY_BUDGET = 60.0  # the same, when retried in the background while serving
FAILED_TTL = 60.0  # how long a failure is remembered
_VOLATILE = {"PWD", "OLDPWD", "SHLVL", "_"}  # differ between the shells of one session and change no start
TTL = 24 * 3600.0  # how long a tool list is kept


class ServerInfo(TypedDict, total=False):
    """What a server says of itself at start-up: its `serverInfo` (a listing cached before title and description
    were kept has neither) and its `instructions`."""

    name: str
    version: str
    title: str
    description: str
    instructions: str


class Listing(TypedDict, total=False):
    """A server's listing, as cached: the server, and each tool as the JSON of an MCP `Tool`; for a server that
    declares them, its resources, resource templates and prompts (each as JSON, every page)."""

    server: ServerInfo
    tools: list[dict[str, Any]]
    resources: list[dict[str, Any]]
    resourceTemplates: list[dict[str, Any]]
    prompts: list[dict[str, Any]]


class Unavailable(Exception):
    """A server whose tools could not be listed; the message says why."""


class NeedsLogin(Unavailable):
    """A server that answered that it wants an OAuth login."""


def login_command(server: Server) -> str:
    """The command that logs in to a server of a config file."""
    return shlex.join(["mcp-cli", "login", *([server.source] if server.source else []), server.name])


def forget(config: dict[str, Any]) -> None:
    """Drop a server's cached tool list and remembered failure (after a login or logout)."""
    _cache_file(config).unlink(missing_ok=True)
    _failure_file(config).unlink(missing_ok=True)


def startup_budget(one_shot: bool = False) -> float:
    """The default start-up budget: `MCP_CLI_STARTUP_TIMEOUT` seconds when set, else STARTUP_BUDGET (serving) or
    ONE_SHOT_BUDGET (a one-shot command)."""
    raw = os.environ.get(STARTUP_ENV, "").strip()
    try:
        value = float(raw) if raw else ONE_SHOT_BUDGET if one_shot else STARTUP_BUDGET
    except ValueError:
        value = 0.0
    if not 0 < value < float("inf"):
        raise SourceError(f"{STARTUP_ENV}={raw!r} is not a number of seconds above 0")
    return value


def cache_entries() -> list[tuple[str, str, float]]:
    """What the cache holds: (file name, what it says, age in seconds), newest first."""
    entries = []
    for path in cache_dir().glob("tools-*"):
        try:
            age, text = time.time() - path.stat().st_mtime, path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if path.suffix == ".failed":
            why = (_remembered(path) or ("an old failure, no longer used",))[0]
            entries.append((path.name, f"failed: {one_line(why, 100)}", age))
        elif path.suffix == ".json":
            try:
                listing = json.loads(text)
                about = f"{listing['server'].get('name') or '?'}: {len(listing['tools'])} tools"
            except (ValueError, KeyError, TypeError, AttributeError):
                about = "unreadable (asked again on the next start)"
            entries.append((path.name, about, age))
    return sorted(entries, key=lambda e: e[2])


def clear_cache() -> int:
    """Delete every cached tool list and remembered failure; how many files were deleted."""
    deleted = 0
    for path in cache_dir().glob("tools-*"):
        with contextlib.suppress(OSError):
            path.unlink()
            deleted += 1
    return deleted


LISTING_VERSION = 2  # what a cached listing holds (2: resources, templates, prompts); older ones are not read


def _cache_file(config: dict[str, Any]) -> Path:
    keyed = {**config, "\0listing": LISTING_VERSION}
    key = hashlib.sha256(json.dumps(keyed, sort_keys=True).encode()).hexdigest()[:32]
    return cache_dir() / f"tools-{key}.json"


def _failure_file(config: dict[str, Any]) -> Path:
    return _cache_file(config).with_suffix(".failed")


def remember(config: dict[str, Any], listing: Listing) -> None:
    """Cache a server's listing as read now (its live session said its tools changed)."""
    _write(_cache_file(config), json.dumps(listing))


async def list_tools(config: ServerConfig, timeout: float, pool: Upstreams | None = None) -> Listing:
    """Read a server's tools, and its resources, templates and prompts when it declares them (every page), through
    its session in `pool` (started if it has none, and left open for the calls that follow), or through a pool of
    its own, closed after; `Unavailable` with why, and its stderr tail, if not (its server is then stopped)."""
    if pool is None:
        async with Upstreams() as own:
            return await list_tools(config, timeout, own)
    upstream = pool.open(config)
    try:
        with anyio.fail_after(timeout):
            client = await upstream.session(timeout)  # declares what serving sessions do: the tools listed are the
            return await listing(client)  # type: ignore[return-value]  # ones called. A Listing, as a plain dict
    except StartFailed as exc:
        if exc.login:
            raise NeedsLogin from None
        raise Unavailable(exc.why + (f"; its stderr ends with:\n{exc.tail}" if exc.tail else "")) from None
    except Exception as exc:
        pool.close_soon(config.name)
        tail = upstream.stderr_tail()
        why = f"no answer within {timeout:g} s" if isinstance(exc, TimeoutError) else describe(exc)
        raise Unavailable(why + (f"; its stderr ends with:\n{tail}" if tail else "")) from None


async def _listing(server: Server, refresh: bool, ttl: float, budget: float, pool: Upstreams | None) -> Listing:
    """A server's tool list from the cache if fresh, else from the server (then cached). A failure is cached
    for FAILED_TTL seconds, so that starts in a row do not each wait for the same broken server."""
    path, failed = _cache_file(server.config), _failure_file(server.config)
    if not refresh and path.is_file() and time.time() - path.stat().st_mtime < ttl:
        try:
            cached: Listing = json.loads(path.read_text(encoding="utf-8"))
            return cached
        except (OSError, ValueError):
            pass
    try:
        config = server.upstream
        config.expanded()  # said at once and not remembered: setting the variable is the fix
    except (UnsetVariable, BadConfig) as exc:
        raise Unavailable(str(exc)) from None
    timeout = float(server.config.get("startup_timeout") or budget)
    remembered = _remembered(failed, _environment(server.config))
    if not refresh and remembered and remembered[1] >= timeout:  # failed as recently, given as long as now
        why, _, age = remembered
        raise Unavailable(f"{why} ({age:.0f} s ago; next try after {FAILED_TTL:g} s)")
    try:
        listing = await list_tools(config, timeout, pool)
    except NeedsLogin:  # not remembered: it costs no wait, and a login in between must be seen at once
        raise Unavailable(f"needs an OAuth login: run `{login_command(server)}`") from None
    except Exception as exc:
        _remember(failed, str(exc), timeout, server.config)
        raise Unavailable(str(exc)) from None
    _write(path, json.dumps(listing))
    failed.unlink(missing_ok=True)
    return listing


def _remember(path: Path, why: str, timeout: float, config: dict[str, Any]) -> None:
    _write(path, json.dumps({"why": why, "timeout": timeout, "environment": _environment(config)}))


def _remembered(path: Path, environment: str | None = None) -> tuple[str, float, float] | None:
    """(why, the time it was given, age in seconds) of a failure remembered less than FAILED_TTL ago (in
    `environment`, if given)."""
    try:
        age = time.time() - path.stat().st_mtime
        data = json.loads(path.read_text(encoding="utf-8"))
        if environment is not None and data.get("environment") != environment:
            return None
        return (str(data["why"]), float(data["timeout"]), age) if age < FAILED_TTL else None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def _environment(config: dict[str, Any]) -> str:
    """A digest of what a server starts with besides its entry: its `${VAR}`s expanded, the environment a stdio server
    inherits (less what differs between the shells of one session) and the working folder. A failure remembered in
    another is not recalled: the PATH that lacked its command may have been fixed, the key it wanted set."""
    try:
        expanded = expand(config)
    except UnsetVariable:
        expanded = config
    inherit = config.get("inherit")
    env = (
        {}
        if "url" in config
        else {k: v for k, v in os.environ.items() if (inherit is None or k in inherit) and k not in _VOLATILE}
    )
    seen = json.dumps([expanded, env, os.getcwd()], sort_keys=True, default=str)
    return hashlib.sha256(seen.encode()).hexdigest()


def _write(path: Path, text: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    except OSError:
        pass  # a read-only cache only costs speed


async def listings(
    servers: list[Server],
    refresh: bool = False,
    ttl: float = TTL,
    budget: float = STARTUP_BUDGET,
    progress: bool = False,
    decided: Callable[[dict[str, Listing], dict[str, str]], None] | None = None,
    pool: Upstreams | None = None,
) -> tuple[dict[str, Listing], dict[str, str]]:
    """Every server's listing, fetched concurrently, each within its start-up budget: (found, {name: why not}).
    `decided(found, failed)` is called as soon as every server has answered or run out of time, while those
    that ran out are still being stopped (a listing that arrives after that is only cached). Servers asked are
    asked through `pool`, where their sessions stay open for the calls that follow (else each through a pool of
    its own, closed once it answered)."""
    found: dict[str, Listing] = {}
    failed: dict[str, str] = {}
    waiting = {s.name for s in servers}
    all_decided = anyio.Event()

    def settle(name: str, listing: Listing | None = None, why: str = "") -> None:
        if name in waiting:
            waiting.discard(name)
            found.update({name: listing} if listing is not None else {})
            failed.update({} if listing is not None else {name: why})
            if not waiting:
                all_decided.set()

    async def one(server: Server) -> None:
        try:
            settle(server.name, await _listing(server, refresh, ttl, budget, pool))
        except Exception as exc:  # any failure of one server must not stop the others
            settle(server.name, why=str(exc))

    async def deadline(server: Server) -> None:
        timeout = float(server.config.get("startup_timeout") or budget)
        await anyio.sleep(timeout)
        if server.name in waiting:
            why = f"no answer within {timeout:g} s"
            _remember(_failure_file(server.config), why, timeout, server.config)
            settle(server.name, why=why)

    async with anyio.create_task_group() as tg:
        for server in servers:
            tg.start_soon(one, server)
        async with anyio.create_task_group() as timers:
            for server in servers:
                timers.start_soon(deadline, server)
            if progress and sys.stderr.isatty():
                timers.start_soon(_report, waiting, budget)
            await all_decided.wait()
            timers.cancel_scope.cancel()
        found, failed = dict(found), dict(failed)
        if decided is not None:
            decided(found, failed)
    return found, failed


def listings_now(
    servers: list[Server],
    refresh: bool = False,
    budget: float = STARTUP_BUDGET,
    progress: bool = False,
    pool: Upstreams | None = None,
) -> tuple[dict[str, Listing], dict[str, str]]:
    """`listings` from synchronous code. With a `pool`, from a worker thread of the event loop the pool's task group
    runs in (`anyio.to_thread`): they run in that loop, the sessions they open left in the pool. Else they run on
    a thread of their own, which returns as soon as every server is decided: servers that ran out of time are
    stopped there while the caller goes on."""
    if pool is not None:
        run = functools.partial(listings, servers, refresh, budget=budget, progress=progress, pool=pool)
        return anyio.from_thread.run(run)
    decision: Future[tuple[dict[str, Listing], dict[str, str]]] = Future()

    def decided(found: dict[str, Listing], failed: dict[str, str]) -> None:
        decision.set_result((found, failed))

    def work() -> None:
        try:
            anyio.run(functools.partial(listings, servers, refresh, budget=budget, progress=progress, decided=decided))
        except BaseException as exc:  # handed to the caller
            if not decision.done():
                decision.set_exception(exc)

    thread = threading.Thread(target=work, name="mcp-cli discovery", daemon=True)
    stopping(thread)  # what it stops is stopped before the process exits
    thread.start()
    return decision.result()


async def _report(waiting: set[str], budget: float) -> None:
    """After a moment, a line on the terminal naming the servers still being asked (cleared when done)."""
    start = time.monotonic()
    await anyio.sleep(1)
    try:
        while waiting:
            names = ", ".join(sorted(waiting)[:5]) + (" ..." if len(waiting) > 5 else "")
            line = f"waiting for {len(waiting)} MCP server(s): {names} ({time.monotonic() - start:.0f} s of {budget:g})"
            sys.stderr.write("\r" + line[:150] + "\033[K")
            sys.stderr.flush()
            await anyio.sleep(0.5)
    finally:
        sys.stderr.write("\r\033[K")
        sys.stderr.flush()
