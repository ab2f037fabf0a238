"""OAuth to streamable-HTTP upstreams: the SDK's `OAuthClientProvider` with tokens in a per-user file and a
cross-process lock around refresh.

The SDK does discovery (RFC 9728, RFC 8414), registration (a Client ID Metadata Document URL when the server
supports it, dynamic registration otherwise, or the config's `oauth.clientId`), authorization code with PKCE, the
RFC 9207 `iss` check and refresh. This module adds what a command-line tool needs on top: tokens that outlive the
process (one 0600 file per server URL, in a 0700 folder), the issuer's metadata kept beside them so a later process
refreshes at the right endpoint, and an exclusive file lock around each refresh, taken before the store is read
again, so that concurrent mcp-cli processes never send the same (rotated) refresh token twice. Outside
`mcp-cli login` nothing interactive ever starts: a server that wants a login fails with `LoginRequired`.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sys
import tempfile
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlparse

import anyio
import platformdirs
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthMetadata, OAuthToken

from .server_config import Http, ServerConfig

if TYPE_CHECKING:
    import httpx2

ENV = "MCP_CLI_OAUTH_DIR"


class LoginRequired(Exception):
    """The server wants an OAuth login, and this run may not start one."""


def token_dir() -> Path:
    """Where tokens live: `MCP_CLI_OAUTH_DIR`, else `oauth/` in the platform's user data folder."""
    return Path(os.environ.get(ENV) or Path(platformdirs.user_data_dir("mcp-cli", appauthor=False)) / "oauth")


def server_url(config: ServerConfig) -> str | None:
    """The URL of a server config OAuth applies to: streamable HTTP without an `Authorization` header of its own."""
    return config.login_url if isinstance(config, Http) else None


class TokenFile:
    """The SDK's TokenStorage for one server URL: a JSON file only the user can read, and its lock file."""

    def __init__(self, url: str, client_id: str | None = None, client_secret: str | None = None) -> None:
        key = hashlib.sha256(url.encode()).hexdigest()[:32]
        self.url, self.path, self.lock_path = url, token_dir() / f"{key}.json", token_dir() / f"{key}.lock"
        self.client_id, self.client_secret = client_id, client_secret
        self.metadata: OAuthMetadata | None = None  # the issuer's metadata, written with the tokens

    def read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) and data.get("server_url") == self.url else {}

    def _write(self, **changes: Any) -> None:
        data = {**self.read(), "server_url": self.url, **changes}
        token_dir().mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=token_dir(), suffix=".tmp")  # mode 0600
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(data, out)
        os.replace(tmp, self.path)

    def expires_at(self) -> float | None:
        value = self.read().get("expires_at")
        return float(value) if isinstance(value, (int, float)) else None

    def issuer(self) -> str | None:
        return (self.read().get("metadata") or {}).get("issuer")

    def stored_metadata(self) -> OAuthMetadata | None:
        raw = self.read().get("metadata")
        return OAuthMetadata.model_validate(raw) if raw else None

    async def get_tokens(self) -> OAuthToken | None:
        raw = self.read().get("tokens")
        return OAuthToken.model_validate(raw) if raw else None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        expires = time.time() + int(tokens.expires_in) if tokens.expires_in is not None else None
        metadata = self.metadata.model_dump(mode="json", exclude_none=True) if self.metadata else None
        self._write(tokens=tokens.model_dump(mode="json", exclude_none=True), expires_at=expires, metadata=metadata)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        if self.client_id:  # the config's own client id
            method = "client_secret_post" if self.client_secret else "none"
            return OAuthClientInformationFull(
                client_id=self.client_id,
                client_secret=self.client_secret,
                token_endpoint_auth_method=method,
                redirect_uris=None,
            )
        raw = self.read().get("client")
        return OAuthClientInformationFull.model_validate(raw) if raw else None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        if not self.client_id:
            self._write(client=client_info.model_dump(mode="json", exclude_none=True))

    def login(self) -> tuple[bool, float | None]:
        """What tells one stored login from another: whether it holds tokens, and when `mcp-cli login` got them (a
        refresh changes neither). A running daemon compares it between calls."""
        data = self.read()
        stamp = data.get("login")
        return bool(data.get("tokens")), float(stamp) if isinstance(stamp, (int, float)) else None

    def logged_in(self) -> None:
        """Note that `mcp-cli login` got the tokens stored now (see `login`)."""
        self._write(login=time.time())

    def forget(self, client: bool = True) -> bool:
        """Delete the tokens (and the registered client); whether there were any."""
        data = self.read()
        if client:
            self.path.unlink(missing_ok=True)
        elif data:
            self._write(tokens=None, expires_at=None)
        return bool(data.get("tokens"))

    async def acquire(self) -> int:
        """Take the exclusive cross-process lock (waiting on a thread); the descriptor to `release`."""
        token_dir().mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        await anyio.to_thread.run_sync(_lock, fd)
        return fd

    @staticmethod
    def release(fd: int) -> None:
        os.close(fd)  # closing the descriptor ends its lock


def _lock(fd: int) -> None:
    if sys.platform == "win32":
        import msvcrt

        while True:
            try:
                msvcrt.locking(fd, msvcrt.LK_LOCK, 1)
                return
            except OSError:  # LK_LOCK gives up after 10 s; a refresh may take longer
                continue
    else:
        import fcntl

        fcntl.flock(fd, fcntl.LOCK_EX)


class Provider(OAuthClientProvider):
    """`OAuthClientProvider` whose stored state outlives the process and whose refreshes are serialised across
    processes. Without `interactive` (any run but `mcp-cli login`) a 401 raises `LoginRequired` at once."""

    def __init__(self, metadata: OAuthClientMetadata, storage: TokenFile, interactive: bool, **options: Any) -> None:
        super().__init__(storage.url, metadata, storage, **options)
        self.storage, self.interactive = storage, interactive

    async def _initialize(self) -> None:
        await super()._initialize()
        self.context.token_expiry_time = self.storage.expires_at()
        self.context.oauth_metadata = self.context.oauth_metadata or self.storage.stored_metadata()

    async def _handle_token_response(self, response: httpx2.Response) -> None:
        self.storage.metadata = self.context.oauth_metadata
        await super()._handle_token_response(response)

    async def _handle_refresh_response(self, response: httpx2.Response) -> bool:
        self.storage.metadata = self.context.oauth_metadata
        return await super()._handle_refresh_response(response)

    async def _auth_flow(self, request: httpx2.Request) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        """The SDK's flow, with a refresh due taken under the cross-process lock after reading the store again (a
        token another process got meanwhile is used as it is), and an access token refused before its expiry
        refreshed once before a login is asked for."""
        refused: str | None = None
        while True:
            async with self.context.lock:
                if not self._initialized:
                    await self._initialize()
                stale = (refused is not None or not self.context.is_token_valid()) and self.context.can_refresh_token()
            lock = await self.storage.acquire() if stale else None
            flow = super()._auth_flow(request)
            try:
                if lock is not None:
                    async with self.context.lock:
                        await self._initialize()  # another process may have refreshed while this one waited
                        if self.context.current_tokens and self.context.current_tokens.access_token == refused:
                            self.context.token_expiry_time = 1.0  # still the refused one: refresh it (0 is "never")
                outgoing = await flow.__anext__()
                while True:
                    response = yield outgoing
                    if outgoing is request and response.status_code == 401:
                        sent = request.headers.get("Authorization", "").removeprefix("Bearer ")
                        if refused is None and sent and self.context.can_refresh_token():
                            refused = sent
                            break
                        if not self.interactive:
                            raise LoginRequired(
                                f"{self.context.server_url} needs an OAuth login: run `mcp-cli login CONFIG SERVER`"
                            )
                    try:
                        outgoing = await flow.asend(response)
                    except StopAsyncIteration:
                        return
                    finally:  # the first exchange (the refresh, if one was due) is over: others may go on
                        if lock is not None:
                            self.storage.release(lock)
                            lock = None
            finally:
                if lock is not None:
                    self.storage.release(lock)
                await flow.aclose()


async def _no_login(url: str) -> None:
    raise LoginRequired("the server needs an OAuth login")


def provider(
    config: Http,
    redirect_uri: str = "http://127.0.0.1/callback",
    redirect: Callable[[str], Awaitable[None]] | None = None,
    callback: Callable[[], Awaitable[AuthorizationCodeResult]] | None = None,
) -> Provider | None:
    """The OAuth provider for a config OAuth applies to (else None). Interactive only with `redirect` and `callback`
    (`mcp-cli login`). The config's `oauth` object may give `clientId` (and `clientSecret`), `scope` and
    `clientMetadataUrl` (an HTTPS Client ID Metadata Document, used where the server supports them)."""
    url = server_url(config)
    if url is None:
        return None
    options = config.oauth

    def option(*names: str) -> str | None:
        return next((str(options[n]) for n in names if options.get(n)), None)

    scope = option("scope", "scopes")
    metadata = OAuthClientMetadata(
        client_name="mcp-cli",
        redirect_uris=[redirect_uri],  # type: ignore[list-item]  # pydantic validates the string
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",
        scope=scope,
    )
    storage = TokenFile(url, option("clientId", "client_id"), option("clientSecret", "client_secret"))
    return Provider(
        metadata,
        storage,
        redirect is not None and callback is not None,
        redirect_handler=redirect or _no_login,
        callback_handler=callback,
        client_metadata_url=option("clientMetadataUrl", "client_metadata_url"),
    )


def redirect_result(url: str) -> AuthorizationCodeResult:
    """The code, state and issuer (RFC 9207) of the redirect URL the authorization server sent the browser to."""
    query = {k: v[0] for k, v in parse_qs(urlparse(url.strip()).query).items()}
    if "error" in query:
        raise LoginRequired(f"the authorization server refused: {query.get('error_description') or query['error']}")
    if not query.get("code"):
        raise LoginRequired(f"not a redirect URL with a `code` in it: {url.strip()[:80]!r}")
    return AuthorizationCodeResult(code=query["code"], state=query.get("state"), iss=query.get("iss"))


async def callback_listener(port: int = 0) -> tuple[str, Callable[[], Awaitable[AuthorizationCodeResult]]]:
    """A redirect listener on 127.0.0.1 (`port`, or any free one): its redirect URI, and a function that waits for
    the browser's one redirect to it and answers the page."""
    from anyio.abc import SocketAttribute, SocketListener

    try:
        listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=port)
    except OSError:
        listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    redirect_uri = f"http://127.0.0.1:{listener.extra(SocketAttribute.local_port)}/callback"

    async def wait() -> AuthorizationCodeResult:
        async with listener:
            socket = listener.listeners[0]
            assert isinstance(socket, SocketListener)
            while True:
                stream = await socket.accept()
                async with stream:
                    head = b""
                    while b"\r\n" not in head and len(head) < 65536:
                        head += await stream.receive()
                    target = head.split(b" ")[1].decode("latin-1") if head.count(b" ") >= 2 else ""
                    if not target.startswith("/callback"):
                        await stream.send(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                        continue
                    page = b"mcp-cli: login received; you can close this window.\n"
                    await stream.send(
                        b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n"
                        b"Content-Length: %d\r\n\r\n%s" % (len(page), page)
                    )
                    return redirect_result(target)

    return redirect_uri, wait


class _Quiet(logging.Filter):
    """The SDK logs a failed OAuth flow with a traceback, then raises; the caller tells the error in one line."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.exc_info is None


logging.getLogger("mcp.client.auth.oauth2").addFilter(_Quiet())
