"""Strands' ``strands.tools.registry.ToolRegistry`` API on Tether's tool registry.

A :class:`tether.strands.Agent`'s ``tool_registry`` is this subclass of Tether's registry: the
same tools and sources, plus the Strands methods users call on it (``get_all_tool_specs``,
``get_all_tools_config``).
"""

from __future__ import annotations

from typing import Any

from ...tools.registry import ToolRegistry as _TetherToolRegistry
from ...types import ToolSpec
from ._schema import normalize_tool_spec


class ToolRegistry(_TetherToolRegistry):
    """Tether's :class:`~tether.tools.registry.ToolRegistry` with Strands' read methods."""

    __slots__ = ()

    @classmethod
    def adopt(cls, registry: _TetherToolRegistry) -> ToolRegistry:
        """A Strands-facing registry holding ``registry``'s tools and sources (shared, not copied)."""
        adopted = cls()
        adopted._tools = registry._tools
        adopted._sources = registry._sources
        adopted._running = registry._running
        adopted._specs = None
        return adopted

    def get_all_tools_config(self) -> dict[str, Any]:
        """Each tool's spec by name, its input schema normalized as Strands' registry does."""
        return {spec["name"]: normalize_tool_spec(spec) for spec in self.specs}

    def get_all_tool_specs(self) -> list[ToolSpec]:
        """Every tool's spec (normalized), in registration order, as in Strands."""
        return list(self.get_all_tools_config().values())
