"""A stdio MCP server (the mcp SDK's MCPServer) whose tool answers with the ``_meta`` its request
carried, without the SDK's own ``io.modelcontextprotocol/`` entries: what an MCP server can read
of a call (``tests/strands/test_mcp.py``)."""

import json

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("keys")


@server.tool()
def charge(amount: int, ctx: Context) -> str:
    """Charge an amount.

    Args:
        amount: How much.
    """
    meta = ctx.request_context.meta or {}
    return json.dumps({key: value for key, value in meta.items() if not key.startswith("io.modelcontextprotocol/")}, sort_keys=True)


if __name__ == "__main__":
    server.run(transport="stdio")
