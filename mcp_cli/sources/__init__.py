"""Sources produce trees: `loader.load` picks the source from what TREE names (a skill folder: `skill/`; an MCP client
config: `mcp_config`, `discovery`, `mcp_tools`; a tree JSON file or a Python module)."""
