"""The events ``Agent.stream_async`` yields: one ``TypedDict`` per kind, told apart by ``type``.

Every event is a plain dict with a ``"type"`` key naming its kind, so a caller narrows the
:data:`AgentEvent` union with ``if event["type"] == "tool_start": ...`` and mypy knows which
other keys are there. An invocation yields, in order of occurrence:

- ``text_delta`` / ``reasoning_delta``: a piece of the model's text or reasoning as it streams;
- ``message``: a message appended to the conversation (the prompt, each model response, each
  cycle's tool results, a corrective turn);
- ``tool_start``: a tool call is about to run;
- ``tool_result``: a tool call finished (its result, before the cycle closes);
- ``result``: last, the invocation's :class:`~tether.AgentResult`.

This module defines the events the loop produces (:data:`LoopEvent`); the ``result`` event and
the whole union, :data:`tether.AgentEvent`, are in :mod:`tether.events`, beside the result they
carry (the data shapes here import nothing above them).

An agent used as a tool (:mod:`tether.multiagent`) forwards its own events (all but its
``result``) into its caller's stream while it runs, each with a ``path``: the tool names from
the caller down to the agent that produced it (``["researcher"]``, ``["researcher",
"searcher"]``). Events of the agent being iterated have no ``path``.
"""

from __future__ import annotations

from typing import Literal, TypeAlias, TypedDict

from .content import Message, ToolResult, ToolUse


class _Forwarded(TypedDict, total=False):
    """The optional key of an event a child agent produced (see the module docstring)."""

    path: list[str]
    """The tool names from the agent being iterated down to the agent that produced the event."""


class TextDeltaEvent(_Forwarded):
    """A piece of the model's text, as it streams (not sent by ``invoke_async``)."""

    type: Literal["text_delta"]
    text: str


class ReasoningDeltaEvent(_Forwarded):
    """A piece of the model's reasoning text, as it streams (not sent by ``invoke_async``)."""

    type: Literal["reasoning_delta"]
    text: str


class MessageEvent(_Forwarded):
    """A message appended to the conversation."""

    type: Literal["message"]
    message: Message


class ToolStartEvent(_Forwarded):
    """A tool call about to run."""

    type: Literal["tool_start"]
    toolUse: ToolUse


class ToolResultEvent(_Forwarded):
    """A tool call's result, once it finished."""

    type: Literal["tool_result"]
    toolResult: ToolResult


DeltaEvent: TypeAlias = TextDeltaEvent | ReasoningDeltaEvent
"""The events a model call streams while it runs."""

LoopEvent: TypeAlias = TextDeltaEvent | ReasoningDeltaEvent | MessageEvent | ToolStartEvent | ToolResultEvent
"""Any event the loop yields while it runs: every event of ``Agent.stream_async`` but its last,
``result`` (:data:`tether.AgentEvent` adds it). Also what a tool's ``context.emit`` forwards."""

__all__ = [
    "DeltaEvent",
    "LoopEvent",
    "MessageEvent",
    "ReasoningDeltaEvent",
    "TextDeltaEvent",
    "ToolResultEvent",
    "ToolStartEvent",
]
