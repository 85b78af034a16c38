"""A module tool in the Strands TOOL_SPEC style: a spec dict and a function of (tool, **kwargs) returning a ToolResult."""

from typing import Any

TOOL_SPEC = {
    "name": "module_tool_weather",
    "description": "Get the weather of a city.",
    "inputSchema": {
        "json": {
            "type": "object",
            "properties": {"city": {"type": "string", "description": "The city."}, "unit": {"type": "string", "enum": ["C", "F"]}},
            "required": ["city"],
        }
    },
}


def module_tool_weather(tool: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    city = tool["input"]["city"]
    unit = tool["input"].get("unit", "C")
    degrees = 20 if unit == "C" else 68
    return {"toolUseId": tool["toolUseId"], "status": "success", "content": [{"text": f"{city}: {degrees}{unit}"}]}
