"""Upstream server configs, typed: one entry of a tree's `upstreams` (as `sources/mcp_config.py` normalised it)
made into a `Stdio`, `Http` or `InProcess` config once, and the one way to open a transport to its server.

An entry is `{"command", "args", "env", "cwd", "inherit"}` for stdio, `{"url", "headers", "transport", "oauth"}`
for streamable HTTP (or SSE, `"transport": "sse"`), or `{"server"}` holding an in-process SDK server (tests,
`mcp_cli.testing`); any of them with `timeout` (seconds per call), `startup_timeout` and `mode` (how the session
starts: `mcp.Client`'s `mode`). A broken entry (a hand-edited tree) is a `BadConfig` naming the server and the key.

`${VAR}` and `${VAR:-default}` in an entry's strings are expanded from the environment when its server starts
(`expanded`), so frozen trees hold no expanded secrets; an unset `${VAR}` without a default is `UnsetVariable`.
A stdio server gets this process's environment as a child may have it (`processes.handed`; only the names under
`inherit`, when the entry has it) with the entry's `env` over it.
"""

from __future__ import annotations

import dataclasses
import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TextIO

from ..errors import HandlerError
from .processes import guarded, handed

if TYPE_CHECKING:
    from httpx2 import Auth
    from mcp.client import Transport

MODES = ("legacy", "auto", "2026-07-28")
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class UnsetVariable(HandlerError):
    """A `${VAR}` without a default whose variable is not set."""


class BadConfig(HandlerError):
    """An upstream server entry that cannot be used; the message names the server and what is wrong."""


def _value(match: re.Match[str]) -> str:
    name, default = match.group(1), match.group(2)
    if name in os.environ:
        return os.environ[name]
    if default is None:
        raise UnsetVariable(
            f"the environment variable {name} is not set (the configuration uses ${{{name}}}); set "
            f"it, or give a default in the configuration: ${{{name}:-value}}"
        )
    return default


def expand(value: Any) -> Any:
    """`${VAR}` / `${VAR:-default}` replaced from the environment, in strings, lists, tuples and dicts;
    `UnsetVariable` for a `${VAR}` whose variable is not set."""
    if isinstance(value, str):
        return _VAR.sub(_value, value)
    if isinstance(value, (list, tuple)):
        return type(value)(expand(v) for v in value)
    if isinstance(value, dict):
        return {k: expand(v) for k, v in value.items()}
    return value


@dataclass(frozen=True, kw_only=True)
class ServerConfig:
    """What every upstream server config has: its name, its entry as written (the tree's and the cache's form),
    the seconds a call and a start may take (None: the tree's, the pool's), and how its session starts."""

    name: str
    entry: dict[str, Any] = field(compare=False, repr=False)
    timeout: float | None = None
    startup_timeout: float | None = None
    mode: str = "legacy"

    def expanded(self) -> ServerConfig:
        """The config with its `${VAR}`s expanded from the environment now (`UnsetVariable`)."""
        return self

    def target(self, errlog: TextIO, auth: Auth | None = None) -> Transport | Any:
        """What `mcp.Client` connects to: a transport (stdio with stderr to `errlog`; HTTP logged in with `auth`, the
        OAuth provider the caller made of the user's stored login, `oauth.provider`), or an in-process server."""
        raise NotImplementedError


@dataclass(frozen=True, kw_only=True)
class Stdio(ServerConfig):
    command: str
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    inherit: tuple[str, ...] | None = None  # the names it gets from the environment (None: all of it)

    def expanded(self) -> Stdio:
        return dataclasses.replace(
            self, command=expand(self.command), args=expand(self.args), env=expand(dict(self.env)), cwd=expand(self.cwd)
        )

    def target(self, errlog: TextIO, auth: Auth | None = None) -> Transport:
        from mcp import StdioServerParameters

        if sys.platform == "win32":  # process groups are POSIX's: Windows keeps the SDK's transport (a Job Object)
            from mcp.client.stdio import stdio_client
        else:
            from .stdio_client import stdio_client

        config = self.expanded()
        command, *args = guarded([config.command, *config.args])
        inherit = self.inherit
        env = {k: v for k, v in handed().items() if inherit is None or k in inherit} | dict(config.env)
        cwd = os.path.expanduser(config.cwd) if config.cwd else None
        return stdio_client(StdioServerParameters(command=command, args=args, env=env, cwd=cwd), errlog=errlog)


@dataclass(frozen=True, kw_only=True)
class Http(ServerConfig):
    url: str
    headers: Mapping[str, str] = field(default_factory=dict)
    sse: bool = False
    oauth: Mapping[str, Any] = field(default_factory=dict)  # clientId, clientSecret, scope, callbackPort, ...

    def expanded(self) -> Http:
        return dataclasses.replace(self, url=expand(self.url), headers=expand(dict(self.headers)))

    @property
    def login_url(self) -> str | None:
        """The URL an OAuth login is for: streamable HTTP without an `Authorization` header of its own (else None)."""
        if self.sse or any(h.lower() == "authorization" for h in self.headers):
            return None
        return self.url

    def target(self, errlog: TextIO, auth: Auth | None = None) -> Transport:
        import httpx2

        config = self.expanded()
        headers = dict(config.headers) or None
        if self.sse:
            from mcp.client.sse import sse_client

            return sse_client(config.url, headers=headers)
        from mcp.client.streamable_http import streamable_http_client

        timeout = httpx2.Timeout(HTTP_TIMEOUT, read=HTTP_READ_TIMEOUT)  # the SDK's own client's: a stream stays open
        client = httpx2.AsyncClient(headers=headers, auth=auth, timeout=timeout)
        return streamable_http_client(config.url, http_client=client)


HTTP_TIMEOUT, HTTP_READ_TIMEOUT = 30.0, 300.0  # seconds: connecting and writing; reading (a stream may idle)


@dataclass(frozen=True, kw_only=True)
class InProcess(ServerConfig):
    """An SDK `Server` or `MCPServer` object in this process (tests): `mcp.Client` connects to it directly."""

    server: Any

    def target(self, errlog: TextIO, auth: Auth | None = None) -> Any:
        return self.server


def parse(name: str, entry: Any) -> ServerConfig:
    """The typed config of one server entry; `BadConfig` saying what is wrong with a broken one."""
    where = f"upstream server `{name}`"
    if not isinstance(entry, dict):
        raise BadConfig(f"{where}: its configuration must be an object with `command` or `url`, not {entry!r:.60}")

    def number(key: str) -> float | None:
        value = entry.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            raise BadConfig(f"{where}: `{key}` must be a number of seconds above 0, not {value!r:.40}")
        return float(value)

    def strings(key: str, kind: type) -> Any:
        value = entry.get(key, kind())
        items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else None
        if not isinstance(value, kind) or items is None or not all(isinstance(v, str) for _, v in items):
            what = "an object of strings" if kind is dict else "a list of strings"
            raise BadConfig(f"{where}: `{key}` must be {what}, not {value!r:.60}")
        return value

    mode = entry.get("mode", "legacy")
    if mode not in MODES:
        raise BadConfig(f"{where}: `mode` must be one of {', '.join(MODES)}, not {mode!r:.40}")
    common: dict[str, Any] = {
        "name": name,
        "entry": entry,
        "timeout": number("timeout"),
        "startup_timeout": number("startup_timeout"),
        "mode": mode,
    }
    if "server" in entry:
        return InProcess(server=entry["server"], **common)
    if "url" in entry:
        if not isinstance(entry["url"], str) or not entry["url"]:
            raise BadConfig(f"{where}: `url` must be a URL string, not {entry['url']!r:.60}")
        transport = entry.get("transport", "http")
        if transport not in ("http", "sse"):
            raise BadConfig(f"{where}: `transport` must be http or sse, not {transport!r:.40}")
        oauth = entry.get("oauth") or {}
        if not isinstance(oauth, dict):
            raise BadConfig(f"{where}: `oauth` must be an object, not {oauth!r:.60}")
        headers = strings("headers", dict)
        return Http(url=entry["url"], headers=headers, sse=transport == "sse", oauth=oauth, **common)
    command = entry.get("command")
    if not isinstance(command, str) or not command.strip():
        raise BadConfig(f"{where}: needs a `command` (stdio) or a `url` (HTTP)")
    cwd = entry.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise BadConfig(f"{where}: `cwd` must be a folder's path, not {cwd!r:.60}")
    inherit = entry.get("inherit")
    return Stdio(
        command=command,
        args=tuple(strings("args", list)),
        env=strings("env", dict),
        cwd=cwd or None,
        inherit=None if inherit is None else tuple(strings("inherit", list)),
        **common,
    )


def parse_all(entries: Mapping[str, Any]) -> dict[str, ServerConfig]:
    """Every entry of a tree's `upstreams`, typed (`BadConfig` for the first broken one)."""
    return {name: parse(name, entry) for name, entry in entries.items()}
