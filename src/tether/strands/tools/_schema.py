"""Tool-spec normalization and tool-use name checks, as Strands' ``strands.tools.tools`` has them.

``normalize_schema`` / ``normalize_tool_spec`` fill in what Strands' registry fills in before a
spec reaches a model (``type``, ``properties``, ``required``, a ``description`` per property),
so models see the same specs on Tether as on Strands.
"""

from __future__ import annotations

import re
from typing import Any

from ...types import ToolSpec, ToolUse

_COMPOSITION_KEYWORDS = ("anyOf", "oneOf", "allOf", "not")
_MAX_SCHEMA_DEPTH = 64


class InvalidToolUseNameException(Exception):
    """A tool use has an invalid name."""


def validate_tool_use(tool: ToolUse) -> None:
    """Validate a tool use (its name)."""
    validate_tool_use_name(tool)


def validate_tool_use_name(tool: ToolUse) -> None:
    """Raise :class:`InvalidToolUseNameException` unless the name is 1-64 of ``[a-zA-Z0-9_-]``."""
    if "name" not in tool:
        raise InvalidToolUseNameException("tool name missing")
    name = tool["name"]
    if not re.match(r"^[a-zA-Z0-9_\-]{1,}$", name):
        raise InvalidToolUseNameException(f"tool_name=<{name}> | invalid tool name pattern")
    if len(name) > 64:
        raise InvalidToolUseNameException(f"tool_name=<{name}>, tool_name_max_length=<64> | invalid tool name length")


def _normalize_property(name: str, prop: Any, depth: int) -> dict[str, Any]:
    if not isinstance(prop, dict):
        return {"type": "string", "description": f"Property {name}"}
    if prop.get("type") == "object" and "properties" in prop:
        return normalize_schema(prop, _depth=depth + 1)
    normalized = prop.copy()
    if "$ref" in normalized:
        return normalized
    if not any(keyword in normalized for keyword in _COMPOSITION_KEYWORDS):
        normalized.setdefault("type", "string")
    normalized.setdefault("description", f"Property {name}")
    return normalized


def normalize_schema(schema: dict[str, Any], *, _depth: int = 0) -> dict[str, Any]:
    """A copy of ``schema`` with ``type``/``properties``/``required`` and property defaults filled in.

    Raises:
        ValueError: The schema nests deeper than 64 levels.
    """
    if _depth > _MAX_SCHEMA_DEPTH:
        raise ValueError(f"tool inputSchema nesting exceeds {_MAX_SCHEMA_DEPTH} levels")
    normalized = schema.copy()
    normalized.setdefault("type", "object")
    normalized.setdefault("properties", {})
    normalized.setdefault("required", [])
    normalized["properties"] = {name: _normalize_property(name, prop, _depth) for name, prop in normalized["properties"].items()}
    return normalized


def normalize_tool_spec(tool_spec: ToolSpec) -> ToolSpec:
    """``tool_spec`` with its input schema normalized (``{"json": schema}`` form)."""
    normalized = dict(tool_spec)
    schema = normalized.get("inputSchema")
    if isinstance(schema, dict):
        if "json" in schema:
            normalized["inputSchema"] = {**schema, "json": normalize_schema(schema["json"])}
        else:
            normalized["inputSchema"] = {"json": normalize_schema(schema)}
    return normalized  # type: ignore[return-value]
