"""Strands' ``strands.tools.mcp.mcp_agent_tool`` path (the class lives in :mod:`.mcp_client`)."""

from .mcp_client import MCPAgentTool

__all__ = ["MCPAgentTool"]
