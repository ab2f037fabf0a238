"""MCP client configurations -> normalised upstream server entries.

Reads an `mcpServers` JSON file (Claude Desktop, Claude Code's `.mcp.json`, Cursor; VS Code's `servers`),
Claude Code's user file `~/.claude.json` (its MCP server entries, top level and per project), and Codex's
`config.toml` (`[mcp_servers.NAME]`). An entry becomes `{"command", "args", "env", "cwd"}` (stdio) or
`{"url", "headers", "transport"}` (streamable HTTP or SSE), plus `timeout` (seconds per call) when set.

A stdio server is started as the config's client starts it: Claude Code, Claude Desktop, Cursor and VS Code give it
the caller's whole environment with the entry's `env` over it; Codex gives it only CODEX_ENV (when set) and the
variables its `env_vars` names, with `env` over them. The Codex rule is kept as `inherit` (the names the server
gets from the environment; no `inherit`: all of it). A relative `cwd` is made absolute against the config's folder.

mcp-cli's own per-server options go in the entry under `"mcp-cli"` (TOML: `[mcp_servers.NAME.mcp-cli]`):
`tools` / `exclude_tools` (name patterns), `groups` ({subgroup: [tool patterns]}), `threshold`, `entities`
({parameter name: entity type}, for what `entities.infer` cannot see).
"""

from __future__ import annotations

import fnmatch
import functools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..compat import toml_loads
from ..errors import SourceError, close_to
from ..handlers.server_config import ServerConfig, parse

_IGNORED = {"description", "alwaysAllow", "autoApprove", "disabledTools", "trust", "envFile", "icon", "name"}
_STDIO = {"command", "args", "env", "cwd", "type", "transport", "timeout"}
_HTTP = {"url", "headers", "type", "transport", "timeout", "oauth"}
_CODEX = {
    "enabled",
    "enabled_tools",
    "disabled_tools",
    "startup_timeout_sec",
    "tool_timeout_sec",
    "http_headers",
    "env_http_headers",
    "bearer_token_env_var",
    "env_vars",
}
OPTION_KEYS = ("tools", "exclude_tools", "groups", "threshold", "startup_timeout", "entities", "protocol")
PROTOCOLS = ("legacy", "auto", "2026-07-28")  # how mcp-cli's session with a server starts (`mcp.Client`'s `mode`)
CONFIG_KEYS = ("mcpServers", "servers", "projects", "mcp_servers")
TREE_KEYS = ("format", "version", "settings", "upstreams", "root")
# What Codex passes a stdio server from its own environment before `env_vars` (codex-rs rmcp-client, Unix).
CODEX_ENV = (
    "HOME",
    "LOGNAME",
    "PATH",
    "SHELL",
    "USER",
    "__CF_USER_TEXT_ENCODING",
    "LANG",
    "LC_ALL",
    "TERM",
    "TMPDIR",
    "TZ",
)


@dataclass
class Server:
    name: str
    config: dict[str, Any]
    options: dict[str, Any] = field(default_factory=dict)
    source: str = ""  # the config file it came from

    @functools.cached_property
    def upstream(self) -> ServerConfig:
        """Its config, typed (made once; `BadConfig` for a broken one, which `read` never gives)."""
        return parse(self.name, self.config)

    def wants(self, tool: str, patterns: list[str], excluded: list[str]) -> bool:
        """Whether a tool passes the include/exclude patterns (matched against `tool` and `server/tool`)."""
        names = (tool, f"{self.name}/{tool}")
        include = patterns + list(self.options.get("tools") or [])
        exclude = excluded + list(self.options.get("exclude_tools") or [])
        if include and not any(fnmatch.fnmatchcase(n, p) for n in names for p in include):
            return False
        return not any(fnmatch.fnmatchcase(n, p) for n in names for p in exclude)


def _entries(path: Path, data: object) -> list[tuple[str, Any]]:
    """(name, raw entry) pairs from any supported file layout."""
    if not isinstance(data, dict):
        raise SourceError(f"{path}: expected a JSON object or TOML table at the top")
    if path.suffix == ".toml":
        table = data.get("mcp_servers")
        if not isinstance(table, dict):
            raise SourceError(f"{path}: no [mcp_servers.NAME] tables (Codex config.toml format)")
        return list(table.items())
    pairs: list[tuple[str, Any]] = []
    for key in ("mcpServers", "servers"):
        if isinstance(data.get(key), dict):
            pairs += list(data[key].items())
    for project in (data.get("projects") or {}).values() if isinstance(data.get("projects"), dict) else []:
        if isinstance(project, dict) and isinstance(project.get("mcpServers"), dict):
            pairs += list(project["mcpServers"].items())
    if not pairs and not any(k in data for k in ("mcpServers", "servers", "projects")):
        raise SourceError(f'{path}: no MCP servers found (expected an "mcpServers" object)')
    return pairs


def _normalise(
    where: str, raw: Any, warnings: list[str], folder: Path, codex: bool
) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """(config, options) for one entry of a config in `folder` (a Codex one: `codex`), or None (with a warning)
    for a disabled or broken one."""
    if not isinstance(raw, dict):
        warnings.append(f"{where}: expected an object with `command` or `url`; skipped")
        return None
    if raw.get("disabled") is True or raw.get("enabled") is False:
        return None
    own = raw.get("mcp-cli")
    options = dict(own) if isinstance(own, dict) else {}
    if raw.get("enabled_tools"):
        options["tools"] = list(options.get("tools") or []) + list(raw["enabled_tools"])
    if raw.get("disabled_tools"):
        options["exclude_tools"] = list(options.get("exclude_tools") or []) + list(raw["disabled_tools"])
    declared = options.get("entities")
    if declared is not None and not (isinstance(declared, dict) and all(isinstance(v, str) for v in declared.values())):
        warnings.append(
            f"{where}: mcp-cli option `entities` must map parameter names to entity types, like "
            '{"ticket_ref": "issue"}; ignored'
        )
        del options["entities"]
    for key in options:
        if key not in OPTION_KEYS:
            warnings.append(f"{where}: unknown mcp-cli option {key!r} ignored (options: {', '.join(OPTION_KEYS)})")
    known = _STDIO | _HTTP | _CODEX | _IGNORED | {"disabled", "mcp-cli"}
    for key in raw:
        if key not in known:
            warnings.append(f"{where}: unknown key {key!r} ignored")
    config: dict[str, Any] = {}
    protocol = options.get("protocol", "legacy")
    if protocol not in PROTOCOLS:
        warnings.append(f"{where}: mcp-cli option `protocol` must be one of {', '.join(PROTOCOLS)}; legacy used")
    elif protocol != "legacy":
        config["mode"] = protocol
    timeout = raw.get("tool_timeout_sec", raw.get("timeout"))
    if isinstance(timeout, (int, float)) and not isinstance(timeout, bool) and timeout > 0:
        config["timeout"] = float(timeout)
    startup = raw.get("startup_timeout_sec", options.get("startup_timeout"))
    if isinstance(startup, (int, float)) and not isinstance(startup, bool) and startup > 0:
        config["startup_timeout"] = float(startup)
    if raw.get("url"):
        if not isinstance(raw["url"], str):
            warnings.append(f"{where}: `url` must be a string; skipped")
            return None
        headers = {**(raw.get("headers") or {}), **(raw.get("http_headers") or {})}
        headers.update({h: "${" + str(v) + "}" for h, v in (raw.get("env_http_headers") or {}).items()})
        if raw.get("bearer_token_env_var"):
            headers["Authorization"] = "Bearer ${" + str(raw["bearer_token_env_var"]) + "}"
        kind = str(raw.get("type") or raw.get("transport") or "http").lower()
        config.update({"url": raw["url"], "transport": "sse" if kind == "sse" else "http"})
        if headers:
            config["headers"] = {str(k): str(v) for k, v in headers.items()}
        if isinstance(raw.get("oauth"), dict):  # clientId, clientSecret, scope, callbackPort (handlers/oauth.py)
            config["oauth"] = raw["oauth"]
        return config, options
    command, args, env = raw.get("command"), raw.get("args", []), raw.get("env", {})
    if not isinstance(command, str) or not command.strip():
        warnings.append(f"{where}: needs a `command` (stdio) or a `url` (HTTP); skipped")
        return None
    if not isinstance(args, list) or not all(isinstance(a, (str, int, float)) for a in args):
        warnings.append(f"{where}: `args` must be a list of strings; skipped")
        return None
    if not isinstance(env, dict):
        warnings.append(f"{where}: `env` must be an object of strings; skipped")
        return None
    config.update({"command": command, "args": [str(a) for a in args]})
    if env:
        config["env"] = {str(k): str(v) for k, v in env.items()}
    if raw.get("cwd"):
        cwd = str(raw["cwd"])
        config["cwd"] = cwd if cwd.startswith(("$", "~")) else str(folder / cwd)  # an absolute one stays itself
    if codex:
        config["inherit"] = list(dict.fromkeys([*CODEX_ENV, *_env_vars(where, raw.get("env_vars"), warnings)]))
    return config, options


def _env_vars(where: str, value: Any, warnings: list[str]) -> list[str]:
    """The names in Codex's `env_vars`: strings, or tables `{name, source}` (`source = "remote"` is for Codex's
    remote executors, which mcp-cli does not have: left out with a warning)."""
    names: list[str] = []
    for item in value if isinstance(value, list) else []:
        table = item if isinstance(item, dict) else {"name": item}
        if not isinstance(table.get("name"), str):
            warnings.append(f"{where}: `env_vars` entries are names or {{name, source}} tables; {item!r} ignored")
        elif table.get("source", "local") != "local":
            warnings.append(
                f"{where}: `env_vars` {table['name']!r} has source {table['source']!r}; only local "
                "variables are passed here, so it is left out"
            )
        else:
            names.append(table["name"])
    return names


def read(
    path: str | Path, only: list[str] | None = None, skip: list[str] | None = None
) -> tuple[list[Server], list[str]]:
    """The servers a config file defines (filtered by name), and warnings about what was ignored."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
        data = toml_loads(text) if path.suffix == ".toml" else json.loads(text)
    except OSError as exc:
        raise SourceError(f"{path}: cannot read: {exc.strerror}") from None
    except ValueError as exc:  # JSON and TOML decode errors both are
        raise SourceError(f"{path}: not valid {'TOML' if path.suffix == '.toml' else 'JSON'}: {exc}") from None
    warnings: list[str] = []
    servers: list[Server] = []
    entries = _entries(path, data)
    folder, codex = path.resolve().parent, path.suffix == ".toml"
    defined = list(dict.fromkeys(str(name) for name, _ in entries))
    for name in only or []:
        if name not in defined:
            raise SourceError(f"{path}: no server named {name!r}{_did_you_mean(name, defined)}; {_listing(defined)}")
    for name in skip or []:
        if name not in defined:
            warnings.append(f"{path}: --exclude-server {name!r}: no such server{_did_you_mean(name, defined)}")
    for name, raw in entries:
        if any(s.name == name for s in servers):
            warnings.append(f"{path}: server {name!r} is defined twice; the first one is used")
            continue
        if (only and name not in only) or (skip and name in skip):
            continue
        entry = _normalise(f"{path}: server {name!r}", raw, warnings, folder, codex)
        if entry is not None:
            servers.append(Server(str(name), *entry, source=str(path)))
    for name in only or []:
        if not any(s.name == name for s in servers):
            warnings.append(f"{path}: no usable server named {name!r}")
    return servers, warnings


def _listing(names: list[str]) -> str:
    return f"the file defines {', '.join(repr(n) for n in names)}" if names else "the file defines no servers"


def _did_you_mean(word: str, choices: list[str] | tuple[str, ...]) -> str:
    """` (did you mean 'x'?)` for the closest of `choices`; empty when none is close."""
    close = close_to(word, choices)
    return f" (did you mean {close[0]!r}?)" if close else ""


def looks_like_config(path: Path) -> bool:
    """A file `mcp-cli serve` should read as an MCP client configuration rather than a tree: any `.toml` file
    (so a broken one is reported as TOML), or a JSON file with an `mcpServers`, `servers` or `projects` key."""
    if path.suffix == ".toml":
        return path.is_file()
    try:
        head = json.loads(path.read_text(encoding="utf-8")) if path.suffix == ".json" else None
    except (OSError, ValueError):
        return False
    return isinstance(head, dict) and any(k in head for k in CONFIG_KEYS)


def unknown_keys(data: object) -> str | None:
    """What is wrong with a JSON object that is neither a config nor a tree, or None when it is one of them:
    `unknown top-level key 'mcpservers' (did you mean 'mcpServers'?)`."""
    if not isinstance(data, dict) or "format" in data or any(k in data for k in CONFIG_KEYS):
        return None
    for key in data:
        hint = _did_you_mean(str(key), CONFIG_KEYS + TREE_KEYS)
        if hint:
            return f"unknown top-level key {key!r}{hint}"
    keys = ", ".join(repr(k) for k in data) or "none"
    return (
        f'neither an MCP client config (no "mcpServers" object) nor an mcp-cli tree (no "format": "mcp-cli/tree");'
        f" top-level keys: {keys}"
    )
