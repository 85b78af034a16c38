"""The seam between Strands-style ``tools=[...]`` items and Tether tools."""

from __future__ import annotations

import inspect
import uuid
from collections.abc import Iterable
from typing import Any

from ...errors import ConfigurationError, ToolError
from ...tools.base import Tool, error_result
from ...tools.context import ToolContext
from ...tools.source import ToolSource
from ...types import ToolResult, ToolSpec, ToolUse
from .loader import load_tool_from_string, load_tools_from_module
from .tool_provider import ToolProvider


def to_tether_tools(items: Iterable[Any] | None) -> list[Any]:
    """The items of ``Agent(tools=...)`` of the Strands facade as what ``tether.Agent`` takes.

    As Strands' registry reads them: a ``.py`` path or module path string (``a.b``,
    ``a.b:tool``), a ``{"name", "path"}`` or ``{"path"}`` dict, an imported module (its ``@tool``
    functions, or its ``TOOL_SPEC`` module tool), a ``ToolProvider`` (an ``MCPClient``), nested
    lists. Tether-native items (tools, tool sources, agents, plain functions) pass through.

    Args:
        items: The ``tools`` argument (None for none).

    Returns:
        Tether tools, tool sources, functions and agents.

    Raises:
        ConfigurationError: A path, module or dict names no loadable tool (the message names it).
    """
    out: list[Any] = []
    for item in items or ():
        out.extend(_one(item))
    return out


def _one(item: Any) -> list[Any]:
    as_source = getattr(item, "as_tool_source", None)
    if callable(as_source) and not isinstance(item, Tool):  # an MCPClient: Strands' sync start(), Tether's async one
        return [as_source()]
    if isinstance(item, Tool | ToolSource):
        return [item]
    if isinstance(item, ToolProvider):
        return [ProviderSource(item)]
    try:
        if isinstance(item, str):
            return [_dynamic(tool) for tool in load_tool_from_string(item)]
        if isinstance(item, dict) and "path" in item:
            tools = [_dynamic(tool) for tool in load_tool_from_string(item["path"])]
            if "name" not in item:
                return list(tools)
            named = [tool for tool in tools if tool.tool_name == item["name"]]
            if not named:
                raise ValueError(f'Tool "{item["name"]}" not found in "{item["path"]}"')
            return list(named)
        if inspect.ismodule(item) and hasattr(item, "__file__"):
            return list(load_tools_from_module(item, item.__name__.split(".")[-1]))
    except Exception as exc:
        raise ConfigurationError(f"Failed to load tool {item}: {exc}") from exc
    if isinstance(item, list | tuple | set | frozenset):
        return [tool for sub in item for tool in _one(sub)]
    return [item]


def _dynamic(tool: Any) -> Any:
    tool.mark_dynamic()
    return tool


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


__all__ = ["ProviderSource", "to_tether_tools"]
