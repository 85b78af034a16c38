"""The corpus's deterministic model: a Strands ``Model`` subclass that plays a script.

Each program hands ``FakeModel`` a list of turns; every call to ``stream`` plays the next one as
Bedrock-style stream events (``messageStart``, ``contentBlockStart``/``Delta``/``Stop``,
``messageStop``, ``metadata`` with usage), exactly as a real provider does. A turn is a dict::

    {"text": "...", "tools": [("toolUseId", "name", {...input})], "usage": (input_tokens, output_tokens)}

(text and tools both optional; ``{"overflow": True}`` raises ``ContextWindowOverflowException``, as a
provider does when the conversation no longer fits). Fixed ``toolUseId`` values keep every printed message stable.
The model records what it was asked (message count, tool names offered, last user text) so a
program can print what the agent sent it. It is imported as ``strands.models.Model`` like any
user model, so the corpus runner's import rewrite swaps it onto ``tether.strands`` too.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterable
from typing import Any

from strands.models import Model
from strands.types.exceptions import ContextWindowOverflowException


def text(value: str, usage: tuple[int, int] = (10, 5)) -> dict[str, Any]:
    """A turn that answers with text."""
    return {"text": value, "usage": usage}


def overflow() -> dict[str, Any]:
    """A turn where the provider reports the context window is exceeded."""
    return {"overflow": True}


def call(tool_use_id: str, name: str, inputs: dict[str, Any], usage: tuple[int, int] = (10, 5), say: str | None = None) -> dict[str, Any]:
    """A turn that calls one tool (optionally saying something first)."""
    turn: dict[str, Any] = {"tools": [(tool_use_id, name, inputs)], "usage": usage}
    if say is not None:
        turn["text"] = say
    return turn


def calls(tools: list[tuple[str, str, dict[str, Any]]], usage: tuple[int, int] = (10, 5)) -> dict[str, Any]:
    """A turn that calls several tools at once."""
    return {"tools": tools, "usage": usage}


def _user_text(messages: Any) -> str:
    for message in reversed(messages or []):
        if message.get("role") == "user":
            for block in message.get("content", []):
                if "text" in block:
                    return str(block["text"])
            return "<non-text>"
    return ""


class FakeModel(Model):
    """A scripted model: plays one turn per ``stream`` call and records what it was asked."""

    def __init__(self, turns: list[dict[str, Any]], model_id: str = "fake-model") -> None:
        self.turns = list(turns)
        self.config: dict[str, Any] = {"model_id": model_id}
        self.requests: list[dict[str, Any]] = []

    def update_config(self, **model_config: Any) -> None:
        self.config.update(model_config)

    def get_config(self) -> Any:
        return self.config

    async def stream(
        self,
        messages: Any,
        tool_specs: Any = None,
        system_prompt: str | None = None,
        **kwargs: Any,
    ) -> AsyncIterable[Any]:
        self.requests.append(
            {
                "messages": len(messages),
                "tools": sorted(spec["name"] for spec in tool_specs or []),
                "system_prompt": system_prompt,
                "last_user_text": _user_text(messages),
            }
        )
        if not self.turns:
            raise RuntimeError("FakeModel: the script has no turn left")
        turn = self.turns.pop(0)
        if turn.get("overflow"):
            raise ContextWindowOverflowException("FakeModel: the context window is full")
        yield {"messageStart": {"role": "assistant"}}
        if turn.get("text") is not None:
            yield {"contentBlockStart": {"start": {}}}
            yield {"contentBlockDelta": {"delta": {"text": turn["text"]}}}
            yield {"contentBlockStop": {}}
        for tool_use_id, name, inputs in turn.get("tools", []):
            yield {"contentBlockStart": {"start": {"toolUse": {"toolUseId": tool_use_id, "name": name}}}}
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(inputs)}}}}
            yield {"contentBlockStop": {}}
        stop = turn.get("stop") or ("tool_use" if turn.get("tools") else "end_turn")
        yield {"messageStop": {"stopReason": stop}}
        input_tokens, output_tokens = turn.get("usage", (10, 5))
        yield {
            "metadata": {
                "usage": {"inputTokens": input_tokens, "outputTokens": output_tokens, "totalTokens": input_tokens + output_tokens},
                "metrics": {"latencyMs": 0},
            }
        }

    async def structured_output(
        self, output_model: Any, prompt: Any, system_prompt: str | None = None, **kwargs: Any
    ) -> AsyncGenerator[dict[str, Any], None]:
        """Plays the next turn, which must call a tool named after ``output_model``, and parses its input."""
        name = output_model.__name__
        spec = {"name": name, "description": output_model.__doc__ or name, "inputSchema": {"json": output_model.model_json_schema()}}
        chunks: dict[str, str] = {}
        current = None
        async for event in self.stream(prompt, [spec], system_prompt, tool_choice={"any": {}}):
            start = event.get("contentBlockStart", {}).get("start", {})
            if "toolUse" in start:
                current = start["toolUse"]["name"]
                chunks[current] = ""
            delta = event.get("contentBlockDelta", {}).get("delta", {})
            if "toolUse" in delta and current is not None:
                chunks[current] += delta["toolUse"]["input"]
            yield event
        if name not in chunks:
            raise ValueError(f"FakeModel: the turn did not call {name}")
        yield {"output": output_model(**json.loads(chunks[name]))}
