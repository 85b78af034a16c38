"""Typed hook events and the registry that dispatches them.

A hook is a callable (sync or async) taking one event. Register it with
``HookRegistry.add_callback(EventType, fn)``, through a provider object with
``register_hooks(registry)``, or pass it to ``Agent(hooks=[...])`` with its first parameter
annotated with the event type it wants. ``Before*`` callbacks run in registration order,
``After*`` ones in reverse, so paired hooks nest like context managers.

Events carry the live objects for the duration of the callback only; whatever a hook changes
that must survive (a rewritten result, a replaced input) is folded into the run state by the
driver, never kept in the hook.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, get_type_hints, runtime_checkable

from .errors import ConfigurationError
from .interrupts import InterruptRaiser
from .types import JSONValue, Message, ToolResult, ToolUse

if TYPE_CHECKING:
    from .agent import Agent
    from .result import AgentResult
    from .tools.base import Tool


@dataclass
class HookEvent:
    """Base of all hook events."""

    agent: Agent

    reverse: bool = field(default=False, init=False, repr=False)


@dataclass
class BeforeInvocation(HookEvent):
    """An invocation starts; ``resumed`` tells a resume (checkpoint/interrupt) from a new call.

    Attributes:
        agent: The agent whose invocation fired the event.
        resumed: True when the invocation resumes a paused or interrupted one.
        resumed_from: What it resumes from (see below), None for a new call.
        messages: A new call's input messages, about to be appended (None when resumed). A hook
            may edit them or set another list: the invocation appends what it leaves (an input
            guardrail redacting the prompt, for one).
    """

    resumed: bool = False
    resumed_from: str | None = None
    """``"checkpoint:after_model"``, ``"checkpoint:after_tools"``, ``"interrupt"`` or ``"continue"``."""
    messages: list[Message] | None = None


@dataclass
class AfterInvocation(HookEvent):
    """An invocation ended (normally, paused, interrupted or with an error).

    Attributes:
        agent: The agent whose invocation fired the event.
        result: The invocation's result; None when it ended with an error.
        resumed: True when the invocation resumed a paused or interrupted one.
        resumed_from: What it resumed from (as in :class:`BeforeInvocation`), or None.
    """

    result: AgentResult | None = None
    resumed: bool = False
    resumed_from: str | None = None
    reverse: bool = field(default=True, init=False, repr=False)


@dataclass
class MessageAdded(HookEvent):
    """A message was appended to the conversation.

    Attributes:
        agent: The agent whose invocation fired the event.
        message: The message (the live object in the conversation: do not change it).
    """

    message: Message | None = None


@dataclass
class BeforeModelCall(HookEvent):
    """A model call is about to happen.

    Attributes:
        agent: The agent whose invocation fired the event.
        cycle_index: The cycle of the call (0 for the first model call of the run).
    """

    cycle_index: int = 0


@dataclass
class AfterModelCall(HookEvent):
    """A model call finished (``message``) or failed (``exception``).

    Set ``retry = True`` to discard this response and call the model again.

    Attributes:
        agent: The agent whose invocation fired the event.
        message: The complete assistant message, or None when the call failed.
        stop_reason: Why the model stopped (``end_turn``, ``tool_use``, ...), or None.
        exception: The error of a failed call, or None.
        retry: Set it to True to call the model again.
    """

    message: Message | None = None
    stop_reason: str | None = None
    exception: BaseException | None = None
    retry: bool = False
    reverse: bool = field(default=True, init=False, repr=False)


@dataclass
class BeforeToolCall(HookEvent):
    """A tool call is about to run.

    Replace ``selected_tool`` or ``tool_use["input"]`` to change what runs; set
    ``cancel_tool`` to ``True`` or a message to skip it with an error result; call
    ``interrupt(name, reason)`` to stop for a human answer (returns the answer on resume).

    Attributes:
        agent: The agent whose invocation fired the event.
        tool_use: The call (``toolUseId``, ``name``, ``input``).
        selected_tool: The tool that will run, None for an unknown name; replace it to run another.
        invocation_state: The caller's per-call dict (``invocation_state=`` of the call).
        cancel_tool: Set it to True or a message to skip the call with an error result.
    """

    tool_use: ToolUse | None = None
    selected_tool: Tool | None = None
    invocation_state: dict[str, Any] = field(default_factory=dict)
    cancel_tool: bool | str = False
    _raiser: InterruptRaiser | None = field(default=None, repr=False)

    def interrupt(self, name: str, reason: JSONValue = None) -> JSONValue:
        """Stop the run for a human answer; after the resume, return that answer."""
        if self._raiser is None:
            raise RuntimeError("this event cannot raise interrupts")
        return self._raiser(name, reason)


@dataclass
class AfterToolCall(HookEvent):
    """A tool call finished; assign ``result`` to rewrite what the model sees.

    Attributes:
        agent: The agent whose invocation fired the event.
        tool_use: The call (``toolUseId``, ``name``, ``input``).
        selected_tool: The tool that ran, or None for an unknown name.
        result: The call's result (a tool's failure is an ``error`` result); assign to replace it.
        exception: An exception the call raised, if any (tool failures are error results,
            so it is normally None).
    """

    tool_use: ToolUse | None = None
    selected_tool: Tool | None = None
    result: ToolResult | None = None
    exception: BaseException | None = None
    reverse: bool = field(default=True, init=False, repr=False)


E = TypeVar("E", bound=HookEvent)
HookCallback = Callable[[E], Awaitable[None] | None]


@runtime_checkable
class HookProvider(Protocol):
    """An object that registers several callbacks at once."""

    def register_hooks(self, registry: HookRegistry) -> None: ...


class HookRegistry:
    """Callbacks by event type."""

    __slots__ = ("_callbacks",)

    def __init__(self) -> None:
        self._callbacks: dict[type[HookEvent], list[Callable[[Any], Any]]] = {}

    def add_callback(self, event_type: type[E], callback: HookCallback[E]) -> None:
        """Call ``callback`` for every event of ``event_type``."""
        if not (isinstance(event_type, type) and issubclass(event_type, HookEvent)):
            raise ConfigurationError(f"{event_type!r} is not a hook event type")
        self._callbacks.setdefault(event_type, []).append(callback)

    def add(self, item: Any) -> None:
        """Register a hook provider, or a callable whose first parameter names its event type."""
        if isinstance(item, HookProvider) and not inspect.isfunction(item):
            item.register_hooks(self)
            return
        if not callable(item):
            raise ConfigurationError(f"{item!r} is neither a hook provider nor a callable")
        self.add_callback(_event_type_of(item), item)

    def has(self, event_type: type[HookEvent]) -> bool:
        """Whether anything listens for ``event_type`` (lets the driver skip building events)."""
        return event_type in self._callbacks

    async def fire(self, event: E) -> E:
        """Run the callbacks of ``event``'s type; returns the (possibly modified) event."""
        callbacks = self._callbacks.get(type(event))
        if not callbacks:
            return event
        for callback in reversed(callbacks) if event.reverse else callbacks:
            outcome = callback(event)
            if inspect.isawaitable(outcome):
                await outcome
        return event


def first_parameter_annotation(callback: Callable[..., Any], skip: tuple[str, ...] = ()) -> Any:
    """The annotation of ``callback``'s first parameter (string annotations resolved where they
    can be), the event type a typed hook callback names.

    Args:
        callback: A function, bound method or callable object.
        skip: Parameter names not counted as the first (``("self", "cls")`` for unbound methods).

    Raises:
        ConfigurationError: ``callback`` cannot be inspected or takes no parameter.
    """
    try:
        params = [p for p in inspect.signature(callback).parameters.values() if p.name not in skip]
    except (TypeError, ValueError) as exc:
        raise ConfigurationError(f"cannot inspect hook {callback!r}: {exc}") from exc
    if not params:
        raise ConfigurationError(f"hook {callback!r} takes no parameter; annotate its first parameter with an event type")
    target: Any = callback if inspect.isfunction(callback) or inspect.ismethod(callback) else type(callback).__call__
    try:
        hints = get_type_hints(target)
    except Exception:
        hints = {}
    return hints.get(params[0].name, params[0].annotation)


def _event_type_of(callback: Callable[..., Any]) -> type[HookEvent]:
    annotation = first_parameter_annotation(callback)
    if isinstance(annotation, type) and issubclass(annotation, HookEvent):
        return annotation
    raise ConfigurationError(
        f"hook {getattr(callback, '__name__', callback)!r}: annotate its first parameter with the event "
        "type it wants (e.g. `def on_tool(event: BeforeToolCall)`)"
    )


__all__ = [
    "AfterInvocation",
    "AfterModelCall",
    "AfterToolCall",
    "BeforeInvocation",
    "BeforeModelCall",
    "BeforeToolCall",
    "HookEvent",
    "HookProvider",
    "HookRegistry",
    "MessageAdded",
]
