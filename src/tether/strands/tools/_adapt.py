"""The seam between Strands-style ``tools=[...]`` items and Tether tools."""

from __future__ import annotations

import inspect
from collections.abc import Iterable
from typing import Any

from ...errors import ConfigurationError
from ...tools.base import Tool
from ...tools.source import ToolSource
from .loader import load_tool_from_string, load_tools_from_module
from .tool_provider import ProviderSource, ToolProvider


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


__all__ = ["to_tether_tools"]
