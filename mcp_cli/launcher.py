"""The entry point of a built server package: serve a frozen tree, without the `mcp-cli` command's imports."""

from __future__ import annotations

import argparse
from pathlib import Path


def main(tree_file: str | Path, argv: list[str] | None = None) -> None:
    """`NAME` serves over stdio; `NAME --http [HOST:]PORT` over streamable HTTP (127.0.0.1 by default)."""
    from .runtime import Runtime
    from .server import serve
    from .tree import Tree

    tree = Tree.load(tree_file)
    parser = argparse.ArgumentParser(prog=tree.name + "-mcp", description=f"Serve {tree.name} as one MCP tool.")
    parser.add_argument("--http", metavar="HOST:PORT", help="serve streamable HTTP at /mcp instead of stdio")
    args = parser.parse_args(argv)
    address = None
    if args.http:
        host, _, port = args.http.rpartition(":")
        if not port.isdigit():
            parser.error(f"--http expects HOST:PORT or PORT, got {args.http!r}")
        address = (host or "127.0.0.1", int(port))
    serve(Runtime(tree), http=address)
