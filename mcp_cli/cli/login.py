"""`mcp-cli login` and `logout`: an OAuth login to a streamable-HTTP server of a config (handlers/oauth.py)."""

from __future__ import annotations

import sys
import webbrowser
from collections.abc import Awaitable, Callable
from urllib.parse import urlparse

import anyio
from mcp.client.auth import AuthorizationCodeResult

from ..errors import SourceError
from ..handlers import oauth
from ..handlers.server_config import Http
from ..handlers.upstream import Upstreams
from ..sources import discovery, mcp_config


def server_config(config: str, name: str | None) -> Http:
    """The config of the streamable-HTTP server `name` of a config file (or its only one)."""
    servers, _ = mcp_config.read(config, [name] if name else None)
    remote = [s for s in servers if oauth.server_url(s.upstream.expanded())]
    if name and not remote:
        raise SourceError(
            f"{config}: server {name!r} is not a streamable-HTTP server without an Authorization header of its "
            "own; OAuth logins are for those only"
        )
    if len(remote) != 1:
        names = ", ".join(s.name for s in remote) or "none"
        raise SourceError(f"{config}: name the server to log in to (streamable-HTTP servers: {names})")
    found = remote[0].upstream
    assert isinstance(found, Http)  # what has a login URL
    return found


async def login(config: Http, browser: bool) -> str:
    """Log in to a server (a new authorization even with a stored login); what was logged in to, in one line.
    Its session is opened as every upstream's is (`handlers.upstream`), with this login's OAuth provider.
    The URL opens in the browser (`browser`; else it is printed), and the redirect comes to a listener on
    127.0.0.1 or is pasted on stdin (a browser on another machine), whichever comes first."""
    url = str(oauth.server_url(config.expanded()))
    stored = oauth.TokenFile(url)
    client = await stored.get_client_info()
    registered = [str(u) for u in (client.redirect_uris or [])] if client else []
    port = config.oauth.get("callbackPort") or (urlparse(registered[0]).port if registered else 0)
    redirect_uri, listen = await oauth.callback_listener(int(port or 0))
    stored.forget(client=redirect_uri not in registered)  # a new port needs a new registration

    async def show(authorization_url: str) -> None:
        opened = browser and webbrowser.open(authorization_url)
        how = "Opened the browser at" if opened else "Open this URL in a browser to log in"
        print(f"{how}:\n{authorization_url}", file=sys.stderr, flush=True)
        if not opened:
            print("Then paste the URL the browser was sent to (it may fail to load) here:", file=sys.stderr, flush=True)

    async def wait() -> AuthorizationCodeResult:
        result: list[AuthorizationCodeResult] = []
        async with anyio.create_task_group() as tg:

            async def take(get: Callable[[], Awaitable[AuthorizationCodeResult | None]]) -> None:
                got = await get()
                if got is not None:  # (stdin ended: the listener may still get it)
                    result.append(got)
                    tg.cancel_scope.cancel()

            tg.start_soon(take, listen)
            tg.start_soon(take, lambda: anyio.to_thread.run_sync(_pasted, abandon_on_cancel=True))
        return result[0]

    auth = oauth.provider(config.expanded(), redirect_uri, show, wait)
    async with Upstreams(auth=auth) as pool:
        session = await pool.open(config).session(LOGIN_TIMEOUT)
        tools = await session.list_tools()
    stored.logged_in()  # a daemon that runs this server notices at its next call
    discovery.forget(config.entry)
    return f"logged in to {url} (issuer {stored.issuer() or 'unknown'}); {len(tools.tools)} tools"


LOGIN_TIMEOUT = 600.0  # seconds for the whole login: a person opens the page, signs in, maybe pastes the URL


def _pasted() -> AuthorizationCodeResult | None:
    """The redirect URL pasted on stdin (blank lines skipped); None when stdin ends first."""
    for line in sys.stdin or ():
        if line.strip():
            return oauth.redirect_result(line)
    return None


async def logout(config: Http) -> str:
    """Delete a server's stored tokens and registered client; what was done, in one line."""
    url = str(oauth.server_url(config.expanded()))
    had = oauth.TokenFile(url).forget()
    discovery.forget(config.entry)
    return f"logged out of {url}" if had else f"no login stored for {url}; nothing to do"
