"""The stream events of a recorded model response, for a resumed turn that reuses it.

A model call Strands makes streams the response to the agent's ``callback_handler`` (and to
``stream_async``): text deltas, tool-use deltas (``current_tool_use``), the raw chunks, then the
message. A cut-off turn finished after a crash reuses the responses recorded before the crash
instead of asking the model again, so without these the restarted program's handler would see
none of them (a handler indexing its tool-use events fails). :func:`response_events` rebuilds them
as Strands does for a real call: the response as model stream chunks (``messageStart``,
``contentBlockStart``/``Delta``/``Stop``, ``messageStop``) through Strands' own
``process_stream``. :func:`turn_responses` finds the recorded messages of the cut-off turn already
in the restored conversation (the session manager hands their events back at the start of the
resumed invocation, :class:`~tether.strands._stops.StopReplay`).
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any, cast

from strands.event_loop.streaming import process_stream
from strands.types._events import ModelMessageEvent, ToolResultMessageEvent
from strands.types.events import ModelStopReason, TypedEvent

if TYPE_CHECKING:
    from strands.types.content import Message


def _chunks(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The model stream chunks from which Strands builds ``message`` (blocks without a stream form are left out)."""
    chunks: list[dict[str, Any]] = [{"messageStart": {"role": "assistant"}}]
    for block in message.get("content") or []:
        if "text" in block:
            start: dict[str, Any] = {}
            deltas: list[dict[str, Any]] = [{"text": block["text"]}]
        elif "toolUse" in block:
            use = block["toolUse"]
            start = {"toolUse": {"toolUseId": use["toolUseId"], "name": use["name"]}}
            deltas = [{"toolUse": {"input": json.dumps(use.get("input") or {})}}]
        elif "reasoningContent" in block and "reasoningText" in block["reasoningContent"]:
            reasoning = block["reasoningContent"]["reasoningText"]
            start = {}
            deltas = [{"reasoningContent": {"text": reasoning.get("text", "")}}]
            if "signature" in reasoning:
                deltas.append({"reasoningContent": {"signature": reasoning["signature"]}})
        else:
            continue
        chunks.append({"contentBlockStart": {"start": start}})
        chunks.extend({"contentBlockDelta": {"delta": delta}} for delta in deltas)
        chunks.append({"contentBlockStop": {}})
    stop = "tool_use" if any("toolUse" in block for block in message.get("content") or []) else "end_turn"
    chunks.append({"messageStop": {"stopReason": stop}})
    return chunks


async def _iterate(chunks: list[dict[str, Any]]) -> AsyncIterator[Any]:
    for chunk in chunks:
        yield chunk


async def response_events(message: Mapping[str, Any]) -> AsyncGenerator[TypedEvent, None]:
    """The events Strands streams while a model produces ``message`` (its closing
    ``ModelStopReason`` left out: the caller ends the call with the recorded message itself)."""
    async for event in process_stream(_iterate(_chunks(message))):
        if not isinstance(event, ModelStopReason):
            yield event


async def turn_events(messages: list[dict[str, Any]]) -> AsyncGenerator[TypedEvent, None]:
    """The events of recorded messages of a turn, as the event loop emits them: each response's
    stream then its message; each message of tool results."""
    for message in messages:
        if message.get("role") == "assistant":
            async for event in response_events(message):
                yield event
            yield ModelMessageEvent(message=cast("Message", message))
        else:
            yield ToolResultMessageEvent(message=message)


def turn_responses(messages: list[Any]) -> list[Any]:
    """The messages of the turn at the end of ``messages`` after its prompt: the model's responses
    and the messages of tool results (the prompt is the last user message without tool results)."""
    start = len(messages)
    while start > 0:
        message = messages[start - 1]
        results = any("toolResult" in block for block in message.get("content") or [])
        if message.get("role") != "assistant" and not results:
            break
        start -= 1
    return list(messages[start:]) if start > 0 else []


__all__ = ["response_events", "turn_events", "turn_responses"]
