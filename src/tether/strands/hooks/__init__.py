"""Strands' `strands.hooks` on Tether (see :mod:`tether.strands`): ``HookRegistry``, ``HookProvider``
and the event classes, fired from Tether's loop (:mod:`tether.strands.hooks._translate`)."""

from ._bridge import fire_agent_initialized, to_tether_hooks
from .events import (
    AfterInvocationEvent,
    AfterModelCallEvent,
    AfterMultiAgentInvocationEvent,
    AfterNodeCallEvent,
    AfterToolCallEvent,
    AfterToolsEvent,
    AgentInitializedEvent,
    BeforeInvocationEvent,
    BeforeModelCallEvent,
    BeforeMultiAgentInvocationEvent,
    BeforeNodeCallEvent,
    BeforeToolCallEvent,
    BeforeToolsEvent,
    MessageAddedEvent,
    MessageUpdatedEvent,
    MultiAgentInitializedEvent,
)
from .registry import BaseHookEvent, HookCallback, HookEvent, HookOrder, HookProvider, HookRegistry

__all__ = [
    "AfterInvocationEvent",
    "AfterModelCallEvent",
    "AfterMultiAgentInvocationEvent",
    "AfterNodeCallEvent",
    "AfterToolCallEvent",
    "AfterToolsEvent",
    "AgentInitializedEvent",
    "BaseHookEvent",
    "BeforeInvocationEvent",
    "BeforeModelCallEvent",
    "BeforeMultiAgentInvocationEvent",
    "BeforeNodeCallEvent",
    "BeforeToolCallEvent",
    "BeforeToolsEvent",
    "HookCallback",
    "HookEvent",
    "HookOrder",
    "HookProvider",
    "HookRegistry",
    "MessageAddedEvent",
    "MessageUpdatedEvent",
    "MultiAgentInitializedEvent",
    "fire_agent_initialized",
    "to_tether_hooks",
]
