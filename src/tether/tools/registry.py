"""The tool registry: tools by name, and the specs sent to models (computed once)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..errors import ToolError
from ..types import ToolSpec
from .base import Tool
from .decorator import FunctionTool


class ToolRegistry:
    """Holds an agent's tools; names are unique."""

    __slots__ = ("_specs", "_tools")

    def __init__(self, tools: Iterable[Tool | Callable[..., Any]] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        self._specs: list[ToolSpec] | None = None
        for item in tools:
            self.add(item)

    def add(self, item: Tool | Callable[..., Any]) -> Tool:
        """Register a tool (a plain function is wrapped as if decorated with ``@tool``)."""
        if isinstance(item, Tool):
            tool = item
        elif isinstance(item, type) and issubclass(item, Tool):
            tool = item()
        elif callable(item):
            tool = FunctionTool(item)
        else:
            raise ToolError(f"{item!r} is not a tool: pass a @tool function, a Tool instance or a callable")
        name = tool.tool_name
        if name in self._tools:
            raise ToolError(f"two tools are named {name!r}; tool names must be unique")
        self._tools[name] = tool
        self._specs = None
        return tool

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    @property
    def names(self) -> list[str]:
        return list(self._tools)

    @property
    def specs(self) -> list[ToolSpec]:
        if self._specs is None:
            self._specs = [tool.spec for tool in self._tools.values()]
        return self._specs

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __len__(self) -> int:
        return len(self._tools)
