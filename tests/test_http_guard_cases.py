"""HTTP access in-process (`http_guard.py`): which settings a server refuses to listen with, the Host and Origin
values each accepts, and the middleware (Host/Origin check, CORS, bearer token) driven as ASGI; the same against real
server processes is in test_http_security.py."""

import dataclasses
import hashlib
import json
import logging

import pytest

from mcp_cli.surfaces import scopes
from mcp_cli.surfaces.http_guard import ACCESS, BearerAuth, Guard, Unsafe, _host_patterns, _kind, bracketed, guard

TOKEN = "s3cret token"
LOOPBACK = ["127.0.0.1:*", "localhost:*", "[::1]:*", "127.0.0.1", "localhost", "[::1]"]  # any port, or none


@pytest.mark.parametrize(
    ("host", "kind"),
    [
        ("localhost", (True, False)),  # served as loopback: no token needed
        ("127.0.0.1", (True, False)),
        ("127.8.9.1", (True, False)),
        ("::1", (True, False)),
        ("0.0.0.0", (False, True)),
        ("::", (False, True)),
        ("192.0.2.1", (False, False)),
        ("example.com", (False, False)),  # a name: whatever it resolves to, not known to be loopback
        ("localhost.example.com", (False, False)),
    ],
)
def test_loopback_and_every_address(host, kind):
    assert _kind(host) == kind


@pytest.mark.parametrize(
    ("value", "patterns"),
    [
        ("Example.COM", ["example.com", "example.com:*"]),  # any port, lower-cased
        ("example.com:8443", ["example.com:8443"]),
        ("10.0.0.5", ["10.0.0.5", "10.0.0.5:*"]),
        ("::1", ["[::1]", "[::1]:*"]),  # a bare IPv6 address gets brackets
        ("[::1]", ["[::1]", "[::1]:*"]),
        ("[::1]:8080", ["[::1]:8080"]),
    ],
)
def test_allow_host_values(value, patterns):
    assert _host_patterns(value) == patterns


@pytest.mark.parametrize("value", ["example.com:notaport", "example.com:", ":8080", "[]", "", "a/b", "[::1]:x"])
def test_allow_host_values_that_are_refused(value):
    with pytest.raises(Unsafe, match=r"^--allow-host expects HOST or HOST:PORT \(or '\*'\), got "):
        _host_patterns(value)


def test_every_option_has_its_help_and_a_guard_is_settled():
    from mcp_cli.surfaces.http_guard import HELP

    assert sorted(HELP) == ["allow_host", "allow_origin", "no_auth", "scopes", "token_env"]  # as launcher.py reads
    with pytest.raises(dataclasses.FrozenInstanceError):
        guard(("127.0.0.1", 1), environ={}).token = "x"


def test_an_allowed_origin_is_http_or_https():
    origins = ["http://a.test", "https://b.test:8443"]
    assert guard(("127.0.0.1", 1), allow_origins=origins, environ={}).origins[-2:] == origins


def test_bracketed():
    assert (bracketed("::1"), bracketed("127.0.0.1"), bracketed("example.com")) == ("[::1]", "127.0.0.1", "example.com")


@pytest.mark.parametrize(
    ("http", "options", "environ", "hosts", "origins", "token"),
    [
        (
            ("127.0.0.1", 8000),
            {},
            {},
            ["127.0.0.1:8000", *LOOPBACK],
            ["http://127.0.0.1:8000"] + [f"http://{h}" for h in LOOPBACK],
            None,
        ),  # noqa: E501
        (("localhost", 9), {}, {"MCP_CLI_TOKEN": f" {TOKEN}\n"}, ["localhost:9", *LOOPBACK], None, TOKEN),
        (("::1", 8000), {}, {}, ["[::1]:8000", *LOOPBACK], None, None),
        (
            ("0.0.0.0", 80),
            {"allow_hosts": ["h.test"]},
            {"MCP_CLI_TOKEN": TOKEN},
            [*LOOPBACK, "h.test", "h.test:*"],
            [f"http://{h}" for h in LOOPBACK]
            + ["http://h.test", "https://h.test", "http://h.test:*", "https://h.test:*"],
            TOKEN,
        ),
        (
            ("192.0.2.1", 80),
            {"allow_hosts": ["h.test:81"], "allow_origins": ["https://app.test:3000"], "token_env": "MY_TOKEN"},
            {"MY_TOKEN": TOKEN},
            ["192.0.2.1:80", "h.test:81"],
            ["http://192.0.2.1:80", "http://h.test:81", "https://h.test:81", "https://app.test:3000"],
            TOKEN,
        ),
        (("192.0.2.1", 80), {"no_auth": True}, {}, ["192.0.2.1:80"], None, None),
        (
            ("0.0.0.0", 80),
            {"allow_hosts": ["a.test", "*"], "allow_origins": ["https://x.test"], "no_auth": True},
            {},
            None,
            [],
            None,
        ),  # '*': any Host and any Origin
    ],
)
def test_what_a_server_accepts(http, options, environ, hosts, origins, token):
    made = guard(http, environ=environ, **options)
    assert made.hosts == hosts and made.token == token and made.scopes == ()
    if origins is not None:
        assert made.origins == origins
    assert made.origins == [] if hosts is None else made.origins[0] == f"http://{hosts[0]}"


@pytest.mark.parametrize(
    ("http", "options", "environ", "says"),
    [
        (None, {"allow_hosts": ["h"]}, {}, "--allow-host, --allow-origin, --token-env, --no-auth and --scopes go"),
        (None, {"allow_origins": ["https://a.b"]}, {}, "go with --http or --openapi"),
        (None, {"token_env": "T"}, {}, "go with --http or --openapi"),
        (None, {"no_auth": True}, {}, "go with --http or --openapi"),
        (None, {"scopes": ["a scope"]}, {}, "--no-auth and --scopes go with --http or --openapi"),
        (
            ("127.0.0.1", 1),
            {"scopes": ["a scope"], "token_env": "T"},
            {},
            "--scopes gives each client its token: drop --token-env",
        ),
        (("127.0.0.1", 1), {"scopes": ["a scope"], "no_auth": True}, {}, "drop --no-auth"),
        (("192.0.2.1", 80), {}, {}, "refusing to serve 192.0.2.1:80 without a token: set MCP_CLI_TOKEN"),
        (("192.0.2.1", 80), {}, {"MCP_CLI_TOKEN": "  "}, "refusing to serve 192.0.2.1:80 without a token"),
        (("2001:db8::1", 80), {}, {}, "refusing to serve [2001:db8::1]:80 without a token"),
        (("0.0.0.0", 80), {}, {"MCP_CLI_TOKEN": TOKEN}, "0.0.0.0:80 listens on every address: name the Host"),
        (("::", 80), {"no_auth": True}, {}, "[::]:80 listens on every address"),
        (
            ("127.0.0.1", 1),
            {"token_env": "T", "no_auth": True},
            {"T": TOKEN},
            "--no-auth and --token-env contradict each other",
        ),
        (("127.0.0.1", 1), {"token_env": "T"}, {"T": " "}, "--token-env T: the environment variable T is not set"),
        (("127.0.0.1", 1), {"no_auth": True}, {"MCP_CLI_TOKEN": TOKEN}, "--no-auth, but MCP_CLI_TOKEN is set"),
        (("127.0.0.1", 1), {"allow_origins": ["app.test"]}, {}, "--allow-origin expects SCHEME://HOST[:PORT]"),
        (("127.0.0.1", 1), {"allow_origins": ["https://app.test/"]}, {}, "got 'https://app.test/'"),
        (("127.0.0.1", 1), {"allow_origins": ["ftp://app.test"]}, {}, "--allow-origin expects"),
        (("127.0.0.1", 1), {"allow_hosts": ["h:notaport"]}, {}, "got 'h:notaport'"),
    ],
)
def test_settings_a_server_will_not_listen_with(http, options, environ, says):
    with pytest.raises(Unsafe) as err:
        guard(http, environ=environ, **options)
    assert says in str(err.value)


def test_stdio_needs_no_guard_and_no_auth_off_loopback_is_a_warning(caplog):
    assert guard(None, environ={"MCP_CLI_TOKEN": TOKEN}) is None
    with caplog.at_level(logging.WARNING, logger="mcp_cli"):
        guard(("127.0.0.1", 80), no_auth=True, environ={})
        assert caplog.records == []
        guard(("192.0.2.1", 80), no_auth=True, environ={})
    assert [r.getMessage() for r in caplog.records] == [
        "serving 192.0.2.1:80 with no token (--no-auth): anyone who reaches it can run the tree"
    ]


def test_scopes_tokens_are_the_only_ones(tmp_path):
    file = tmp_path / "s.toml"
    file.write_text('[[scope]]\ntoken_env = "A"\npaths = ["x"]\n')
    loaded = scopes.load(file, {"A": "a"})
    made = guard(("192.0.2.1", 80), scopes=loaded, environ={"A": "a", "MCP_CLI_TOKEN": TOKEN})
    assert made.token is None and [s.digest for s in made.scopes] == [hashlib.sha256(b"a").digest()]


async def inner(scope, receive, send):
    """The app behind the guard: 200, with a session header, and what the request's scope held."""
    body = json.dumps({"access": scope.get(ACCESS)}).encode()
    await send({"type": "http.response.start", "status": 200, "headers": [(b"mcp-session-id", b"abc")]})
    await send({"type": "http.response.body", "body": body})


async def request(app, method: str = "POST", client=("192.0.2.9", 5000), **headers: str) -> tuple[int, dict, bytes]:
    scope = {
        "type": "http",
        "method": method,
        "path": "/mcp",
        "raw_path": b"/mcp",
        "query_string": b"",
        "headers": [(k.replace("_", "-").lower().encode(), v.encode()) for k, v in headers.items()],
        "scheme": "http",
        "http_version": "1.1",
        "root_path": "",
        "server": ("127.0.0.1", 8000),
        **({"client": client} if client else {}),
    }
    sent = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)

    await app(scope, receive, send)
    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return start["status"], {k.decode(): v.decode() for k, v in start["headers"]}, body


def wrapped(**options):
    return guard(("127.0.0.1", 8000), environ={"MCP_CLI_TOKEN": TOKEN}, **options).wrap(inner, None)


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"Host": "127.0.0.1:8000", "Authorization": f"Bearer {TOKEN}"}, 200),
        ({"Host": "localhost:1234", "Authorization": f"bearer {TOKEN}"}, 200),  # RFC 6750: the scheme in any case
        ({"Host": "127.0.0.1:8000", "Authorization": f"BEARER   {TOKEN}  "}, 200),  # spaces around the token
        ({"Host": "127.0.0.1:8000", "Authorization": f"Bearer{TOKEN}"}, 401),
        ({"Host": "127.0.0.1:8000", "Authorization": "Bearer wrong"}, 401),
        ({"Host": "127.0.0.1:8000", "Authorization": f"Basic {TOKEN}"}, 401),
        ({"Host": "127.0.0.1:8000", "Authorization": "Bearer "}, 401),
        ({"Host": "127.0.0.1:8000"}, 401),
        ({"Host": "evil.test", "Authorization": f"Bearer {TOKEN}"}, 421),
        ({"Host": "localhost.evil.test", "Authorization": f"Bearer {TOKEN}"}, 421),
        ({"Host": "evil.test:8000", "Authorization": f"Bearer {TOKEN}"}, 421),
        # a loopback Host without a port, or in capitals, is loopback (HTTP reads it in any case); none at all
        # (HTTP/1.0) is the address the request reached (`server`: 127.0.0.1:8000)
        ({"Host": "localhost", "Authorization": f"Bearer {TOKEN}"}, 200),
        ({"Host": "127.0.0.1", "Authorization": f"Bearer {TOKEN}"}, 200),
        ({"Host": "[::1]", "Authorization": f"Bearer {TOKEN}"}, 200),
        ({"Host": "LOCALHOST:8000", "Authorization": f"Bearer {TOKEN}"}, 200),
        ({"Host": "LocalHost", "Authorization": f"Bearer {TOKEN}"}, 200),
        ({"Authorization": f"Bearer {TOKEN}"}, 200),
        ({"Host": "127.0.0.1:8000"}, 401),
        ({"Host": "127.0.0.1:8000", "Origin": "http://evil.test", "Authorization": f"Bearer {TOKEN}"}, 403),
        ({"Host": "127.0.0.1:8000", "Origin": "http://localhost:3000", "Authorization": f"Bearer {TOKEN}"}, 200),
    ],
)
async def test_host_origin_and_token_are_checked_in_that_order(headers, status):
    assert (await request(wrapped(), **headers))[0] == status


@pytest.mark.anyio
async def test_an_options_request_that_is_no_preflight_is_answered_without_a_token():
    """HAProxy's default health check (`option httpchk`): `OPTIONS / HTTP/1.0`, no Host, no token."""
    status, headers, body = await request(wrapped(), "OPTIONS")
    assert (status, headers["allow"], body) == (204, "GET, POST, DELETE, OPTIONS", b"")
    assert (await request(wrapped(), "OPTIONS", Host="evil.test"))[0] == 421  # still checked for its Host


@pytest.mark.anyio
async def test_a_refusal_says_why_in_json_and_in_www_authenticate(caplog):
    with caplog.at_level(logging.WARNING, logger="mcp_cli"):
        status, headers, body = await request(wrapped(), Host="127.0.0.1:8000", Authorization="Bearer wrong")
        await request(wrapped(), client=None, Host="127.0.0.1:8000")
    assert status == 401 and json.loads(body) == {"error": "invalid_token", "error_description": "wrong bearer token"}
    assert headers["content-type"] == "application/json" and headers["content-length"] == str(len(body))
    assert headers["www-authenticate"] == 'Bearer error="invalid_token", error_description="wrong bearer token"'
    assert [r.getMessage() for r in caplog.records] == [
        "refused a request from 192.0.2.9: wrong bearer token",
        "refused a request from an unknown address: no bearer token: send the header 'Authorization: Bearer <token>'",
    ]
    missing = json.loads((await request(wrapped(), Host="127.0.0.1:8000"))[2])["error_description"]
    assert missing == "no bearer token: send the header 'Authorization: Bearer <token>'"


@pytest.mark.anyio
async def test_cors_lets_accepted_origins_read_answers_and_the_session_header():
    app = wrapped(allow_origins=["https://app.test"])
    preflight = {
        "Host": "127.0.0.1:8000",
        "Access_Control_Request_Method": "DELETE",
        "Access_Control_Request_Headers": "authorization, mcp-session-id, mcp-protocol-version",
    }
    status, headers, _ = await request(app, "OPTIONS", Origin="https://app.test", **preflight)  # no token needed
    assert status == 200 and headers["access-control-allow-origin"] == "https://app.test"
    assert headers["access-control-allow-methods"] == "GET, POST, DELETE"
    assert headers["access-control-allow-headers"] == preflight["Access_Control_Request_Headers"]
    status, headers, _ = await request(app, "OPTIONS", Origin="http://localhost:5173", **preflight)  # any port
    assert status == 200 and headers["access-control-allow-origin"] == "http://localhost:5173"
    assert (await request(app, "OPTIONS", Origin="http://localhostx:5173", **preflight))[0] == 403
    status, headers, _ = await request(
        app, Host="127.0.0.1:8000", Origin="https://app.test", Authorization=f"Bearer {TOKEN}"
    )
    assert status == 200 and headers["access-control-allow-origin"] == "https://app.test"
    assert headers["access-control-expose-headers"].lower() == "mcp-session-id"


@pytest.mark.anyio
async def test_allow_host_star_accepts_any_host_and_any_origin():
    app = guard(("0.0.0.0", 80), allow_hosts=["*"], environ={"MCP_CLI_TOKEN": TOKEN}).wrap(inner, None)
    status, headers, _ = await request(
        app, Host="anything.test", Origin="https://elsewhere.test", Authorization=f"Bearer {TOKEN}"
    )
    assert status == 200 and headers["access-control-allow-origin"] == "*"
    status, headers, _ = await request(
        app, "OPTIONS", Host="x", Origin="https://elsewhere.test", Access_Control_Request_Method="GET"
    )
    assert status == 200 and headers["access-control-allow-origin"] == "*"
    assert Guard(None, [], None).security().enable_dns_rebinding_protection is False


@pytest.mark.anyio
async def test_without_a_token_anything_reaching_the_address_is_served():
    app = guard(("127.0.0.1", 8000), environ={}).wrap(inner, None)
    status, _, body = await request(app, Host="127.0.0.1:8000")
    assert status == 200 and json.loads(body) == {"access": None}


@pytest.mark.anyio
async def test_what_a_token_admits_goes_into_the_request():
    app = BearerAuth(inner, {hashlib.sha256(b"a").digest(): "view a", hashlib.sha256(b"b").digest(): None})
    assert json.loads((await request(app, Authorization="Bearer a"))[2]) == {"access": "view a"}
    assert json.loads((await request(app, Authorization="Bearer b"))[2]) == {"access": None}
    assert (await request(app, Authorization="Bearer c"))[0] == 401
    seen = []

    async def lifespan(scope, receive, send):
        seen.append(scope["type"])

    await BearerAuth(lifespan, {})({"type": "lifespan"}, None, None)  # only HTTP requests need a token
    await Guard(["h"], [], TOKEN).wrap(lifespan, None)({"type": "lifespan"}, None, None)
    assert seen == ["lifespan", "lifespan"]
