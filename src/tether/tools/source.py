"""`ToolSource`: tools whose set is only known at run time (an MCP server, a plugin host).

A source is started once, lists its tools, serves their calls and is closed with the agent
that owns it. Pass it to ``Agent(tools=[...])`` beside plain tools: the registry keeps it, and
the agent starts every source before its first invocation (``await agent.start()`` does it
explicitly) and closes them in ``agent.close()`` / ``async with agent``. Each listed tool
becomes a :class:`SourceTool` in the registry, so the loop, hooks, in-doubt handling and the
durable layer see an ordinary tool: what a source call produces is recorded in the run like
any other result, and a resumed run never asks the source to redo a recorded call.

A tool's ``idempotent`` flag comes from the source (``idempotent(name)``), because a source
knows which of its tools have side effects; the default is the conservative ``False``.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from ..errors import HandleRejectedError, ToolError
from ..types import ToolResult, ToolSpec, ToolUse
from .base import Tool, error_result
from .context import ToolContext


@runtime_checkable
class ToolSource(Protocol):
    """A provider of tools with a lifecycle.

    Implementations raise :class:`~tether.errors.ToolError` from ``start``/``list_tools`` when
    the source cannot be reached (the invocation then fails before any model call), and
    return error results, not exceptions, from ``call_tool`` for a failed call.
    """

    @property
    def source_name(self) -> str:
        """A short name for errors and logs (e.g. the MCP server's name)."""
        ...

    async def start(self) -> None:
        """Connect (spawn the server, open the session); called once before ``list_tools``."""
        ...

    async def list_tools(self) -> list[ToolSpec]:
        """The specs of the tools this source serves (names unique within the agent)."""
        ...

    def idempotent(self, name: str) -> bool:
        """Whether re-running tool ``name`` after a crash is safe (no ``reconcile`` needed)."""
        ...

    async def call_tool(self, tool_use: ToolUse, context: ToolContext) -> ToolResult:
        """Run one call and return its ``toolResult`` (``toolUseId`` = the call's id)."""
        ...

    async def close(self) -> None:
        """Disconnect; called once, also when ``start`` failed half-way."""
        ...


class SourceTool(Tool):
    """One tool of a :class:`ToolSource`, as the registry and the loop see it."""

    def __init__(self, source: ToolSource, spec: ToolSpec) -> None:
        name = spec.get("name")
        if not isinstance(name, str) or not name:
            raise ToolError(f"tool source {source.source_name!r} listed a tool without a name: {spec!r}")
        self.source = source
        self._name = name
        self._spec = spec
        self.idempotent = source.idempotent(name)

    @property
    def tool_name(self) -> str:
        return self._name

    async def invoke(self, tool_use: ToolUse, context: ToolContext) -> ToolResult:
        """Route the call to the source; a failure of the source becomes an error result."""
        tool_use_id = tool_use["toolUseId"]
        try:
            result = await self.source.call_tool(tool_use, context)
        except HandleRejectedError:
            raise  # the run's stored handle was refused: the turn stops, the run keeps the handle
        except Exception as exc:  # the source's failure is the model's information, not a crash
            return error_result(tool_use_id, f"Error: tool source {self.source.source_name!r} failed: {type(exc).__name__}: {exc}")
        if not isinstance(result, dict) or result.get("toolUseId") != tool_use_id or result.get("status") not in ("success", "error"):
            return error_result(tool_use_id, f"Error: tool source {self.source.source_name!r} returned a malformed toolResult")
        return result

    def keeps_handle(self, state: dict[str, Any], tool_use_id: str) -> bool:
        """Asked of the source (``keeps_handle(state, tool_use_id)``, when it has one)."""
        ask = getattr(self.source, "keeps_handle", None)
        return bool(ask(state, tool_use_id)) if callable(ask) else False

    def run(self, input: dict[str, Any], context: ToolContext) -> Any:
        raise ToolError("a source tool runs through its source; call invoke()")


__all__ = ["SourceTool", "ToolSource"]
