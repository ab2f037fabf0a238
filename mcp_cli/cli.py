"""The `mcp-cli` command: serve a tree over MCP, run it in a terminal, inspect it."""

from __future__ import annotations

import sys

import typer

from . import __version__

app = typer.Typer(
    name="mcp-cli",
    help="Serve a command tree as one argv-driven MCP tool, or run it in a terminal.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

TREE_HELP = (
    "A skill folder, an MCP client config (mcpServers JSON, ~/.claude.json, Codex config.toml), "
    "a tree JSON file, or a Python module:attribute holding a Tree."
)
# Options for MCP client configs (ignored for other sources), shared by serve, wrap and tokens.
NAME = typer.Option(None, "--name", metavar="NAME", help="Tool (root) name for a config; default from the file name.")
REFRESH = typer.Option(False, "--refresh", help="Ask the upstream servers for their tools again (skip the cache).")
SERVERS = typer.Option(None, "--server", metavar="NAME", help="Only this server of the config (repeatable).")
NOT_SERVERS = typer.Option(None, "--exclude-server", metavar="NAME", help="Leave this server out (repeatable).")
TOOLS = typer.Option(
    None, "--tool", metavar="PATTERN", help="Only tools matching this pattern, e.g. 'git_*' or 'github/*issue*'."
)
NOT_TOOLS = typer.Option(
    None, "--exclude-tool", metavar="PATTERN", help="Leave out tools matching this pattern (repeatable)."
)
THRESHOLD = typer.Option(
    15, "--threshold", metavar="N", help="Split a server with more tools than this into subgroups."
)


def _load(source: str, **options):
    import logging

    from .sources import SourceError, load

    logging.basicConfig(level=logging.WARNING, format="warning: %(message)s")
    try:
        return load(source, **options)
    except SourceError as exc:
        typer.echo(f"mcp-cli: {exc}", err=True)
        raise typer.Exit(2) from None


def _config(name, refresh, servers, not_servers, tools, not_tools, threshold) -> dict:
    return {"name": name, "refresh": refresh, "only": servers, "skip": not_servers, "tools": tools,
            "exclude_tools": not_tools, "threshold": threshold}  # fmt: skip


def _version(value: bool) -> None:
    if value:
        typer.echo(f"mcp-cli {__version__}")
        raise typer.Exit()


@app.callback()
def main_options(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version."),
) -> None:
    """Serve a command tree as one argv-driven MCP tool, or run it in a terminal."""


@app.command()
def serve(
    tree: str = typer.Argument(..., metavar="TREE", help=TREE_HELP),
    http: str | None = typer.Option(
        None, "--http", metavar="HOST:PORT", help="Serve streamable HTTP at /mcp instead of stdio."
    ),
    name: str | None = NAME,
    refresh: bool = REFRESH,
    server: list[str] | None = SERVERS,
    exclude_server: list[str] | None = NOT_SERVERS,
    tool: list[str] | None = TOOLS,
    exclude_tool: list[str] | None = NOT_TOOLS,
    threshold: int = THRESHOLD,
) -> None:
    """Serve TREE as one MCP tool (stdio unless --http)."""
    from .launcher import parse_address
    from .runtime import Runtime
    from .server import serve as run_server

    try:
        address = parse_address(http) if http else None
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    options = _config(name, refresh, server, exclude_server, tool, exclude_tool, threshold)
    run_server(Runtime(_load(tree, **options)), http=address)


@app.command()
def wrap(
    config: str = typer.Argument(..., help="An MCP client config: mcpServers JSON, ~/.claude.json, config.toml."),
    out: str | None = typer.Option(None, "-o", "--out", metavar="DIR", help="Output folder; default ./NAME-mcp."),
    name: str | None = NAME,
    refresh: bool = REFRESH,
    server: list[str] | None = SERVERS,
    exclude_server: list[str] | None = NOT_SERVERS,
    tool: list[str] | None = TOOLS,
    exclude_tool: list[str] | None = NOT_TOOLS,
    threshold: int = THRESHOLD,
) -> None:
    """Build an installable MCP server package that serves a config's servers as one tool."""
    from pathlib import Path

    from .sources import mcp_config

    if not Path(config).is_file() or not mcp_config.looks_like_config(Path(config)):
        typer.echo(f"mcp-cli: {config}: not an MCP client configuration (no mcpServers or mcp_servers)", err=True)
        raise typer.Exit(2)
    tree = _load(config, **_config(name, refresh, server, exclude_server, tool, exclude_tool, threshold))
    _package(tree, out, None)


@app.command(context_settings={"allow_interspersed_args": False, "ignore_unknown_options": True})
def run(
    tree: str = typer.Argument(..., metavar="TREE", help=TREE_HELP),
    argv: list[str] | None = typer.Argument(None, help="The tokens after the tool name."),
) -> None:
    """Run one argv against TREE in this terminal; the exit status mirrors the result."""
    import anyio

    from .runtime import Runtime

    tokens = list(argv or [])
    if tokens[:1] == ["--"]:
        tokens = tokens[1:]
    from .handlers.python import exit_process
    from .result import Result

    loaded = _load(tree)

    async def once() -> Result:
        async with Runtime(loaded) as runtime:
            return await runtime.call(tokens)

    result = anyio.run(once)
    (sys.stdout if result.ok else sys.stderr).write(result.text())
    if result.exit_code is not None:
        exit_process(result.exit_code if 0 <= result.exit_code < 256 else 1)
    exit_process(0 if result.ok else 2 if result.error in ("usage", "not_found", "bad_request") else 1)


@app.command()
def build(
    skill: str = typer.Argument(..., help="A skill folder (with SKILL.md)."),
    out: str | None = typer.Option(None, "-o", "--out", metavar="DIR", help="Output folder; default ./NAME-mcp."),
) -> None:
    """Build an installable MCP server package from a skill folder."""
    from pathlib import Path

    from .sources.skill import is_skill

    if not is_skill(Path(skill)):
        typer.echo(f"mcp-cli: {skill}: not a skill folder (no SKILL.md in it)", err=True)
        raise typer.Exit(2)
    _package(_load(skill), out, Path(skill))


def _package(tree, out, source_dir) -> None:
    from pathlib import Path

    import generators

    target = Path(out or f"{tree.name}-mcp")
    try:
        files = generators.server_package(tree, target, f"mcp-cli-tree>={__version__}", source_dir=source_dir)
    except (FileExistsError, OSError) as exc:
        typer.echo(f"mcp-cli: {exc}", err=True)
        raise typer.Exit(1) from None
    commands = sum(1 for _, node in tree.walk() if node.kind == "command")
    typer.echo(f"built {target}/ ({len(files)} files): tool {tree.name!r}, {commands} commands")
    typer.echo(f"install: pip install {target}    then: claude mcp add {tree.name} -- {tree.name}-mcp")


@app.command()
def tokens(
    source: str = typer.Argument(..., metavar="TREE", help=TREE_HELP),
    name: str | None = NAME,
    refresh: bool = REFRESH,
    server: list[str] | None = SERVERS,
    exclude_server: list[str] | None = NOT_SERVERS,
    tool: list[str] | None = TOOLS,
    exclude_tool: list[str] | None = NOT_TOOLS,
    threshold: int = THRESHOLD,
) -> None:
    """Tokens an agent reads up front (static tool list vs one tool) and per level of help (o200k_base)."""
    from . import tokens as tok

    tree = _load(source, **_config(name, refresh, server, exclude_server, tool, exclude_tool, threshold))
    typer.echo(tok.render(tok.report(tree)), nl=False)


@app.command()
def inspect(tree: str = typer.Argument(..., metavar="TREE", help=TREE_HELP)) -> None:
    """Print the whole tree, one path per line, with one-line summaries."""
    from .help import one_line

    t = _load(tree)
    rows = [(t.name, t.root.summary)] + [(" ".join([t.name, *path]), node.summary) for path, node in t.walk()]
    width = max(len(p) for p, _ in rows)
    for path, summary in rows:
        typer.echo(f"{path.ljust(width)}  {one_line(summary)}".rstrip())


def main() -> None:
    app()
