"""Direct tool calls, ``agent.tool.NAME(**kwargs)``, as Strands makes them.

``agent.tool.NAME`` is a function running the tool named ``NAME`` (or the tool whose dashes
``NAME`` spells as underscores) with the keyword arguments as its input. The call runs through
Tether's tool call (hooks, ``ToolContext`` with the arguments as ``invocation_state``, as in
Strands) and returns the tool's result dict. Recorded (``record_direct_tool_call``), it adds
Strands' four messages to the conversation: the user's request, the ``toolUse``, the
``toolResult`` and the assistant's acknowledgement.
"""

from __future__ import annotations

import json
import random
import weakref
from collections.abc import Callable
from typing import Any, Protocol

from ...types import ContentBlock, Message, ToolResult, ToolSpec, ToolUse


class DirectCaller(Protocol):
    """What ``agent.tool`` needs of its agent (the facade ``Agent``)."""

    def call_tool_directly(
        self, name: str, arguments: dict[str, Any], user_message_override: str | None = None, record: bool | None = None
    ) -> ToolResult: ...


def direct_call_id(name: str) -> str:
    """A new tool-use id of a direct call (Strands' ``tooluse_NAME_<9 digits>``)."""
    return f"tooluse_{name}_{random.randint(100000000, 999999999)}"


def _filtered_input(spec: ToolSpec | None, arguments: dict[str, Any]) -> dict[str, Any]:
    """The arguments the tool's spec declares (all of them when it declares none)."""
    if spec is None or "inputSchema" not in spec:
        return dict(arguments)
    properties = spec["inputSchema"]["json"].get("properties", {})
    return {key: value for key, value in arguments.items() if key in properties}


def recorded_messages(tool_use: ToolUse, result: ToolResult, override: str | None, spec: ToolSpec | None) -> list[Message]:
    """Strands' record of a direct call: request, ``toolUse``, ``toolResult``, acknowledgement."""
    name = tool_use["name"]
    arguments = _filtered_input(spec, dict(tool_use["input"]))
    parameters = json.dumps(arguments, default=lambda o: f"<<non-serializable: {type(o).__qualname__}>>")
    request: list[ContentBlock] = [{"text": f"agent.tool.{name} direct tool call.\nInput parameters: {parameters}\n"}]
    if override:
        request.insert(0, {"text": f"{override}\n"})
    recorded_use: ToolUse = {"toolUseId": tool_use["toolUseId"], "name": name, "input": arguments}
    return [
        {"role": "user", "content": request},
        {"role": "assistant", "content": [{"toolUse": recorded_use}]},
        {"role": "user", "content": [{"toolResult": result}]},
        {"role": "assistant", "content": [{"text": f"agent.tool.{name} was called."}]},
    ]


class ToolCaller:
    """``agent.tool``: attribute access gives a function calling the tool of that name."""

    def __init__(self, agent: DirectCaller) -> None:
        self._agent_ref = weakref.ref(agent)

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name.startswith("__"):
            raise AttributeError(name)
        agent_ref = self._agent_ref

        def caller(user_message_override: str | None = None, record_direct_tool_call: bool | None = None, **kwargs: Any) -> ToolResult:
            agent = agent_ref()
            if agent is None:
                raise ReferenceError("Agent has been garbage collected")
            return agent.call_tool_directly(name, kwargs, user_message_override, record_direct_tool_call)

        caller.__name__ = name
        return caller


__all__ = ["ToolCaller", "direct_call_id", "recorded_messages"]
