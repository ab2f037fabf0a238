"""`mcp-cli` and `python -m mcp_cli`: `serve` is parsed without typer (serving never imports it); the other
commands go through the typer app in `cli`."""

import sys


def main() -> None:
    if sys.argv[1:2] == ["serve"]:
        from .cli.serve import main as serve

        serve(sys.argv[2:])
    else:
        from .cli.app import app

        app()


if __name__ == "__main__":
    main()
