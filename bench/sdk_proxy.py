"""The floor of a proxy built on the SDK: a bare low-level SDK server whose tools are forwarded, one to one, to an
upstream through the SDK's client (no mcp-cli code). `python bench/sdk_proxy.py COMMAND [ARGS...]`."""

import sys

import anyio
from mcp import Client, StdioServerParameters, types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server


async def main(command: str, *args: str) -> None:
    async with Client(StdioServerParameters(command=command, args=list(args))) as upstream:
        listed = await upstream.list_tools()

        async def list_tools(ctx, params) -> types.ListToolsResult:
            return listed

        async def call_tool(ctx, params) -> types.CallToolResult:
            return await upstream.call_tool(params.name, params.arguments or {})

        server = Server("sdk-proxy", on_list_tools=list_tools, on_call_tool=call_tool)
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main, *sys.argv[1:])
