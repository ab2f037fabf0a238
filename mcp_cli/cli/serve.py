"""`mcp-cli serve`, parsed with argparse so that serving never imports typer (the rest of `mcp-cli` uses it), and
the options for MCP client configs, shared by every `mcp-cli` command that reads a source."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..surfaces import launcher

if TYPE_CHECKING:
    from ..engine.runtime import Runtime
    from ..handlers.upstream import Upstreams
    from ..tree import Tree

TREE_HELP = (
    "A skill folder, an MCP client config (mcpServers JSON, ~/.claude.json, Codex config.toml), "
    "a tree JSON file, or a Python module:attribute holding a Tree."
)
# The options for MCP client configs (ignored for other sources):
# (parameter, flag, metavar, kind: str/int/float/bool/list, default, help, key of `sources.load`).
CONFIG_OPTIONS: list[tuple[str, str, str, type, object, str, str]] = [
    (
        "name",
        "--name",
        "NAME",
        str,
        None,
        "Tool (root) name for a config; default: its one server's name, else "
        "its project folder's (a file named by its user: the file's).",
        "name",
    ),
    (
        "refresh",
        "--refresh",
        "",
        bool,
        False,
        "Ask the upstream servers for their tools again (skip the cache).",
        "refresh",
    ),
    ("server", "--server", "NAME", list, None, "Only this server of the config (repeatable).", "only"),
    ("exclude_server", "--exclude-server", "NAME", list, None, "Leave this server out (repeatable).", "skip"),
    (
        "tool",
        "--tool",
        "PATTERN",
        list,
        None,
        "Only tools matching this pattern, e.g. 'git_*' or 'github/*issue*' (repeatable).",
        "tools",
    ),
    (
        "exclude_tool",
        "--exclude-tool",
        "PATTERN",
        list,
        None,
        "Leave out tools matching this pattern (repeatable).",
        "exclude_tools",
    ),
    (
        "threshold",
        "--threshold",
        "N",
        int,
        None,
        "Split a server with more tools than this into subgroups (default: when its commands' usage lines overflow "
        "its listing).",
        "threshold",
    ),
    (
        "startup_timeout",
        "--startup-timeout",
        "SECONDS",
        float,
        None,
        "How long a server without a startup_timeout of its own may take to list its tools (default "
        "$MCP_CLI_STARTUP_TIMEOUT, else 5 s for serve, 60 s for one-shot commands); slower ones are shown as "
        "unavailable.",
        "startup",
    ),
]
BUDGET_HELP = "Tokens an answer may take (default: the tree's settings, else 8,000); over it, cut with a note."
CONFIG_FLAGS = {flag for _, flag, *_ in CONFIG_OPTIONS}


def config_argv(options: dict[str, Any]) -> list[str]:
    """The flags that give `options` (keyed as CONFIG_OPTIONS' last column) again; defaults and --refresh left out."""
    argv: list[str] = []
    for _, flag, _, kind, default, _, key in CONFIG_OPTIONS:
        value = options.get(key, default)
        if value == default or value is None or key == "refresh":
            continue
        argv += [a for v in value for a in (flag, str(v))] if kind is list else [flag, str(value)]
    return argv


class _LevelFormatter(logging.Formatter):
    """`warning: ...` / `error: ...` for problems; information (such as where a server listens) as it is."""

    def format(self, record: logging.LogRecord) -> str:
        message = super().format(record)
        return message if record.levelno < logging.WARNING else f"{record.levelname.lower()}: {message}"


def setup_logging() -> None:
    """Problems (any library's) as `warning: ...` or `error: ...`; mcp-cli's own information as it is."""
    handler = logging.StreamHandler()  # stderr: on stdio, stdout belongs to the protocol
    handler.setFormatter(_LevelFormatter("%(message)s"))
    logging.basicConfig(level=logging.WARNING, handlers=[handler])  # nothing if logging is set up already
    logging.getLogger("mcp_cli").setLevel(logging.INFO)


def load(source: str, options: dict[str, Any]) -> Tree:
    """The tree of a source, its handler references checked; a clear error and exit status 2 when it is broken."""
    from ..handlers import check
    from ..sources.loader import SourceError
    from ..sources.loader import load as load_source

    try:
        tree = load_source(source, **options)
        check(tree)
    except SourceError as exc:
        print(f"mcp-cli: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    where = str(Path(source).resolve()) if Path(source).exists() else source
    tree.origin = [*config_argv(options), where]
    return tree


def main(argv: list[str]) -> None:
    """`mcp-cli serve TREE [options]`."""
    from ..engine.answers import BUDGET_MIN
    from ..surfaces.mcp_server import serve

    parser = argparse.ArgumentParser(
        prog="mcp-cli serve",
        description="Serve TREE as one MCP tool (stdio unless --http), or as an OpenAPI tool server (--openapi). "
        "Off loopback, HTTP needs a bearer token in $MCP_CLI_TOKEN (or --no-auth).",
    )
    parser.add_argument("tree", metavar="TREE", help=TREE_HELP)
    launcher.http_arguments(parser)
    for param, flag, metavar, kind, default, text, _ in CONFIG_OPTIONS:
        if kind is bool:
            parser.add_argument(flag, dest=param, action="store_true", help=text)
        elif kind is list:
            parser.add_argument(flag, dest=param, metavar=metavar, action="append", help=text)
        else:
            parser.add_argument(flag, dest=param, metavar=metavar, type=kind, default=default, help=text)
    parser.add_argument("--budget", metavar="TOKENS", type=int, help=BUDGET_HELP)
    args = parser.parse_args(argv)
    setup_logging()
    address, checks = launcher.http_checks(parser, args)
    options = {key: getattr(args, param) for param, *_, key in CONFIG_OPTIONS}
    if args.budget is not None and args.budget < BUDGET_MIN:
        parser.error(f"--budget takes a number of tokens, at least {BUDGET_MIN:,}")

    def runtime(pool: Upstreams) -> Runtime:  # in the serving loop: the sessions discovery opens serve the calls
        tree = launcher.host_settings(load(args.tree, {**options, "pool": pool}), args)
        tree.settings.budget = args.budget or tree.settings.budget
        return launcher.serving(parser, tree)

    serve(
        runtime,
        http=address,
        guard=checks,
        stateless=args.stateless,
        surface=args.surface,
        mcp=not args.openapi,
    )
