"""Strands' callback handlers: called as ``handler(**event)`` with each Strands stream event.

They print exactly what Strands' print: streamed text, streamed reasoning, and ``Tool #N: name``
when a tool call starts streaming (read from the raw model event, as Strands does).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class PrintingCallbackHandler:
    """Prints streamed text and tool invocations to stdout (the default of ``Agent``)."""

    def __init__(self, verbose_tool_use: bool = True) -> None:
        """Print text and tool calls.

        Args:
            verbose_tool_use: Print ``Tool #N: name`` when a tool call starts.
        """
        self.tool_count = 0
        self._verbose_tool_use = verbose_tool_use

    def __call__(self, **kwargs: Any) -> None:
        """Print what one event carries (``reasoningText``, ``data``, a raw ``event``'s tool start)."""
        reasoning_text = kwargs.get("reasoningText", False)
        data = kwargs.get("data", "")
        complete = kwargs.get("complete", False)
        tool_use = kwargs.get("event", {}).get("contentBlockStart", {}).get("start", {}).get("toolUse")
        if reasoning_text:
            print(reasoning_text, end="")
        if data:
            print(data, end="" if not complete else "\n")
        if tool_use:
            self.tool_count += 1
            if self._verbose_tool_use:
                print(f"\nTool #{self.tool_count}: {tool_use['name']}")
        if complete and data:
            print("\n")


class CompositeCallbackHandler:
    """Calls several callback handlers with the same events, in order."""

    def __init__(self, *handlers: Callable[..., Any]) -> None:
        self.handlers = handlers

    def __call__(self, **kwargs: Any) -> None:
        for handler in self.handlers:
            handler(**kwargs)


def null_callback_handler(**_kwargs: Any) -> None:
    """Discards every event."""
    return None


__all__ = ["CompositeCallbackHandler", "PrintingCallbackHandler", "null_callback_handler"]
