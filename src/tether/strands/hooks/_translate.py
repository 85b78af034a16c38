"""Tether's hook events → Strands' (and what Strands hooks change → back into Tether's event).

=======================  ==========================================================
Tether event             Strands event (writable attributes honoured)
=======================  ==========================================================
BeforeInvocation         BeforeInvocationEvent
AfterInvocation          AfterInvocationEvent
MessageAdded             MessageAddedEvent
BeforeModelCall          BeforeModelCallEvent
AfterModelCall           AfterModelCallEvent (``retry``)
BeforeToolCall           BeforeToolCallEvent (``cancel_tool``, ``selected_tool``,
                         ``tool_use``, ``interrupt()``)
AfterToolCall            AfterToolCallEvent (``result``)
=======================  ==========================================================

Writable attributes Tether's loop has no way to honour yet (``BeforeInvocationEvent.cancel``
and a replaced ``messages``, ``AfterInvocationEvent.resume``, ``BeforeModelCallEvent.cancel``,
``AfterToolCallEvent.retry``) raise :class:`~tether.errors.ConfigurationError` naming the
attribute when a hook sets them, instead of being silently ignored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Protocol

from ...errors import ConfigurationError
from ...hooks import (
    AfterInvocation,
    AfterModelCall,
    AfterToolCall,
    BeforeInvocation,
    BeforeModelCall,
    BeforeToolCall,
    MessageAdded,
)
from .events import (
    AfterInvocationEvent,
    AfterModelCallEvent,
    AfterToolCallEvent,
    BeforeInvocationEvent,
    BeforeModelCallEvent,
    BeforeToolCallEvent,
    MessageAddedEvent,
)


class HookRegistry(Protocol):
    """What :func:`dispatch` needs of the facade's registry."""

    tool_calls: dict[str, ToolCallNote]
    """What ``BeforeToolCall`` decided for each call in flight (by toolUseId), for its ``AfterToolCall``."""

    def has_strands(self, event_type: type) -> bool: ...

    async def invoke_callbacks_async(self, event: Any) -> tuple[Any, list[Any]]: ...


STRANDS_EVENTS_OF: dict[type, tuple[type, ...]] = {
    BeforeInvocation: (BeforeInvocationEvent,),
    AfterInvocation: (AfterInvocationEvent,),
    MessageAdded: (MessageAddedEvent,),
    BeforeModelCall: (BeforeModelCallEvent,),
    AfterModelCall: (AfterModelCallEvent,),
    BeforeToolCall: (BeforeToolCallEvent,),
    AfterToolCall: (AfterToolCallEvent,),
}
"""The Strands events fired for each Tether event."""

CANCELLED_BY_HOOK = "tool cancelled by user"
"""Strands' error text for a call a hook cancelled with ``cancel_tool = True``."""


@dataclass
class ToolCallNote:
    """What a call's ``BeforeToolCall`` decided, kept until its ``AfterToolCall``.

    Strands' ``AfterToolCallEvent`` carries the call's ``invocation_state``, the
    ``cancel_message`` of a call a hook cancelled (with ``selected_tool`` None) and the
    exception of a call to an unknown tool; Tether's ``AfterToolCall`` carries none of these.
    """

    invocation_state: dict[str, Any] = field(default_factory=dict)
    cancel_message: str | None = None
    exception: Exception | None = None


_TOOL_NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_\-]{1,}$")
_TOOL_NAME_MAX_LENGTH = 64


def unknown_tool_message(name: str) -> str:
    """Strands' error text for a call to a tool the agent does not have: a name that is not a
    valid tool name (Strands' ``validate_tool_use_name``) gets its validation error instead."""
    if not _TOOL_NAME_PATTERN.match(name):
        return f"Error: tool_name=<{name}> | invalid tool name pattern"
    if len(name) > _TOOL_NAME_MAX_LENGTH:
        return f"Error: tool_name=<{name}>, tool_name_max_length=<{_TOOL_NAME_MAX_LENGTH}> | invalid tool name length"
    return f"Unknown tool: {name}"


def _invocation_state() -> dict[str, Any]:
    """The current invocation's ``invocation_state`` (set by the facade agent for the call), or a
    new empty dict outside a facade invocation."""
    from ..models._custom import INVOCATION_STATE

    state = INVOCATION_STATE.get()
    return state if state is not None else {}


def _strands_result(result: Any) -> Any:
    """Tether's result as Strands' :class:`~tether.strands.agent.agent_result.AgentResult` (what the
    facade returns), None staying None."""
    if result is None:
        return None
    from ..agent.agent_result import AgentResult

    return result if isinstance(result, AgentResult) else AgentResult.of(result)


def _unsupported(event: Any, name: str) -> ConfigurationError:
    return ConfigurationError(
        f"a hook set {type(event).__name__}.{name}, which Tether's loop does not support yet; "
        "see docs/guides/from-strands.md for the supported hook attributes"
    )


async def dispatch(registry: HookRegistry, event: Any) -> None:
    """Fire the Strands counterpart of Tether's ``event`` on ``registry`` and apply its changes to ``event``."""
    kind = type(event)
    if kind is BeforeToolCall:
        await _before_tool(registry, event)
    elif kind is AfterToolCall:
        note = registry.tool_calls.pop(event.tool_use["toolUseId"], None) if event.tool_use is not None else None
        note = note if note is not None else ToolCallNote()
        if registry.has_strands(AfterToolCallEvent):
            after_tool = AfterToolCallEvent(
                agent=event.agent,
                selected_tool=None if note.cancel_message is not None else event.selected_tool,
                tool_use=event.tool_use,
                invocation_state=note.invocation_state,
                result=event.result,
                exception=event.exception if event.exception is not None else note.exception,
                cancel_message=note.cancel_message,
            )
            await registry.invoke_callbacks_async(after_tool)
            if after_tool.retry:
                raise _unsupported(after_tool, "retry")
            event.result = after_tool.result
    elif kind is AfterModelCall:
        if registry.has_strands(AfterModelCallEvent):
            response = None
            if event.message is not None:
                response = AfterModelCallEvent.ModelStopResponse(message=event.message, stop_reason=event.stop_reason)
            after_model = AfterModelCallEvent(
                agent=event.agent, invocation_state=_invocation_state(), stop_response=response, exception=event.exception
            )
            await registry.invoke_callbacks_async(after_model)
            event.retry = event.retry or after_model.retry
    elif kind is BeforeModelCall:
        if registry.has_strands(BeforeModelCallEvent):
            before_model = BeforeModelCallEvent(agent=event.agent, invocation_state=_invocation_state())
            await registry.invoke_callbacks_async(before_model)
            if before_model.cancel:
                raise _unsupported(before_model, "cancel")
    elif kind is MessageAdded:
        if registry.has_strands(MessageAddedEvent):
            await registry.invoke_callbacks_async(MessageAddedEvent(agent=event.agent, message=event.message))
    elif kind is BeforeInvocation:
        if registry.has_strands(BeforeInvocationEvent):
            before = BeforeInvocationEvent(agent=event.agent, invocation_state=_invocation_state(), messages=event.messages)
            await registry.invoke_callbacks_async(before)
            if before.cancel:
                raise _unsupported(before, "cancel")
            if before.messages is not event.messages:
                if event.resumed:  # a resumed invocation appends no input to replace
                    raise _unsupported(before, "messages")
                event.messages = before.messages
    elif kind is AfterInvocation and registry.has_strands(AfterInvocationEvent):
        after = AfterInvocationEvent(agent=event.agent, invocation_state=_invocation_state(), result=_strands_result(event.result))
        await registry.invoke_callbacks_async(after)
        if after.resume is not None:
            if not hasattr(event.agent, "hook_resume"):  # not a tether.strands agent: no one would read it
                raise _unsupported(after, "resume")
            event.agent.hook_resume = after.resume


async def _before_tool(registry: HookRegistry, event: BeforeToolCall) -> None:
    """Fire ``BeforeToolCallEvent`` (when listened for); a call to an unknown tool (none selected
    after the hooks) is answered with Strands' ``Unknown tool: NAME`` error result."""
    if registry.has_strands(BeforeToolCallEvent):
        await _before_tool_hooks(registry, event)
    tool_use = event.tool_use
    if tool_use is None:
        return
    note = ToolCallNote(invocation_state=event.invocation_state)
    if event.cancel_tool:
        note.cancel_message = event.cancel_tool if isinstance(event.cancel_tool, str) else CANCELLED_BY_HOOK
        event.cancel_tool = note.cancel_message
    elif event.selected_tool is None and not _is_output_tool(event.agent, tool_use["name"]):
        message = unknown_tool_message(tool_use["name"])
        event.cancel_tool = message
        note.exception = Exception(message)
    registry.tool_calls[tool_use["toolUseId"]] = note


def _is_output_tool(agent: Any, name: str) -> bool:
    """Whether ``name`` is the structured-output tool of one of ``agent``'s output models (the
    loop answers it itself: it is not in the agent's tools, yet not unknown)."""
    specs: dict[Any, Any] = getattr(agent, "_output_specs", None) or {}
    return any(spec.get("name") == name for spec in specs.values())


async def _before_tool_hooks(registry: HookRegistry, event: BeforeToolCall) -> None:
    tool_use = event.tool_use
    strands_event = BeforeToolCallEvent(
        agent=event.agent, selected_tool=event.selected_tool, tool_use=tool_use, invocation_state=event.invocation_state
    )
    object.__setattr__(strands_event, "_tether_event", event)
    await registry.invoke_callbacks_async(strands_event)
    selected = strands_event.selected_tool
    replaced = strands_event.tool_use
    if tool_use is not None and replaced is not tool_use and isinstance(replaced, dict):
        renamed = replaced.get("name", tool_use["name"]) != tool_use["name"]
        tool_use["input"] = replaced.get("input", tool_use["input"])
        tool_use["name"] = replaced.get("name", tool_use["name"])
        if renamed and selected is event.selected_tool:
            registry_of_agent = getattr(event.agent, "tool_registry", None)
            selected = registry_of_agent.get(tool_use["name"]) if registry_of_agent is not None else None
    event.selected_tool = selected
    if strands_event.cancel_tool:
        event.cancel_tool = strands_event.cancel_tool


__all__ = ["CANCELLED_BY_HOOK", "STRANDS_EVENTS_OF", "ToolCallNote", "dispatch", "unknown_tool_message"]
