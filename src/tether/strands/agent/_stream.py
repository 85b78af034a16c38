"""Strands' stream events from Tether's: the adapter behind ``stream_async`` and ``callback_handler``.

Tether's loop yields ``text_delta``, ``message``, ``tool_start``, ``tool_result`` and ``result``
events (:mod:`tether.types.events`); Strands yields the raw model chunks (``{"event": ...}``)
and events derived from them (``{"data": ..., "delta": ...}``, ``{"type": "tool_use_stream",
"current_tool_use": ...}``, reasoning), plus cycle markers and ``{"message": ...}``.

The raw chunks come from a tee around the agent's model (:class:`RawTee`, installed by the
facade for one invocation) that appends each chunk to :attr:`StrandsStream.raw`; they are
flushed, in order, before the next Tether event, so their order relative to the messages is
Strands' (a text chunk is followed at once by its ``text_delta``, which flushes it).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pydantic

from ...models.base import Model
from ...types import ModelRequest, StreamEvent
from ..models._custom import CustomModel


class RawTee:
    """A model that streams ``model``'s events unchanged, appending each raw chunk to ``sink``.

    The raw chunks are the ones the user's model yielded: for a Strands-style model
    (:class:`~..models._custom.CustomModel`) the events its ``stream`` yielded, before the
    adapter reshapes them for Tether's fold (Strands forwards every chunk, e.g. a text block's
    ``contentBlockStart``); for a Tether model, its own events. Anything else is read from the
    wrapped model (``model_id``, ``get_config``, ...).
    """

    def __init__(self, model: Model, sink: list[StreamEvent]) -> None:
        self.wrapped = model
        self.sink = sink

    @property
    def model_id(self) -> str:
        return self.wrapped.model_id

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        if isinstance(self.wrapped, CustomModel):
            async for event in self.wrapped.stream(request, raw=self.sink.append):
                yield event
            return
        async for event in self.wrapped.stream(request):
            self.sink.append(event)
            yield event

    def __getattr__(self, name: str) -> Any:
        return getattr(self.wrapped, name)


def _parse_input(tool_use: dict[str, Any]) -> None:
    """Replace a streamed tool use's input text by its JSON value, as Strands does when the
    block stops (the events that carried the dict show it parsed afterwards, as in Strands)."""
    if not tool_use:
        return
    raw = tool_use.get("input", "")
    if isinstance(raw, str):
        try:
            tool_use["input"] = json.loads(raw) if raw.strip() else {}
        except ValueError:
            tool_use["input"] = {}


def _has_tool_result(message: Any) -> bool:
    return any("toolResult" in block for block in message.get("content", ()))


class StrandsStream:
    """Turns one invocation's Tether events into Strands' event dicts.

    Args:
        agent: The agent, added to the model-stream events as Strands adds it (``agent``).
        invocation_state: The invocation's state, merged into the ``init_event_loop`` event
            and into every delta event, as Strands merges it.
        output_model: The structured-output model of the invocation, if any: a valid call of
            its tool (``output_tool``) gives Strands' ``{"structured_output": ...}`` event just
            before the tool-result message.
        output_tool: That tool's name.
    """

    def __init__(
        self,
        agent: Any,
        invocation_state: dict[str, Any],
        output_model: type[pydantic.BaseModel] | None = None,
        output_tool: str | None = None,
    ) -> None:
        self.raw: list[StreamEvent] = []
        self._output_model = output_model
        self._output_tool = output_tool
        self._output_calls: dict[str, Any] = {}
        self._agent = agent
        self._state = invocation_state
        self._current_tool_use: dict[str, Any] = {}
        self._new_cycle = False
        self._prompt = True
        self._tool_uses: dict[str, dict[str, Any]] = {}
        self._tool_uses_by_id: dict[str, dict[str, Any]] = {}

    def opening(self) -> list[dict[str, Any]]:
        """The events before the first model call."""
        return [{"init_event_loop": True, **self._state}, {"start": True}, {"start_event_loop": True}]

    def convert(self, event: Any) -> Iterator[dict[str, Any]]:
        """The Strands events for Tether event ``event`` (the raw chunks before it first).

        Lazily: each event is made when the previous one was consumed, so a callback sees a
        streamed tool use as it is at that point (its input still JSON text), as in Strands.
        A ``result`` event gives only the pending chunks: the facade builds the last event.
        """
        yield from self.flush()
        kind = event.get("type")
        if "path" in event:
            yield from self._forwarded(event)
        elif kind == "message":
            message = event["message"]
            if self._prompt and message["role"] == "user" and not _has_tool_result(message):
                return  # the prompt itself: Strands does not stream it
            self._prompt = False
            yield from self._structured(message)
            yield {"message": message}
            if message["role"] == "user" and _has_tool_result(message):
                self._new_cycle = True
        elif kind == "tool_start":
            tool_use = event["toolUse"]
            self._tool_uses[tool_use["name"]] = tool_use
            self._tool_uses_by_id[tool_use["toolUseId"]] = tool_use
        elif kind == "tool_stream":
            yield {key: value for key, value in event.items()}

    def interrupted(self, interrupts: list[Any]) -> Iterator[dict[str, Any]]:
        """Strands' ``tool_interrupt_event`` per interrupted tool call (before the result)."""
        grouped: dict[str, list[Any]] = {}
        for interrupt in interrupts:
            if interrupt.tool_use_id is not None:
                grouped.setdefault(interrupt.tool_use_id, []).append(interrupt)
        yield from self.flush()
        for tool_use_id, raised in grouped.items():
            tool_use = self._tool_uses_by_id.get(tool_use_id)
            if tool_use is not None:
                yield {"tool_interrupt_event": {"tool_use": tool_use, "interrupts": raised}}

    def _structured(self, message: Any) -> list[dict[str, Any]]:
        """``{"structured_output": value}`` for a tool-result message accepting a structured-output call."""
        if self._output_model is None:
            return []
        out: list[dict[str, Any]] = []
        for block in message["content"]:
            if message["role"] == "assistant" and "toolUse" in block and block["toolUse"]["name"] == self._output_tool:
                self._output_calls[block["toolUse"]["toolUseId"]] = block["toolUse"]["input"]
            elif "toolResult" in block and block["toolResult"]["status"] == "success":
                called = self._output_calls.pop(block["toolResult"]["toolUseId"], None)
                if called is not None:
                    out.append({"structured_output": self._output_model.model_validate(called)})
        return out

    def flush(self) -> Iterator[dict[str, Any]]:
        """The raw model chunks teed since the last call, each followed by the event Strands
        derives from it (lazily: a chunk is folded only once the events before it were consumed)."""
        while self.raw:
            chunk = self.raw.pop(0)
            if "modelState" in chunk:
                continue  # Tether's own provider state, not a Converse event
            self._prompt = False
            if self._new_cycle:
                self._new_cycle = False
                yield from ({"start": True}, {"start": True}, {"start_event_loop": True})
            yield {"event": chunk}
            derived = self._derived(chunk)
            if derived is not None:
                yield derived

    def _derived(self, chunk: StreamEvent) -> dict[str, Any] | None:
        """The delta event Strands' stream processing yields after ``chunk`` (None: none)."""
        if "contentBlockStart" in chunk:
            start: Any = chunk["contentBlockStart"].get("start", {})
            tool_use = start.get("toolUse")
            self._current_tool_use = {}
            if tool_use:
                self._current_tool_use = {"toolUseId": tool_use["toolUseId"], "name": tool_use["name"], "input": ""}
                if "reasoningSignature" in tool_use:
                    self._current_tool_use["reasoningSignature"] = tool_use["reasoningSignature"]
            return None
        if "contentBlockStop" in chunk:
            _parse_input(self._current_tool_use)
            self._current_tool_use = {}
            return None
        if "contentBlockDelta" not in chunk:
            return None
        delta: Any = chunk["contentBlockDelta"]["delta"]
        event: dict[str, Any]
        if "toolUse" in delta:
            current = self._current_tool_use
            current["input"] = current.get("input", "") + delta["toolUse"].get("input", "")
            for field in ("toolUseId", "name"):
                if field not in current and field in delta["toolUse"]:
                    current[field] = delta["toolUse"][field]
            event = {"type": "tool_use_stream", "delta": delta, "current_tool_use": current}
        elif "text" in delta:
            event = {"data": delta["text"], "delta": delta}
        elif "citation" in delta:
            return {"citation": delta["citation"], "delta": delta}
        elif "reasoningContent" in delta:
            reasoning = delta["reasoningContent"]
            if "text" in reasoning:
                event = {"reasoningText": reasoning["text"], "delta": delta, "reasoning": True}
            elif "signature" in reasoning:
                event = {"reasoning_signature": reasoning["signature"], "delta": delta, "reasoning": True}
            elif "redactedContent" in reasoning:
                event = {"reasoningRedactedContent": reasoning["redactedContent"], "delta": delta, "reasoning": True}
            else:
                return None
        else:
            return None
        event.update(self._state)
        event.setdefault("agent", self._agent)
        return event

    def _forwarded(self, event: Any) -> list[dict[str, Any]]:
        """An event of an agent used as a tool, as Strands' ``tool_stream`` event of that call."""
        path = event.get("path") or []
        tool_use = self._tool_uses.get(path[0]) if path else None
        if event.get("type") == "message" and event["message"]["role"] == "user" and not _has_tool_result(event["message"]):
            return []  # the sub-agent's prompt: Strands does not stream prompts
        data = {key: value for key, value in event.items() if key not in ("type", "path")}
        if event.get("type") == "text_delta":
            data = {"data": event["text"]}
        elif event.get("type") == "reasoning_delta":
            data = {"reasoningText": event["text"], "reasoning": True}
        elif event.get("type") == "tool_start":
            data = {"current_tool_use": event["toolUse"]}
        return [{"type": "tool_stream", "tool_stream_event": {"tool_use": tool_use, "data": data}}]


__all__ = ["RawTee", "StrandsStream"]
