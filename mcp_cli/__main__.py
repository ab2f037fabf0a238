"""`mcp-cli` and `python -m mcp_cli`: `serve` is parsed without typer (serving never imports it), and `run` is
handed to its keep-alive daemon before typer loads (a warm call costs little more than Python's start); the other
commands, and calls the daemon does not take, go through the typer app in `cli`."""

import sys


def main() -> None:
    if sys.argv[1:2] == ["serve"]:
        from .cli.serve import main as serve

        serve(sys.argv[2:])
    else:
        if sys.argv[1:2] == ["run"]:
            from .cli.daemon import run_fast

            run_fast(sys.argv[2:])  # returns when the call runs in-process
        from .cli.app import app

        app()


if __name__ == "__main__":
    main()
