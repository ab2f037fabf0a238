"""Surfaces consume trees: the MCP server (`mcp_server`, over `stdio` or streamable HTTP), the meta-tools, the OpenAPI
surface, who may call over HTTP (`http_guard`, `scopes`) and a built package's entry point (`launcher`). Each
call goes through the engine's runtime."""
