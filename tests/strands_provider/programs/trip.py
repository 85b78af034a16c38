"""A multi-tool Strands program for the crash tests: two tools at once, then one, then an answer.

Usage: ``trip.py STORE EXECUTOR [--plain]`` (EXECUTOR: ``concurrent`` or ``sequential``; ``--plain``
runs without the session manager). The model answers by the conversation's position (the number of
assistant messages it is sent), as a real model's answer depends on the conversation, so a resumed
turn gets the answer the uninterrupted one got. Each tool appends ``{"key", "tool"}`` to
``$TRIP_LOG`` (its side effect, keyed by the idempotency key). ``$TRIP_PAUSE_AT`` (``tool:NAME`` or
``model:N``) makes the program write ``$TRIP_READY`` there and wait to be killed.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import AsyncGenerator
from typing import Any

from strands.models import Model
from strands.tools.executors import ConcurrentToolExecutor, SequentialToolExecutor

from strands import Agent, ToolContext, tool
from tether.strands.executor import idempotency_key
from tether.strands.session_manager import TetherSessionManager

PLAIN = "--plain" in sys.argv


def pause(point: str) -> None:
    if os.environ.get("TRIP_PAUSE_AT") == point:
        with open(os.environ["TRIP_READY"], "w") as ready:
            ready.write(point)
        time.sleep(120)


def effect(tool_context: ToolContext, name: str) -> None:
    key = tool_context.tool_use["toolUseId"] if PLAIN else idempotency_key(tool_context)
    with open(os.environ["TRIP_LOG"], "a") as log:
        log.write(json.dumps({"key": key, "tool": name}) + "\n")
    pause(f"tool:{name}")


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


class ScriptModel(Model):
    """Answers by the conversation's position; streams like a provider."""

    def __init__(self) -> None:
        self.config: dict[str, Any] = {"model_id": "script"}

    def update_config(self, **model_config: Any) -> None:
        self.config.update(model_config)

    def get_config(self) -> Any:
        return self.config

    async def stream(self, messages: Any, tool_specs: Any = None, system_prompt: Any = None, **kwargs: Any) -> AsyncGenerator[Any, None]:
        turn_index = sum(1 for m in messages if m["role"] == "assistant")
        pause(f"model:{turn_index}")
        turn = SCRIPT[turn_index]
        yield {"messageStart": {"role": "assistant"}}
        if "text" in turn:
            yield {"contentBlockStart": {"start": {}}}
            yield {"contentBlockDelta": {"delta": {"text": turn["text"]}}}
            yield {"contentBlockStop": {}}
        for ident, name, inputs in turn.get("tools", []):
            yield {"contentBlockStart": {"start": {"toolUse": {"toolUseId": ident, "name": name}}}}
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(inputs)}}}}
            yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "tool_use" if turn.get("tools") else "end_turn"}}
        yield {"metadata": {"usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15}, "metrics": {"latencyMs": 0}}}

    async def structured_output(self, *args: Any, **kwargs: Any) -> AsyncGenerator[Any, None]:
        raise NotImplementedError
        yield


store, kind = sys.argv[1], sys.argv[2]
executor = ConcurrentToolExecutor() if kind == "concurrent" else SequentialToolExecutor()
manager = None if PLAIN else TetherSessionManager("trip-1", store=store)
agent = Agent(model=ScriptModel(), tools=[lookup, weather, book], tool_executor=executor, callback_handler=None, session_manager=manager)
result = agent("Plan a trip to Oslo")
print(json.dumps({"stop_reason": result.stop_reason, "text": str(result).strip(), "state": agent.state.get()}, sort_keys=True))
for message in agent.messages:
    print(json.dumps({k: v for k, v in message.items() if k != "tracking_id"}, sort_keys=True))
