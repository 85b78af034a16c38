"""Strands' `strands.tools.mcp` on Tether (see :mod:`tether.strands`): ``MCPClient`` built on
Tether's MCP tool sources (:mod:`tether.mcp`)."""

from .mcp_client import MCPAgentTool, MCPClient, MCPClientInitializationError, ToolFilters

MCPTransport = object
"""What ``transport_callable`` returns: an async context manager yielding ``(read, write, ...)``."""

__all__ = ["MCPAgentTool", "MCPClient", "MCPClientInitializationError", "MCPTransport", "ToolFilters"]
