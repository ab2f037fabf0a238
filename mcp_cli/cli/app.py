"""The `mcp-cli` command: serve a tree over MCP, run it in a terminal, inspect it, register it with a client."""

from __future__ import annotations

import functools
import inspect as pyinspect
import logging
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import typer

from .. import __version__
from . import daemon as daemons
from . import serve as serving

if TYPE_CHECKING:
    from pathlib import Path

    from ..handlers.server_config import Http
    from ..tree import Tree

app = typer.Typer(
    name="mcp-cli",
    help="Serve a command tree as one argv-driven MCP tool, or run it in a terminal.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _annotation(kind: type) -> object:
    """What typer reads an option of `kind` as: optional (a list repeatable), else as it is."""
    return {list: list[str] | None, str: str | None, float: float | None}.get(kind, kind)


# The options for MCP client configs, as typer options (see serving.CONFIG_OPTIONS): (parameter, annotation, option,
# key).
CONFIG_OPTIONS: list[tuple[str, object, object, str]] = [
    (param, _annotation(kind), typer.Option(default, flag, help=text, metavar=metavar or None), key)
    for param, flag, metavar, kind, default, text, key in serving.CONFIG_OPTIONS
]


def config_options(command: Callable[..., None]) -> Callable[..., None]:
    """Give a command the options for MCP client configs (after its own parameters). The command takes them as
    one keyword argument, `options`: a dict of `sources.load` keyword arguments."""
    own = pyinspect.signature(command, eval_str=True)
    added = [
        pyinspect.Parameter(param, pyinspect.Parameter.KEYWORD_ONLY, default=option, annotation=kind)
        for param, kind, option, _ in CONFIG_OPTIONS
    ]

    @functools.wraps(command)
    def with_options(*args: object, **kwargs: object) -> None:
        options = {key: kwargs.pop(param) for param, _, _, key in CONFIG_OPTIONS}
        command(*args, options=options, **kwargs)

    params = [p for p in own.parameters.values() if p.name != "options"]
    # what inspect (so typer) reads as the signature; typeshed declares no __signature__ on functions
    with_options.__signature__ = own.replace(parameters=[*params, *added])  # type: ignore[attr-defined]
    with_options.__annotations__ = {p.name: p.annotation for p in [*params, *added]}
    return with_options


def _load(source: str, **options: Any) -> Tree:
    """The tree for a one-shot command (every command here but `serve`): someone waits for this very answer, so
    MCP servers get the long start-up budget (with a progress line on a terminal), and nothing is asked again
    later."""
    return serving.load(source, {**options, "progress": True, "one_shot": True})


def _version(value: bool) -> None:
    if value:
        typer.echo(f"mcp-cli {__version__}")
        raise typer.Exit()


@app.callback()
def main_options(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version."),
) -> None:
    """Serve a command tree as one argv-driven MCP tool, or run it in a terminal."""
    serving.setup_logging()


@app.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True}, add_help_option=False)
def serve(ctx: typer.Context) -> None:
    """Serve TREE as one MCP tool (stdio unless --http), or as an OpenAPI tool server (--openapi). Off loopback, HTTP
    needs a bearer token in $MCP_CLI_TOKEN (or --no-auth). `mcp-cli serve --help` for its options."""
    serving.main(ctx.args)  # `mcp-cli serve` itself never gets here: __main__ serves without importing typer


@app.command()
@config_options
def wrap(
    config: str = typer.Argument(..., help="An MCP client config: mcpServers JSON, ~/.claude.json, config.toml."),
    out: str | None = typer.Option(None, "-o", "--out", metavar="DIR", help="Output folder; default ./NAME-mcp."),
    *,
    options: dict[str, Any],
) -> None:
    """Build an installable MCP server package that serves a config's servers as one tool. Literal secrets
    in the config (env values, headers, arguments) are written as ${VAR} references, with a warning each."""
    from pathlib import Path

    from ..sources import credentials, mcp_config

    path = Path(config)
    if not path.is_file() or not mcp_config.looks_like_config(path):
        typer.echo(f"mcp-cli: {config}: not an MCP client configuration: {_why_not_config(path)}", err=True)
        raise typer.Exit(2)
    tree = _load(config, **options)
    missing = [" ".join(p) for p, n in tree.walk() if n.kind == "group" and n.summary.startswith("Unavailable")]
    if missing:  # a package is frozen: it would never get the missing servers' tools
        typer.echo(
            f"mcp-cli: not wrapping while {', '.join(missing)} could not list its tools: do what the "
            "warning above says (log in, set a variable, give it longer with --startup-timeout), or leave it "
            "out with --exclude-server",
            err=True,
        )
        raise typer.Exit(1)
    tree.upstreams, warnings = credentials.externalise(tree.upstreams)
    for warning in warnings:
        logging.getLogger("mcp_cli").warning("%s", warning)
    _package(tree, out, None)


def _why_not_config(path: Path) -> str:
    import json

    from ..sources import mcp_config

    if not path.is_file():
        return "no such file"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "not JSON or TOML"
    return mcp_config.unknown_keys(data) or 'no "mcpServers" or [mcp_servers] in it'


@app.command(context_settings={"allow_interspersed_args": False, "ignore_unknown_options": True})
@config_options
def run(
    tree: str = typer.Argument(..., metavar="TREE", help=serving.TREE_HELP),
    argv: list[str] | None = typer.Argument(None, help="The tokens after the tool name."),
    budget: int | None = typer.Option(None, "--budget", metavar="TOKENS", min=500, help=serving.BUDGET_HELP),
    *,
    # read by __main__ (cli.daemon.run_fast) before this command line loads; here for --help and to be accepted
    no_daemon: bool = typer.Option(
        False, "--no-daemon", help="Run in this process, not through the keep-alive daemon (also: MCP_CLI_NO_DAEMON=1)."
    ),
    daemon_idle: float | None = typer.Option(
        None,
        "--daemon-idle",
        metavar="SECONDS",
        help="Stop the daemon after this long without a call (default $MCP_CLI_DAEMON_IDLE, else 300).",
    ),
    options: dict[str, Any],
) -> None:
    """Run one argv against TREE in this terminal: its output on stdout (a script's, byte for byte; piped input
    reaches it), errors and its stderr on stderr, the exit status mirroring the result. A keep-alive daemon keeps
    TREE and its servers between calls (see `mcp-cli daemon`; __main__ hands calls to it before this command line
    is loaded, and here the call runs in-process). mcp-cli's options go before TREE: everything after it belongs to
    the tool. An answer over its budget is cut with a note; its next parts are kept in the user's cache folder for
    the `--more` call the note gives."""
    from ..handlers.processes import exit_process

    tokens = daemons.call_tokens(list(argv or []))
    if tokens is None:
        misplaced = " ".join((argv or [])[: (argv or []).index("--")])
        typer.echo(f"mcp-cli: run: put mcp-cli's options before TREE: mcp-cli run {misplaced} {tree} -- ...", err=True)
        raise typer.Exit(2)
    import anyio

    from ..handlers.upstream import Upstreams
    from ..surfaces import terminal

    tokens = [*(["--budget", str(budget)] if budget else []), *tokens]  # the call's own budget (engine/answers.py)

    async def once() -> int:
        async with Upstreams() as pool:  # the sessions its servers are listed through answer the call
            loaded = await anyio.to_thread.run_sync(lambda: _load(tree, **options, pool=pool))
            async with terminal.runtime(loaded) as runtime:
                return await terminal.answer(runtime, tokens, sys.stdin, sys.stdout, sys.stderr)

    try:
        exit_process(anyio.run(once))
    except KeyboardInterrupt:
        daemons.interrupted("run")


daemon_app = typer.Typer(help="The keep-alive daemons behind `mcp-cli run`: what runs, and stopping them.")
app.add_typer(daemon_app, name="daemon")


@daemon_app.command("status")
def daemon_status(
    source: str | None = typer.Argument(None, metavar="[SOURCE]", help="Only the daemons of this source."),
) -> None:
    """Each running daemon (SOURCE's only, if given): its source, working folder, servers and their processes,
    memory, idle time."""
    running = daemons.ask("status", source)
    if not running:
        typer.echo(f"no daemon runs{f' for {source}' if source else ''}")
    for said in running:
        processes = said["processes"]
        memory = (said["memory"] + sum(p["memory"] for p in processes)) / 2**20
        typer.echo(f"{said['source']}  (pid {said['pid']}, in {said['cwd']})")
        typer.echo(
            f"  servers: {', '.join(said['servers']) or 'none loaded'}; {len(processes)} processes; "
            f"memory {memory:.0f} MiB; {said['calls']} calls, idle {said['idle']:g} s of "
            f"{said['idle_timeout']:g} s"
        )
        for process in processes:
            typer.echo(f"    {process['pid']}  {process['command'][:100]}")


@daemon_app.command("stop")
def daemon_stop(
    source: str | None = typer.Argument(None, metavar="[SOURCE]", help="Stop the daemons of this source only."),
    all_: bool = typer.Option(False, "--all", help="Stop every daemon."),
) -> None:
    """Stop daemons (their servers first): SOURCE's, or --all."""
    if (source is None) == (not all_):
        typer.echo("mcp-cli: daemon stop: name a SOURCE or give --all", err=True)
        raise typer.Exit(2)
    stopped = daemons.ask("stop", source)
    if not stopped:
        typer.echo(f"no daemon runs{f' for {source}' if source else ''}")
    for said in stopped:
        typer.echo(f"stopped {said['source']} (pid {said['pid']}, in {said['cwd']})")


@app.command()
def build(
    skill: str = typer.Argument(..., help="A skill folder (with SKILL.md)."),
    out: str | None = typer.Option(None, "-o", "--out", metavar="DIR", help="Output folder; default ./NAME-mcp."),
) -> None:
    """Build an installable MCP server package from a skill folder."""
    from pathlib import Path

    from ..sources.skill.folder import is_skill

    if not is_skill(Path(skill)):
        typer.echo(f"mcp-cli: {skill}: not a skill folder (no SKILL.md in it)", err=True)
        raise typer.Exit(2)
    _package(_load(skill), out, Path(skill))


def _package(tree: Tree, out: str | None, source_dir: Path | None) -> None:
    import shlex
    from pathlib import Path

    from .. import generators
    from ..errors import SourceError

    target = Path(out or f"{tree.name}-mcp")
    try:
        files = generators.server_package(tree, target, source_dir=source_dir)
    except (FileExistsError, OSError, generators.VendorError, SourceError) as exc:
        typer.echo(f"mcp-cli: {exc}", err=True)
        raise typer.Exit(1) from None
    commands = sum(1 for _, node in tree.walk() if node.kind == "command")
    typer.echo(f"built {target}/ ({len(files)} files): tool {tree.name!r}, {commands} command{'s' * (commands != 1)}")
    # Always a path: a bare `pip install pdf-mcp` would install whatever the index has under that name.
    where = str(target) if target.is_absolute() or target.parts[0] == ".." else f"./{target.as_posix()}"
    typer.echo(f"install: pip install {shlex.quote(where)}    then: claude mcp add {tree.name} -- {tree.name}-mcp")


@app.command()
@config_options
def export(
    source: str = typer.Argument(..., metavar="SOURCE", help=serving.TREE_HELP),
    out: str | None = typer.Option(
        None, "-o", "--out", metavar="DIR", help="The skill folder; the skill is named after it. Default ./NAME."
    ),
    *,
    options: dict[str, Any],
) -> None:
    """Write SOURCE as an Agent Skill: SKILL.md teaching the --help walk, and scripts/NAME.sh running the tree
    through `mcp-cli run`, for agents with a shell and no MCP tool."""
    from pathlib import Path

    from .. import generators
    from .client_configs import mcp_cli_command

    tree = _load(source, **options)
    target = Path(out or tree.name)
    where = str(Path(source).resolve()) if Path(source).exists() else source
    command = [*mcp_cli_command(), "run", *serving.config_argv(options), where]
    try:
        generators.skill_folder(tree, target, command)
    except (ValueError, OSError) as exc:
        typer.echo(f"mcp-cli: export: {exc}", err=True)
        raise typer.Exit(2 if isinstance(exc, ValueError) else 1) from None
    name = target.resolve().name
    typer.echo(f"exported skill {name!r} to {target}/: SKILL.md and scripts/{name}.sh (start with --help)")


@app.command()
@config_options
def tokens(
    source: str = typer.Argument(..., metavar="TREE", help=serving.TREE_HELP),
    *,
    options: dict[str, Any],
) -> None:
    """Tokens an agent reads up front (static tool list vs one tool) and per level of help (o200k_base)."""
    from . import tokens as tok

    try:
        tok.encoding()
    except tok.MissingExtra as exc:
        typer.echo(f"mcp-cli: tokens: {exc}", err=True)
        raise typer.Exit(1) from None
    typer.echo(tok.render(tok.report(_load(source, **options))), nl=False)


@app.command()
def cache(clear: bool = typer.Option(False, "--clear", help="Delete every cached tool list and failure.")) -> None:
    """Show the tool-list cache of MCP servers (where it is, what it holds, how old), or clear it."""
    from ..sources import discovery

    if clear:
        typer.echo(f"deleted {discovery.clear_cache()} cached file(s) in {discovery.cache_dir()}")
        return
    entries = discovery.cache_entries()
    typer.echo(
        f"{discovery.cache_dir()}: {len(entries)} cached file(s); tool lists are kept "
        f"{discovery.TTL / 3600:g} h, failures {discovery.FAILED_TTL:g} s"
    )
    for name, about, age in entries:
        typer.echo(f"  {name}  {_age(age):>6}  {about}")


@app.command()
def login(
    config: str = typer.Argument(..., metavar="CONFIG", help="The MCP client config with the server."),
    server: str | None = typer.Argument(None, metavar="SERVER", help="Its name there; default its one HTTP server."),
    no_browser: bool = typer.Option(
        False, "--no-browser", help="Print the URL instead of opening it, and take the redirect URL pasted back."
    ),
) -> None:
    """Log in to an MCP server that wants OAuth, and keep its tokens for this user (docs/oauth.md)."""
    from . import login as oauth_login

    _oauth("login", config, server, lambda entry: oauth_login.login(entry, browser=not no_browser))


@app.command()
def logout(
    config: str = typer.Argument(..., metavar="CONFIG", help="The MCP client config with the server."),
    server: str | None = typer.Argument(None, metavar="SERVER", help="Its name there; default its one HTTP server."),
) -> None:
    """Forget the stored OAuth login (tokens and registered client) of an MCP server."""
    from . import login as oauth_login

    _oauth("logout", config, server, oauth_login.logout)


def _oauth(command: str, config: str, server: str | None, act: Callable[[Http], Awaitable[str]]) -> None:
    import anyio

    from ..errors import SourceError
    from ..handlers.processes import exit_process
    from ..handlers.upstream import StartFailed, describe
    from .login import server_config

    try:
        entry = server_config(config, server)
    except SourceError as exc:
        typer.echo(f"mcp-cli: {exc}", err=True)
        raise typer.Exit(2) from None
    # exit_process: a thread may still wait on stdin for a URL to be pasted, which the listener made needless
    try:
        said = anyio.run(act, entry)
    except KeyboardInterrupt:
        daemons.interrupted(command)
    except Exception as exc:
        why = exc.why if isinstance(exc, StartFailed) else describe(exc)
        typer.echo(f"mcp-cli: {command} {server or config}: {why}", err=True)
        exit_process(1)
    typer.echo(f"{entry.name}: {said}")
    exit_process(0)


def _age(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds / size:.0f} {unit}"
    return f"{seconds:.0f} s"


@app.command()
@config_options
def inspect(
    tree: str = typer.Argument(..., metavar="TREE", help=serving.TREE_HELP),
    *,
    options: dict[str, Any],
) -> None:
    """Print the whole tree, one path per line, with one-line summaries."""
    from ..text import columns, one_line

    t = _load(tree, **options)
    rows = [(t.name, t.root.summary)] + [(" ".join([t.name, *path]), node.summary) for path, node in t.walk()]
    typer.echo("\n".join(columns([(path, one_line(summary)) for path, summary in rows], indent=0, widest=10**6)))


@app.command()
def add(
    client: str = typer.Argument(..., metavar="CLIENT", help="claude-code, codex, claude-desktop or cursor."),
    source: str = typer.Argument(
        ..., metavar="SOURCE", help="A skill folder, a package built by `mcp-cli build`/`wrap`, or a config/tree file."
    ),
    name: str | None = typer.Option(None, "--name", metavar="NAME", help="Server name; default: the tree's name."),
    scope: str = typer.Option(
        "user", "--scope", metavar="SCOPE", help="user (default) or project (./.mcp.json, ./.cursor/mcp.json)."
    ),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the change as a diff and write nothing."),
) -> None:
    """Register SOURCE as an MCP server with CLIENT (running it again changes nothing)."""
    from . import client_configs as clients

    try:
        clients.config_file(client, scope)  # an unknown client or scope first, before reading SOURCE
        server, entry = clients.server_entry(source, name)
        change = clients.register(client, server, entry, scope)
    except clients.RegistrationError as exc:
        typer.echo(f"mcp-cli: add: {exc}", err=True)
        raise typer.Exit(2) from None
    where = f"{client} ({change.path})"
    if change.status == "unchanged":
        typer.echo(f"{server}: already registered with {where}, nothing changed")
        return
    if dry_run:
        typer.echo(change.diff(), nl=False)
        typer.echo(f"dry run: {server} would be {change.status} in {where}; nothing written")
        return
    try:
        change.write()
    except OSError as exc:
        typer.echo(f"mcp-cli: add: {change.path}: cannot write: {exc.strerror}", err=True)
        raise typer.Exit(1) from None
    command = " ".join([entry["command"], *entry["args"]])
    typer.echo(f"{server}: {'registered with' if change.status == 'added' else 'updated in'} {where}: {command}")


@app.command()
@config_options
def doctor(
    source: str = typer.Argument(..., metavar="SOURCE", help="An MCP client config, or a skill folder."),
    as_json: bool = typer.Option(False, "--json", help="The report as JSON."),
    *,
    options: dict[str, Any],
) -> None:
    """Check SOURCE: servers that fail to start and why, tool names and schemas model APIs refuse, names alike in
    kebab-case; for a skill folder, its build warnings. Exit status 1 when a server failed."""
    from ..errors import SourceError
    from . import doctor as doc

    try:
        report = doc.check(source, options)
    except SourceError as exc:
        typer.echo(f"mcp-cli: doctor: {exc}", err=True)
        raise typer.Exit(2) from None
    typer.echo(report.to_json() if as_json else doc.render(report), nl=False)
    raise typer.Exit(1 if report.failed else 0)
