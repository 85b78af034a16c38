"""An agent called as a tool: moved beside the agent, to :mod:`tether.agent_tool` (the agent
imports it; it never imports the agent at run time). These names stay importable from here."""

from __future__ import annotations

from ..agent_tool import STATE_KEY, AgentTool, asked_name, roll_up

__all__ = ["STATE_KEY", "AgentTool", "asked_name", "roll_up"]
