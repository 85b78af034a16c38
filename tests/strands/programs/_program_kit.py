"""What the crash-test programs share: the pause points, the side-effect log, a scripted model.

``$TRIP_PAUSE_AT`` (``tool:NAME`` or ``model:N``) makes a program write ``$TRIP_READY`` there and
wait to be killed; each tool appends ``{"key", "tool"}`` to ``$TRIP_LOG`` (its side effect, keyed
by its idempotency key). The model answers by the conversation's position (the number of assistant
messages it is sent), as a real model's answer depends on the conversation, so a resumed turn gets
the answer the uninterrupted one got.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import AsyncGenerator
from typing import Any

from strands import ToolContext
from strands.models import Model

from tether.strands.executor import idempotency_key

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


class ScriptModel(Model):
    """Answers by the conversation's position; streams like a provider."""

    def __init__(self, script: list[dict[str, Any]]) -> None:
        self.script = script
        self.config: dict[str, Any] = {"model_id": "script"}

    def update_config(self, **model_config: Any) -> None:
        self.config.update(model_config)

    def get_config(self) -> Any:
        return self.config

    async def stream(self, messages: Any, tool_specs: Any = None, system_prompt: Any = None, **kwargs: Any) -> AsyncGenerator[Any, None]:
        turn_index = sum(1 for m in messages if m["role"] == "assistant")
        pause(f"model:{turn_index}")
        turn = self.script[turn_index]
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


def show(agent: Any, result: Any, label: str = "result") -> None:
    """Print what a program's output is compared on: the result, the state, the conversation."""
    print(
        json.dumps(
            {"label": label, "stop_reason": result.stop_reason, "text": str(result).strip(), "state": agent.state.get()}, sort_keys=True
        )
    )
    for message in agent.messages:  # without the tracking id (random) and the timings (measured)
        shown = {k: v for k, v in message.items() if k not in ("tracking_id", "metadata")}
        shown["usage"] = (message.get("metadata") or {}).get("usage")
        print(json.dumps(shown, sort_keys=True))


def manager_or_none(session_id: str, store: str) -> Any:
    """The provider, or None with ``--plain`` (the same program without it)."""
    if PLAIN:
        return None
    from tether.strands.session_manager import TetherSessionManager

    return TetherSessionManager(session_id, store=store)
