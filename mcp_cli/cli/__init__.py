"""The `mcp-cli` command: the typer app (`app`), `serve` parsed without typer (`serve`), client config files
(`client_configs`) and token counts (`tokens`). The top layer: it may import every other."""
