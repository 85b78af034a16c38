"""Tool specifications and tool-choice shapes sent to models."""

from __future__ import annotations

from typing import Any, TypedDict


class ToolInputSchema(TypedDict):
    json: dict[str, Any]


class ToolSpec(TypedDict):
    """What a model is told about a tool: its name, description and JSON schema."""

    name: str
    description: str
    inputSchema: ToolInputSchema


class ToolChoiceTool(TypedDict):
    name: str


class ToolChoice(TypedDict, total=False):
    """Which tools a model may or must call; exactly one key is present.

    ``{"auto": {}}`` lets the model decide, ``{"any": {}}`` forces some tool,
    ``{"tool": {"name": ...}}`` forces one named tool.
    """

    auto: dict[str, Any]
    any: dict[str, Any]
    tool: ToolChoiceTool
