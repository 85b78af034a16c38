"""A FastMCP server (``mcp.server.mcpserver.MCPServer``, FastMCP's name in mcp 2) for the facade's
MCP tests, run over stdio: ``python facade_mcp.py``."""

from __future__ import annotations

import base64

import mcp_types as types
from mcp.server.mcpserver import MCPServer

PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")

server = MCPServer("facade")


@server.tool()
def greet(name: str) -> str:
    """Greet someone."""
    return f"Hello, {name}!"


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def stats(values: list[float]) -> dict[str, float]:
    """Statistics of numbers."""
    return {"count": float(len(values)), "total": sum(values)}


@server.tool()
def pixel() -> list[types.TextContent | types.ImageContent]:
    """A 1x1 PNG."""
    return [types.TextContent(text="a pixel"), types.ImageContent(data=base64.b64encode(PNG).decode(), mime_type="image/png")]


@server.tool()
def broken() -> str:
    """Always fails."""
    raise ValueError("it broke")


if __name__ == "__main__":
    server.run()
