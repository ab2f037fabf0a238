"""The entry point of a built server package: serve a frozen tree, without the `mcp-cli` command's imports."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..engine.runtime import Runtime
    from ..tree import Tree
    from .http_guard import Guard


def main(tree_file: str | Path, argv: list[str] | None = None) -> None:
    """`NAME` serves over stdio; `NAME --http [HOST:]PORT` over streamable HTTP (127.0.0.1 by default), and the
    OpenAPI surface beside it (`--openapi [HOST:]PORT`: that alone), with the same Host/Origin allow-list,
    bearer-token and scopes options as `mcp-cli serve`. It says on stderr which mcp-cli's runtime it carries."""
    from .. import __version__
    from ..tree import Tree
    from .mcp_server import serve

    tree = Tree.load(tree_file)
    parser = argparse.ArgumentParser(prog=tree.name + "-mcp", description=f"Serve {tree.name} as one MCP tool.")
    parser.add_argument("--version", action="version", version=f"%(prog)s, mcp-cli runtime {__version__}")
    http_arguments(parser)
    args = parser.parse_args(argv)
    address, checks = http_checks(parser, args)
    print(f"{parser.prog}: mcp-cli runtime {__version__}", file=sys.stderr)
    serve(
        serving(parser, host_settings(tree, args)),
        http=address,
        guard=checks,
        stateless=args.stateless,
        surface=args.surface,
        mcp=not args.openapi,
    )


def http_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of serving (over HTTP, and the surface), shared by built packages and `mcp-cli serve`."""
    from .http_guard import HELP

    parser.add_argument(
        "--http",
        metavar="HOST:PORT",
        help="serve streamable HTTP at /mcp instead of stdio, and the OpenAPI surface "
        "(GET /openapi.json, POST /run) beside it",
    )
    parser.add_argument(
        "--openapi",
        metavar="HOST:PORT",
        help="serve only the OpenAPI surface (GET /openapi.json, POST /run), for "
        "OpenAPI tool servers such as Open WebUI's",
    )
    parser.add_argument("--allow-host", metavar="HOST", action="append", default=[], help=HELP["allow_host"])
    parser.add_argument("--allow-origin", metavar="ORIGIN", action="append", default=[], help=HELP["allow_origin"])
    parser.add_argument("--token-env", metavar="NAME", help=HELP["token_env"])
    parser.add_argument("--no-auth", action="store_true", help=HELP["no_auth"])
    parser.add_argument("--scopes", metavar="FILE", help=HELP["scopes"])
    parser.add_argument(
        "--stateless",
        action="store_true",
        help="serve every HTTP request on its own, with no session, so that replicas can sit behind any load "
        "balancer (no sticky sessions)",
    )
    parser.add_argument(
        "--surface",
        choices=("tool", "meta"),
        default="tool",
        help="tool: one tool taking argv (default); meta: search_tools, describe_tools and call_tool",
    )
    parser.add_argument(
        "--no-always-load",
        action="store_true",
        help="do not mark the tool to stay loaded (_meta anthropic/alwaysLoad) in hosts that defer MCP tools",
    )
    parser.add_argument(
        "--structured",
        action="store_true",
        help="send each answer as structuredContent too (hosts that get it show their model only that JSON)",
    )
    parser.add_argument(
        "--answers-store",
        metavar="URL",
        help="keep the next parts of cut answers in this Redis or Valkey (redis://HOST:PORT/DB), which --stateless "
        "replicas share (default $MCP_CLI_ANSWERS_STORE, else the tree's settings, else in memory)",
    )


def host_settings(tree: Tree, args: argparse.Namespace) -> Tree:
    """`tree` with the serving options of `args` (--no-always-load, --structured, --answers-store or its variable)
    in its settings."""
    import os
    from dataclasses import replace

    from ..engine.kept import ENV

    store = args.answers_store or os.environ.get(ENV) or tree.settings.answers_store
    settings = replace(
        tree.settings,
        always_load=tree.settings.always_load and not args.no_always_load,
        structured=tree.settings.structured or args.structured,
        answers_store=store,
    )
    return replace(tree, settings=settings)


def serving(parser: argparse.ArgumentParser, tree: Tree) -> Runtime:
    """The runtime that serves `tree`, keeping cut answers where its settings say; a store that cannot be used
    (another kind of URL, no redis package) exits with status 2 saying what to do."""
    from ..engine.kept import redacted, store
    from ..engine.runtime import Runtime

    runtime = Runtime(tree)
    try:
        runtime.kept = store(tree.settings.answers_store, tree.name)
    except ValueError as exc:
        parser.exit(2, f"{parser.prog}: {exc}\n")
    if tree.settings.answers_store:
        logging.getLogger("mcp_cli").info(
            "keeping the next parts of cut answers in %s", redacted(tree.settings.answers_store)
        )
    return runtime


def http_checks(
    parser: argparse.ArgumentParser, args: argparse.Namespace
) -> tuple[tuple[str, int] | None, Guard | None]:
    """The HTTP address (None: stdio) and its guard; a bad address or a refused one exits with status 2."""
    from ..errors import Unsafe
    from ..handlers.processes import private
    from . import scopes
    from .http_guard import guard

    if args.http and args.openapi:
        parser.error("give --http (which serves the OpenAPI surface beside /mcp) or --openapi (it alone), not both")
    flag, value = ("--openapi", args.openapi) if args.openapi else ("--http", args.http)
    try:
        address = parse_address(value, flag) if value else None
    except ValueError as exc:
        parser.error(str(exc))
    if args.stateless and not args.http:
        parser.error("--stateless is for HTTP: give --http [HOST:]PORT too")
    if args.surface != "tool" and args.openapi:
        parser.error("--surface is for MCP clients; --openapi serves one operation: give --http for both")
    try:
        if args.scopes and address is None:
            raise Unsafe(
                "--scopes goes with --http or --openapi: over stdio there are no bearer tokens to tell clients apart"
            )
        loaded = scopes.load(args.scopes) if args.scopes else ()
        checks = guard(
            address,
            allow_hosts=args.allow_host,
            allow_origins=args.allow_origin,
            token_env=args.token_env,
            no_auth=args.no_auth,
            scopes=loaded,
        )
    except Unsafe as exc:
        parser.exit(2, f"{parser.prog}: {exc}\n")
    if address is not None:
        private()  # the tokens in its environment: not for the servers and scripts it starts to read from /proc
    return address, checks


def parse_address(value: str, flag: str) -> tuple[str, int]:
    """`HOST:PORT` or `PORT` (host 127.0.0.1) for --http or --openapi."""
    from ..types import whole

    host, _, port = value.rpartition(":")
    expects = f"{flag} expects HOST:PORT or PORT (0 to 65535), got {value!r}"
    try:
        number = whole(port, 8000)
    except ValueError as exc:
        raise ValueError(f"{expects}; for the port, {exc}") from None
    if not 0 <= number <= 65535:
        raise ValueError(expects)
    return host.strip("[]") or "127.0.0.1", number
