"""mcp-cli: a command tree served as one argv-driven MCP tool, with progressive --help."""

__version__ = "0.1.0"
