"""MCP servers as tool sources: ``Agent(tools=[MCPServerStdio(...), MCPServerHTTP(...)])``.

Needs the ``mcp`` extra (``pip install 'tether[mcp]'``). Each server is a
:class:`~tether.tools.ToolSource`: its tools are listed when the agent starts, called like any
other tool, recorded like any other tool result (so checkpoints, durable resume and Temporal
work unchanged: nothing about the connection is stored), and every call carries its idempotency
key in the request's ``_meta`` under :data:`IDEMPOTENCY_META_KEY`.
"""

from __future__ import annotations

from .errors import MCPError
from .limits import DEFAULT_MAX_RESULT_BYTES
from .servers import MCPServerHTTP, MCPServerStdio
from .source import IDEMPOTENCY_META_KEY, MCPSource

__all__ = ["DEFAULT_MAX_RESULT_BYTES", "IDEMPOTENCY_META_KEY", "MCPError", "MCPServerHTTP", "MCPServerStdio", "MCPSource"]
