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
    try:
        address = parse_address(args.http) if args.http else None
    except ValueError as exc:
        parser.error(str(exc))
    serve(Runtime(tree), http=address)


def parse_address(value: str) -> tuple[str, int]:
    """`HOST:PORT` or `PORT` (host 127.0.0.1) for --http."""
    host, _, port = value.rpartition(":")
    if not port.isdigit():
        raise ValueError(f"--http expects HOST:PORT or PORT, got {value!r}")
    return host.strip("[]") or "127.0.0.1", int(port)
