"""Strands' ``ToolProvider`` and its bridge to Tether's :class:`~tether.tools.source.ToolSource`.

A provider loads its tools when the agent starts (``add_consumer`` then ``load_tools``) and is
released when the agent closes (``remove_consumer``), which is the lifecycle of a tool source.
"""

from __future__ import annotations

import uuid
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

from ...errors import ToolError
from ...tools.base import Tool, error_result
from ...tools.context import ToolContext
from ...types import ToolResult, ToolSpec, ToolUse


class ToolProvider(ABC):
    """Tools with a lifecycle managed by the agent (Strands' ``strands.tools.ToolProvider``)."""

    @abstractmethod
    async def load_tools(self, **kwargs: Any) -> Sequence[Any]:
        """Load and return the provider's tools."""

    @abstractmethod
    def add_consumer(self, consumer_id: Any, **kwargs: Any) -> None:
        """Note that ``consumer_id`` (an agent's registry) uses the provider."""

    @abstractmethod
    def remove_consumer(self, consumer_id: Any, **kwargs: Any) -> None:
        """Release ``consumer_id``; idempotent; the provider may clean up when none remain."""


class ProviderSource:
    """A :class:`ToolProvider` as a Tether tool source (one per agent that uses it)."""

    def __init__(self, provider: ToolProvider) -> None:
        self.provider = provider
        self._consumer_id = str(uuid.uuid4())
        self._tools: dict[str, Tool] = {}

    @property
    def source_name(self) -> str:
        return type(self.provider).__name__

    async def start(self) -> None:
        from ._adapt import to_tether_tools

        self.provider.add_consumer(self._consumer_id)
        tools: dict[str, Tool] = {}
        for item in to_tether_tools(list(await self.provider.load_tools())):
            if not isinstance(item, Tool):
                raise ToolError(f"tool provider {self.source_name} loaded {item!r}, which is not a tool")
            tools[item.tool_name] = item
        self._tools = tools

    async def list_tools(self) -> list[ToolSpec]:
        return [tool.spec for tool in self._tools.values()]

    def idempotent(self, name: str) -> bool:
        tool = self._tools.get(name)
        return tool is not None and tool.idempotent

    async def call_tool(self, tool_use: ToolUse, context: ToolContext) -> ToolResult:
        tool = self._tools.get(tool_use["name"])
        if tool is None:
            return error_result(tool_use["toolUseId"], f"Unknown tool: {tool_use['name']}")
        return await tool.invoke(tool_use, context)

    async def close(self) -> None:
        self._tools = {}
        self.provider.remove_consumer(self._consumer_id)


__all__ = ["ProviderSource", "ToolProvider"]
