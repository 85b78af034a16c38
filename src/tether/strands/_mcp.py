"""MCP tools read their call's idempotency key: an ``ExecuteToolStage`` middleware of each agent a
``TetherSessionManager`` binds.

A Python tool reads the key of its call from its ``ToolContext`` (:func:`~tether.strands.executor.idempotency_key`);
an MCP tool runs in its server's process, which sees only the request. For a call of Strands'
``MCPAgentTool`` that the executor keys (every call it runs, a call in doubt run again included),
the middleware has the request carry the key in its ``_meta`` as ``tether/idempotencyKey``, next
to the client's own ``meta`` (``MCPClient(meta=...)``), which Strands sends on its own otherwise:
the server reads ``ctx.request_context.meta["tether/idempotencyKey"]`` and can tell a call it
already made. Only Strands' own class is replaced (a subclass's ``stream`` is its author's). A
call no run records (a direct ``agent.tool.X()``, a program's ``call_tool_sync``) is sent as
Strands sends it.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import AsyncGenerator
from typing import Any

META_KEY = "tether/idempotencyKey"
"""The ``_meta`` entry of an MCP tool call that carries its idempotency key."""


@functools.cache
def _keyed_class() -> Any:
    """Strands' ``MCPAgentTool`` sending its call's key (imported when an MCP tool exists: ``mcp`` is optional)."""
    from strands.tools.mcp import MCPAgentTool
    from strands.types.events import ToolResultEvent

    class KeyedMCPAgentTool(MCPAgentTool):
        """``MCPAgentTool.stream`` with ``META_KEY`` in the request's ``_meta``."""

        key = ""

        async def stream(self, tool_use: Any, invocation_state: dict[str, Any], **kwargs: Any) -> AsyncGenerator[Any, None]:
            meta = {**(getattr(self.mcp_client, "_meta", None) or {}), META_KEY: self.key}
            result = await self.mcp_client.call_tool_async(
                tool_use_id=tool_use["toolUseId"],
                name=self.mcp_tool.name,
                arguments=tool_use["input"],
                read_timeout_seconds=self.timeout,
                meta=meta,
                cancel_signal=getattr(invocation_state.get("agent"), "_cancel_signal", None),
            )
            yield ToolResultEvent(result)

    return KeyedMCPAgentTool


def _keyed(tool: Any, key: str) -> Any:
    """``tool`` (an ``MCPAgentTool``) calling its server with ``key`` in the request's ``_meta``."""
    keyed = _keyed_class()(tool.mcp_tool, tool.mcp_client, name_override=tool.tool_name, timeout=tool.timeout)
    keyed.key = key
    return keyed


async def key_mcp_calls(context: Any, next_fn: Any) -> AsyncGenerator[Any, None]:
    """``ExecuteToolStage`` middleware: an MCP tool call the executor keyed sends its key."""
    module = sys.modules.get("strands.tools.mcp.mcp_agent_tool")  # not imported: no MCP tool exists
    tether = context.invocation_state.get("tether")
    key = (tether.get("idempotency_keys") or {}).get(context.tool_use["toolUseId"]) if isinstance(tether, dict) else None
    if module is not None and type(context.tool) is module.MCPAgentTool and isinstance(key, str):
        context = context.replace(tool=_keyed(context.tool, key))
    async for event in next_fn(context):
        yield event
