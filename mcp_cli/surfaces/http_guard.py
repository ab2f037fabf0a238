"""Who may use an HTTP server: the Host/Origin allow-list, the bearer token and CORS, settled before it listens."""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import logging
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import Unsafe
from ..handlers.processes import withhold
from .scopes import ACCESS

if TYPE_CHECKING:
    from mcp.server.transport_security import TransportSecuritySettings
    from starlette.types import ASGIApp, Receive, Scope, Send

    from .scopes import Scope as TokenScope

log = logging.getLogger("mcp_cli")

TOKEN_ENV = "MCP_CLI_TOKEN"
LOOPBACK = ("127.0.0.1", "localhost", "[::1]")

# The --help of the options, shared by `mcp-cli serve` and a built package's launcher.
HELP = {
    "allow_host": "Over HTTP: also accept requests whose Host is HOST (any port) or HOST:PORT, and Origins on "
    "it (repeatable). '*' accepts any Host and Origin. The address served is always accepted.",
    "allow_origin": "Over HTTP: also accept requests from this browser Origin, e.g. https://app.example.com "
    "(repeatable).",
    "token_env": f"Over HTTP: require 'Authorization: Bearer TOKEN', TOKEN read from this environment variable "
    f"(default: {TOKEN_ENV}, when it is set).",
    "no_auth": "Over HTTP: serve a non-loopback address without a token (anyone who reaches it can run the tree).",
    "scopes": "Over HTTP: a TOML file of [[scope]] tables, each a bearer token (token_env or token_sha256) and the "
    "command paths it may see (paths, globs; read_only); these tokens are then the only ones accepted.",
}


@dataclass(frozen=True)
class Guard:
    """The Host and Origin values accepted (`hosts` None: any) and the bearer token required (None: none), or the
    scopes whose tokens are accepted, each seeing its part of the tree (see `scopes`)."""

    hosts: list[str] | None
    origins: list[str]
    token: str | None
    scopes: tuple[TokenScope, ...] = ()

    def security(self) -> TransportSecuritySettings:
        """The SDK's Host/Origin check (DNS-rebinding protection) for these lists."""
        from mcp.server.transport_security import TransportSecuritySettings

        if self.hosts is None:
            return TransportSecuritySettings(enable_dns_rebinding_protection=False)
        return TransportSecuritySettings(allowed_hosts=self.hosts, allowed_origins=self.origins)

    def wrap(self, app: ASGIApp, views: Mapping[bytes, object] | None = None) -> ASGIApp:
        """`app` behind, outermost first: the Host and Origin check on every route (421, 403); CORS for the accepted
        Origins, so that browser apps there may read the answers (a preflight carries no token); any other OPTIONS
        answered 204 with the methods served (a load balancer's health check: HAProxy's `option httpchk`); the bearer
        check (401) of the token, or of each scope's token (`views`: its digest -> the view it gives a request)."""
        from starlette.middleware.cors import CORSMiddleware

        inner: ASGIApp = app
        if views is not None:
            inner = BearerAuth(app, views)
        elif self.token:
            inner = BearerAuth(app, {hashlib.sha256(self.token.encode()).digest(): None})
        inner = Options(inner)
        ports = [re.escape(o[:-2]) + r":\d+" for o in self.origins if o.endswith(":*")]
        cors = CORSMiddleware(
            inner,
            allow_origins=["*"] if self.hosts is None else [o for o in self.origins if not o.endswith(":*")],
            allow_origin_regex="|".join(ports) or None,
            allow_methods=["GET", "POST", "DELETE"],
            allow_headers=["*"],
            expose_headers=["Mcp-Session-Id"],
        )
        return HostCheck(cors, self.security())


def guard(
    http: tuple[str, int] | None,
    *,
    allow_hosts: Iterable[str] = (),
    allow_origins: Iterable[str] = (),
    token_env: str | None = None,
    no_auth: bool = False,
    scopes: Sequence[TokenScope] = (),
    environ: Mapping[str, str] = os.environ,
) -> Guard | None:
    """The guard for serving at `http` (None for stdio, where these options mean nothing); Unsafe if unsafe. With
    `scopes` (of a scopes file, see `scopes.load`), their tokens are the only ones accepted."""
    allow_hosts, allow_origins = list(allow_hosts or ()), list(allow_origins or ())
    if http is None:
        if allow_hosts or allow_origins or token_env or no_auth or scopes:
            raise Unsafe(
                "--allow-host, --allow-origin, --token-env, --no-auth and --scopes go with --http or --openapi"
            )
        return None
    host, port = http
    local, anywhere = _kind(host)
    if scopes and (token_env or no_auth):
        raise Unsafe("--scopes gives each client its token: drop " + ("--token-env" if token_env else "--no-auth"))
    token = None if scopes else _token(token_env, no_auth, environ)
    where = f"{bracketed(host)}:{port}"
    if not local and token is None and not no_auth and not scopes:
        raise Unsafe(
            f"refusing to serve {where} without a token: set {TOKEN_ENV} (clients send 'Authorization: Bearer "
            "<token>'), or pass --no-auth to let anyone who reaches it in"
        )
    if anywhere and not allow_hosts:
        raise Unsafe(
            f"{where} listens on every address: name the Host clients use with --allow-host HOST (repeatable), "
            "or accept any Host with --allow-host '*'"
        )
    hosts, origins = _allowed(where, local, anywhere, allow_hosts, allow_origins)
    if no_auth and not local:
        log.warning("serving %s with no token (--no-auth): anyone who reaches it can run the tree", where)
    return Guard(hosts, origins, token, tuple(scopes))


def _allowed(
    where: str, local: bool, anywhere: bool, allow_hosts: list[str], allow_origins: list[str]
) -> tuple[list[str] | None, list[str]]:
    """(Host patterns, Origins) accepted: the address served (on every address: the loopback names instead; on
    loopback: both) and what the options add; (None, []) for any."""
    if "*" in allow_hosts:
        return None, []
    loopback = [f"{name}:*" for name in LOOPBACK] + list(LOOPBACK)  # any port, or none (a proxy's health check)
    hosts = ([] if anywhere else [where]) + (loopback if local or anywhere else [])
    origins = [f"http://{h}" for h in hosts]
    for value in allow_hosts:
        named = _host_patterns(value)
        hosts += named
        origins += [f"{scheme}://{h}" for h in named for scheme in ("http", "https")]
    for origin in allow_origins:
        if not origin.startswith(("http://", "https://")) or origin.count("/") != 2:
            raise Unsafe(f"--allow-origin expects SCHEME://HOST[:PORT], e.g. https://app.example.com; got {origin!r}")
        origins.append(origin)
    return hosts, origins


def _kind(host: str) -> tuple[bool, bool]:
    """(loopback, every address) for a host to listen on."""
    if host == "localhost":
        return True, False
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False, False  # a name: whatever it resolves to, not known to be loopback
    return address.is_loopback, address.is_unspecified


def _token(token_env: str | None, no_auth: bool, environ: Mapping[str, str]) -> str | None:
    if no_auth and token_env:
        raise Unsafe("--no-auth and --token-env contradict each other: keep one")
    name = token_env or TOKEN_ENV
    withhold(name)  # the server's token: no child it starts may read it
    token = environ.get(name, "").strip() or None
    if token_env and token is None:
        raise Unsafe(f"--token-env {name}: the environment variable {name} is not set (or empty)")
    if no_auth and token is not None:
        raise Unsafe(f"--no-auth, but {name} is set: unset it, or drop --no-auth to require the token")
    return token


def bracketed(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _host_patterns(value: str) -> list[str]:
    """--allow-host NAME -> NAME and NAME:* (any port); NAME:PORT -> itself. A bare IPv6 address gets brackets."""
    value = value.lower()
    if value.count(":") > 1 and not value.startswith("["):
        value = f"[{value}]"
    has_port = ":" in value and not value.endswith("]")
    name, _, port = value.rpartition(":") if has_port else (value, "", "")
    if "/" in value or not name.strip("[]") or (has_port and not port.isdigit()):
        raise Unsafe(f"--allow-host expects HOST or HOST:PORT (or '*'), got {value!r}")
    return [value] if has_port else [value, f"{value}:*"]


class HostCheck:
    """ASGI middleware: the SDK's Host/Origin check with the guard's lists, for every route (the SDK's own check
    covers only /mcp). The Host is read as HTTP says, whatever its case (`LOCALHOST:8000` is `localhost:8000`); a
    request without one (HTTP/1.0, as HAProxy's health check sends) is taken as sent to the address it reached.
    Both are written so into the request, for the SDK's check of /mcp."""

    def __init__(self, app: ASGIApp, settings: TransportSecuritySettings) -> None:
        from mcp.server.transport_security import TransportSecurityMiddleware

        self.app = app
        self._check = TransportSecurityMiddleware(settings)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            from starlette.requests import Request

            scope = {**scope, "headers": _host_read(scope)}
            refusal = await self._check.validate_request(Request(scope))
            if refusal is not None:
                await refusal(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _host_read(scope: Scope) -> list[tuple[bytes, bytes]]:
    """A request's headers with its Host in lower case, or, without one, the address the request reached."""
    headers = [(k, v.lower() if k == b"host" else v) for k, v in scope["headers"]]
    server = scope.get("server")
    if not any(k == b"host" for k, _ in headers) and server:
        host, port = server[0], server[1]
        headers.append((b"host", f"{bracketed(host) if host else ''}{f':{port}' if port else ''}".encode()))
    return headers


class Options:
    """ASGI middleware: an OPTIONS request that is not a CORS preflight (those are answered before) gets 204 with the
    methods served, token or not: it runs nothing, and a load balancer's health check (HAProxy's `option httpchk`
    sends `OPTIONS /`) sees a server that answers."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "OPTIONS":
            await self.app(scope, receive, send)
            return
        headers = [(b"allow", b"GET, POST, DELETE, OPTIONS"), (b"content-length", b"0")]
        await send({"type": "http.response.start", "status": 204, "headers": headers})
        await send({"type": "http.response.body", "body": b""})


class BearerAuth:
    """ASGI middleware: an HTTP request needs `Authorization: Bearer TOKEN` with a token of `admitted` (SHA-256
    digest -> what it admits), else 401 with a JSON reason. What the token admits, unless None, goes into the
    request's ASGI scope under ACCESS. Digests are compared with `hmac.compare_digest`, each of them: constant time,
    length included."""

    def __init__(self, app: ASGIApp, admitted: Mapping[bytes, object]) -> None:
        self.app = app
        self.admitted = admitted

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":  # the app has no websocket routes (Starlette closes those itself)
            problem, access = self._check(dict(scope["headers"]).get(b"authorization", b""))
            if problem:
                client = (scope.get("client") or ("an unknown address",))[0]
                log.warning("refused a request from %s: %s", client, problem)
                await _unauthorized(send, problem)
                return
            if access is not None:
                scope[ACCESS] = access
        await self.app(scope, receive, send)

    def _check(self, header: bytes) -> tuple[str | None, object]:
        """(what is wrong, None) or (None, what the token admits)."""
        scheme, _, token = header.partition(b" ")
        if scheme.lower() != b"bearer" or not token.strip():
            return "no bearer token: send the header 'Authorization: Bearer <token>'", None
        digest = hashlib.sha256(token.strip()).digest()
        found = [access for known, access in self.admitted.items() if hmac.compare_digest(digest, known)]
        return (None, found[0]) if found else ("wrong bearer token", None)


async def _unauthorized(send: Send, description: str) -> None:
    body = json.dumps({"error": "invalid_token", "error_description": description}).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"www-authenticate", f'Bearer error="invalid_token", error_description="{description}"'.encode()),
    ]
    await send({"type": "http.response.start", "status": 401, "headers": headers})
    await send({"type": "http.response.body", "body": body})
