"""A multi-tool Strands program for the crash tests: two tools at once, then one, then an answer.

Usage: ``trip.py STORE EXECUTOR [--plain]`` (EXECUTOR: ``concurrent`` or ``sequential``; ``--plain``
runs without the session manager). See ``_program_kit`` for the pause points and the side-effect log.
"""

from __future__ import annotations

import sys
from typing import Any

from _program_kit import ScriptModel, effect, manager_or_none, show
from strands import Agent, ToolContext, tool
from strands.tools.executors import ConcurrentToolExecutor, SequentialToolExecutor


@tool(context=True)
def lookup(city: str, tool_context: ToolContext) -> str:
    """Find a hotel.

    Args:
        city: Where.
    """
    effect(tool_context, "lookup")
    return f"Hotel Nord in {city}"


@tool(context=True)
def weather(city: str, tool_context: ToolContext) -> dict[str, Any]:
    """The forecast.

    Args:
        city: Where.
    """
    effect(tool_context, "weather")
    return {"status": "success", "content": [{"json": {"city": city, "sky": "clear"}}]}


@tool(context=True)
def book(hotel: str, tool_context: ToolContext) -> str:
    """Book a room.

    Args:
        hotel: Which hotel.
    """
    effect(tool_context, "book")
    tool_context.agent.state.set("booked", hotel)
    return f"booked {hotel}"


SCRIPT: list[dict[str, Any]] = [
    {"tools": [("tu-1", "lookup", {"city": "Oslo"}), ("tu-2", "weather", {"city": "Oslo"})]},
    {"text": "Booking it.", "tools": [("tu-3", "book", {"hotel": "Hotel Nord"})]},
    {"text": "Booked Hotel Nord in Oslo; clear sky."},
]


def main() -> None:
    store, kind = sys.argv[1], sys.argv[2]
    executor = ConcurrentToolExecutor() if kind == "concurrent" else SequentialToolExecutor()
    agent = Agent(
        model=ScriptModel(SCRIPT),
        tools=[lookup, weather, book],
        tool_executor=executor,
        callback_handler=None,
        session_manager=manager_or_none("trip-1", store),
    )
    show(agent, agent("Plan a trip to Oslo"))


if __name__ == "__main__":
    main()
