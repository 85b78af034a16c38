"""A small stdio MCP server for the corpus's MCP program, written with the mcp SDK's MCPServer (FastMCP's successor in mcp 2.x).

It imports nothing from strands; the corpus runner starts it with ``python mcp_calculator_server.py``.
"""

from mcp.server.mcpserver import MCPServer

server = MCPServer("calculator")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def greet(name: str) -> str:
    """Greet someone by name."""
    return f"Hello, {name}!"


@server.tool()
def stats(values: list[float]) -> dict:
    """Minimum, maximum and mean of some numbers."""
    return {"min": min(values), "max": max(values), "mean": sum(values) / len(values)}


if __name__ == "__main__":
    server.run(transport="stdio")
