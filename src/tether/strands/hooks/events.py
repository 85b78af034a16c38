"""Strands' hook event classes, with Strands' attribute names and writable attributes.

Those with a Tether counterpart are fired from Tether's loop (see
:mod:`tether.strands.hooks._translate`); ``AgentInitializedEvent`` is fired by the facade agent
(:func:`tether.strands.hooks.fire_agent_initialized`). The others are defined so programs that
import them run, but Tether's loop has no point where they happen (listed in ``_translate``).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from ._base import BaseHookEvent, HookEvent


class _Interruptible:
    """``interrupt(name, reason=None, response=None)`` of events that may stop for a human."""

    def interrupt(self, name: str, reason: Any = None, response: Any = None) -> Any:
        """Stop the run for a human answer; after the resume, return that answer.

        Raises:
            RuntimeError: The event was not fired by a Tether run (made by hand).
        """
        if response is not None:
            return response
        raiser = getattr(getattr(self, "_tether_event", None), "_raiser", None)
        if raiser is None:
            raise RuntimeError("this event was not fired by an agent and cannot raise interrupts")
        return raiser(name, reason, ident=self._interrupt_id(name))  # Strands' id of the interrupt

    def _interrupt_id(self, name: str) -> str:
        return f"v1:{type(self).__name__}:{uuid.uuid5(uuid.NAMESPACE_OID, name)}"


@dataclass
class AgentInitializedEvent(HookEvent[Any]):
    """The agent finished its construction."""


@dataclass
class BeforeInvocationEvent(HookEvent[Any]):
    """An invocation begins (``messages`` and ``cancel`` are writable in Strands)."""

    invocation_state: dict[str, Any] = field(default_factory=dict)
    messages: list[Any] | None = None
    cancel: bool | str = False

    def _can_write(self, name: str) -> bool:
        return name in ("messages", "cancel")


@dataclass
class AfterInvocationEvent(HookEvent[Any]):
    """An invocation ended (``resume`` is writable in Strands)."""

    invocation_state: dict[str, Any] = field(default_factory=dict)
    result: Any = None
    resume: Any = None

    def _can_write(self, name: str) -> bool:
        return name == "resume"

    @property
    def should_reverse_callbacks(self) -> bool:
        return True


@dataclass
class MessageAddedEvent(HookEvent[Any]):
    """A message was added to the conversation."""

    message: Any = None


@dataclass
class MessageUpdatedEvent(HookEvent[Any]):
    """The framework replaced a message (never fired on Tether)."""

    tracking_id: str = ""
    message: Any = None


@dataclass
class BeforeToolsEvent(HookEvent[Any], _Interruptible):
    """A batch of tool calls is about to run (never fired on Tether)."""

    message: Any = None
    invocation_state: dict[str, Any] = field(default_factory=dict)
    cancel: bool | str = False

    def _can_write(self, name: str) -> bool:
        return name == "cancel"


@dataclass
class AfterToolsEvent(HookEvent[Any]):
    """A batch of tool calls finished (never fired on Tether)."""

    message: Any = None
    invocation_state: dict[str, Any] = field(default_factory=dict)
    end_turn: Any = False

    def _can_write(self, name: str) -> bool:
        return name == "end_turn"

    @property
    def should_reverse_callbacks(self) -> bool:
        return True


@dataclass
class BeforeToolCallEvent(HookEvent[Any], _Interruptible):
    """A tool call is about to run: replace ``selected_tool`` or ``tool_use``, set ``cancel_tool``,
    or ``interrupt(...)``."""

    selected_tool: Any = None
    tool_use: Any = None
    invocation_state: dict[str, Any] = field(default_factory=dict)
    cancel_tool: bool | str = False

    def _can_write(self, name: str) -> bool:
        return name in ("cancel_tool", "selected_tool", "tool_use")

    def _interrupt_id(self, name: str) -> str:
        return f"v1:before_tool_call:{self.tool_use['toolUseId']}:{uuid.uuid5(uuid.NAMESPACE_OID, name)}"


@dataclass
class AfterToolCallEvent(HookEvent[Any]):
    """A tool call finished: assign ``result`` to change what the model sees."""

    selected_tool: Any = None
    tool_use: Any = None
    invocation_state: dict[str, Any] = field(default_factory=dict)
    result: Any = None
    exception: Exception | None = None
    cancel_message: str | None = None
    duration: float | None = None
    retry: bool = False

    def _can_write(self, name: str) -> bool:
        return name in ("result", "retry")

    @property
    def should_reverse_callbacks(self) -> bool:
        return True


@dataclass
class BeforeModelCallEvent(HookEvent[Any]):
    """A model call is about to happen."""

    invocation_state: dict[str, Any] = field(default_factory=dict)
    projected_input_tokens: int | None = None
    cancel: bool | str = False

    def _can_write(self, name: str) -> bool:
        return name == "cancel"


@dataclass
class AfterModelCallEvent(HookEvent[Any]):
    """A model call finished (``stop_response``) or failed (``exception``); set ``retry`` to call again."""

    @dataclass
    class ModelStopResponse:
        """The response of a successful model call."""

        message: Any
        stop_reason: Any

    invocation_state: dict[str, Any] = field(default_factory=dict)
    stop_response: AfterModelCallEvent.ModelStopResponse | None = None
    exception: Exception | None = None
    retry: bool = False

    def _can_write(self, name: str) -> bool:
        return name == "retry"

    @property
    def should_reverse_callbacks(self) -> bool:
        return True


@dataclass
class MultiAgentInitializedEvent(BaseHookEvent):
    """A multi-agent orchestrator was built (never fired on Tether)."""

    source: Any = None
    invocation_state: dict[str, Any] | None = None


@dataclass
class BeforeNodeCallEvent(BaseHookEvent, _Interruptible):
    """A graph or swarm node is about to run (never fired on Tether)."""

    source: Any = None
    node_id: str = ""
    invocation_state: dict[str, Any] | None = None
    cancel_node: bool | str = False

    def _can_write(self, name: str) -> bool:
        return name == "cancel_node"


@dataclass
class AfterNodeCallEvent(BaseHookEvent):
    """A graph or swarm node finished (never fired on Tether)."""

    source: Any = None
    node_id: str = ""
    invocation_state: dict[str, Any] | None = None

    @property
    def should_reverse_callbacks(self) -> bool:
        return True


@dataclass
class BeforeMultiAgentInvocationEvent(BaseHookEvent):
    """A multi-agent invocation begins (never fired on Tether)."""

    source: Any = None
    invocation_state: dict[str, Any] | None = None


@dataclass
class AfterMultiAgentInvocationEvent(BaseHookEvent):
    """A multi-agent invocation ended (never fired on Tether)."""

    source: Any = None
    invocation_state: dict[str, Any] | None = None

    @property
    def should_reverse_callbacks(self) -> bool:
        return True


__all__ = [
    "AfterInvocationEvent",
    "AfterModelCallEvent",
    "AfterMultiAgentInvocationEvent",
    "AfterNodeCallEvent",
    "AfterToolCallEvent",
    "AfterToolsEvent",
    "AgentInitializedEvent",
    "BeforeInvocationEvent",
    "BeforeModelCallEvent",
    "BeforeMultiAgentInvocationEvent",
    "BeforeNodeCallEvent",
    "BeforeToolCallEvent",
    "BeforeToolsEvent",
    "MessageAddedEvent",
    "MessageUpdatedEvent",
    "MultiAgentInitializedEvent",
]
