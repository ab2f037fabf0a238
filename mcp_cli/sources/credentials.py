"""Keep credentials out of what `mcp-cli wrap` writes: literal secrets in upstream configs become `${VAR}`.

A wrapped package freezes its upstream server configs. A literal `env` value such as `API_KEY=sk-...`, an
`Authorization: Bearer ...` header, a `--token ...` argument or a password in a URL would be copied into the
package verbatim; `externalise` replaces each with a `${VAR}` reference (expanded from the environment when the
upstream starts, `upstream.expand`) and says which variable to set.

What counts as a secret: a literal (no `${...}` in it) under a key that names a credential (KEY, TOKEN, SECRET,
PASSWORD, PAT, AUTH, COOKIE, SESSION, ... as a word of the name), or a value that looks like one whatever its
key (a known token prefix such as `sk-`, `ghp_`, `xoxb-`, `AKIA`; a JWT; a long run of mixed letters and
digits). `NODE_ENV=production`, `LOG_LEVEL=debug`, paths, numbers and flags stay as they are.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from typing import Any

from ..text import words

CREDENTIAL_WORDS = {
    "key",
    "apikey",
    "token",
    "secret",
    "password",
    "passwd",
    "pwd",
    "pass",
    "passphrase",
    "pat",
    "auth",
    "authorization",
    "credential",
    "credentials",
    "cookie",
    "session",
    "bearer",
    "jwt",
    "signature",
    "private",
    "accesskey",
    "secretkey",
    "privatekey",
    "authtoken",
    "accesstoken",
    "refreshtoken",
    "clientsecret",
}
# a word of the name that says the value is about a credential, not the credential itself
NOT_SECRET_WORDS = {
    "path",
    "file",
    "dir",
    "folder",
    "url",
    "uri",
    "endpoint",
    "host",
    "port",
    "mode",
    "type",
    "kind",
    "timeout",
    "ttl",
    "expiry",
    "expires",
    "limit",
    "limits",
    "max",
    "min",
    "size",
    "length",
    "count",
    "enabled",
    "disabled",
    "name",
    "header",
    "region",
    "scope",
    "scopes",
    "method",
    "provider",
    "version",
    "format",
    "id",
    "user",
    "username",
    "env",
    "var",
}
SECRET_PREFIXES = (
    "sk-",
    "sk_live_",
    "sk_test_",
    "rk_live_",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "xoxb-",
    "xoxp-",
    "xoxa-",
    "xoxs-",
    "xoxe-",
    "xapp-",
    "AKIA",
    "ASIA",
    "AIza",
    "hf_",
    "npm_",
    "pypi-",
    "shpat_",
    "shpss_",
    "SG.",
    "dop_v1_",
    "lin_api_",
    "ntn_",
    "secret_",
    "figd_",
    "pplx-",
    "gsk_",
    "r8_",
)
_REFERENCE = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*(?::-[^}]*)?\}")
_SCHEME = re.compile(r"^(Bearer|Basic|Token|Bot|Digest|Key|ApiKey)(\s+)(\S+)$", re.IGNORECASE)
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_JWT = re.compile(r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*")
_TOKENISH = re.compile(r"[A-Za-z0-9_\-+/=]{20,}")
_USERINFO = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://[^/:@\s]+:)([^/@\s]+)(@)")
_QUERY = re.compile(r"([?&])([^=&#]+)=([^&#]*)")


def names_a_credential(name: str) -> bool:
    parts = words(name)
    return bool(CREDENTIAL_WORDS.intersection(parts)) and not NOT_SECRET_WORDS.intersection(parts)


def known_token(value: str) -> bool:
    """A value in a well-known credential format: a vendor's token prefix, a JWT, a URL with a password."""
    value = value.strip()
    if value.startswith(SECRET_PREFIXES) and len(value) >= 12 and " " not in value:
        return True
    return bool(_JWT.fullmatch(value) or _USERINFO.match(value))


def looks_like_secret(value: str) -> bool:
    """A value that is a credential whatever it is called: a `known_token`, or a long run of mixed letters and
    digits (not a UUID, a path or a flag)."""
    value = value.strip()
    if known_token(value):
        return True
    if not _TOKENISH.fullmatch(value) or value.startswith(("-", "/", "~")) or _UUID.fullmatch(value):
        return False
    letters, digits = sum(c.isalpha() for c in value), sum(c.isdigit() for c in value)
    switches = sum(
        1 for a, b in zip(value, value[1:], strict=False) if a.isalpha() != b.isalpha() and (a + b).isalnum()
    )
    return letters >= 4 and digits >= 4 and switches >= 6


def _plain(value: str) -> bool:
    """A value that is no secret even under a credential's name: empty, a flag, a number, a path."""
    v = value.strip().lower()
    if v in {"", "true", "false", "yes", "no", "on", "off", "none", "null", "0", "1"}:
        return True
    if re.fullmatch(r"[0-9.]+", v) or v.startswith(("/", "~", "./", "../")) or re.match(r"^[a-z]:\\", v):
        return True
    return False


def _variable(*parts: str) -> str:
    """An environment variable name from a server's and a key's names: `github`, `X-API-Key` -> GITHUB_X_API_KEY."""
    name = "_".join(p for p in (re.sub(r"[^A-Za-z0-9]+", "_", part).strip("_") for part in parts) if p).upper()
    return name if re.match(r"[A-Za-z_]", name) else "_" + name


class _Variables:
    """Variable names handed out so far, each for one secret value: the same secret shares a name, a different
    secret under a taken name gets the server's name in front (then a number)."""

    def __init__(self) -> None:
        self.values: dict[str, str] = {}

    def claim(self, value: str, *names: str) -> str:
        """The first of `names` that is free or already holds `value`, else the last one numbered."""
        numbered = (f"{names[-1]}_{n}" for n in range(2, len(self.values) + 3))
        name = next(n for n in (*names, *numbered) if self.values.get(n, value) == value)
        self.values[name] = value
        return name


Replace = Callable[[str, str, str, str], str]  # (server, where, preferred variable, secret) -> its `${VAR}`


def externalise(upstreams: dict[str, dict[str, Any]]) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """Upstream configs with every literal secret replaced by a `${VAR}` reference, and one warning per
    replacement naming the server, the key and the variable to set."""
    out = copy.deepcopy(upstreams)
    variables = _Variables()
    warnings: list[str] = []

    def replace(server: str, where: str, preferred: str, value: str) -> str:
        own = preferred.upper().startswith(_variable(server))  # already named after the server
        var = variables.claim(value, preferred, *([] if own else [_variable(server, preferred)]))
        warnings.append(
            f"server {server!r}: {where} held a literal secret; the package reads it from ${{{var}}} instead "
            f"(set {var} in the environment the wrapped server runs in)"
        )
        return "${" + var + "}"

    for server, config in out.items():
        env = config.get("env")
        if isinstance(env, dict):
            for key, value in env.items():
                if _secret(key, value):
                    var = key if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key) else _variable(key)
                    env[key] = replace(server, f"env {key}", var, value)
        headers = config.get("headers")
        if isinstance(headers, dict):
            for key, value in headers.items():
                headers[key] = _header(server, key, value, replace, f"header {key}")
        oauth = config.get("oauth")
        if isinstance(oauth, dict):  # a client secret of the config's own OAuth client
            for key, value in oauth.items():
                if _secret(key, value):
                    oauth[key] = replace(server, f"oauth {key}", _variable(server, key), value)
        if isinstance(config.get("url"), str):
            config["url"] = _url(server, config["url"], replace)
        if isinstance(config.get("args"), list):
            config["args"] = _args(server, config["args"], replace)
    return out, warnings


def _secret(key: str, value: object) -> bool:
    if not isinstance(value, str) or _REFERENCE.search(value):
        return False
    return (names_a_credential(key) and not _plain(value)) or looks_like_secret(value)


def _header(server: str, key: str, value: object, replace: Replace, where: str) -> object:
    """`Authorization: Bearer abc` -> `Bearer ${SERVER_AUTHORIZATION}`: the scheme stays, the credential goes."""
    if not isinstance(value, str) or not _secret(key, value):
        return value
    var = _variable(server, key)
    scheme = _SCHEME.match(value.strip())
    if scheme:
        return f"{scheme[1]}{scheme[2]}{replace(server, where, var, scheme[3])}"
    return replace(server, where, var, value)


def _url(server: str, url: str, replace: Replace) -> str:
    """A password in `scheme://user:password@host` and credential query parameters (`?api_key=...`)."""
    if _REFERENCE.search(url):
        return url
    userinfo = _USERINFO.match(url)
    if userinfo:
        secret = replace(server, "the URL's password", _variable(server, "password"), userinfo[2])
        url = f"{userinfo[1]}{secret}{userinfo[3]}{url[userinfo.end() :]}"

    def param(m: re.Match[str]) -> str:
        if not m[3] or _REFERENCE.search(m[3]) or not (names_a_credential(m[2]) or looks_like_secret(m[3])):
            return m[0]
        return f"{m[1]}{m[2]}={replace(server, f'URL parameter {m[2]}', _variable(server, m[2]), m[3])}"

    return _QUERY.sub(param, url)


def _args(server: str, args: list[Any], replace: Replace) -> list[Any]:
    """`--api-key VALUE`, `--token=VALUE`, `--header 'Authorization: Bearer VALUE'`, and a value in a known token
    format wherever it is."""
    out: list[Any] = []
    for i, arg in enumerate(args):
        if not isinstance(arg, str) or _REFERENCE.search(arg):
            out.append(arg)
            continue
        previous = args[i - 1] if i and isinstance(args[i - 1], str) else ""
        flag, eq, value = arg.partition("=")
        header, colon, header_value = arg.partition(":")
        if arg.startswith("-") and eq and names_a_credential(flag) and not _plain(value):
            out.append(f"{flag}={replace(server, f'argument {flag}', _variable(server, flag), value)}")
        elif previous.startswith("-") and "=" not in previous and names_a_credential(previous) and not _plain(arg):
            out.append(replace(server, f"argument {previous}", _variable(server, previous), arg))
        elif colon and re.fullmatch(r"[A-Za-z0-9-]+", header) and not header_value.startswith("//"):
            fixed = _header(server, header, header_value.strip(), replace, f"the {header} header in its arguments")
            out.append(arg if fixed == header_value.strip() else f"{header}: {fixed}")
        elif known_token(arg):  # not any long random-looking run: commit hashes and ids are common arguments
            out.append(replace(server, f"argument {i + 1}", _variable(server, "token"), arg))
        else:
            out.append(arg)
    return out
