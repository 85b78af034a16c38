"""Strands' hook registry on Tether: ``HookRegistry``, ``HookProvider``, ``BaseHookEvent``, ``HookEvent``.

The registry *is* a Tether :class:`tether.hooks.HookRegistry`, so an agent can use it as its
``hooks`` and Tether's loop fires it directly: when the loop fires one of Tether's events, the
registry runs the Tether callbacks registered for it and then (for ``After*`` events: first)
the Strands callbacks of the matching Strands event, built from it, copying back what the
Strands hooks changed (see :mod:`tether.strands.hooks._translate`). It accepts callbacks for
Strands' events and for Tether's alike.
"""

from __future__ import annotations

import bisect
import inspect
import types
import typing
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any

from ...errors import ConfigurationError
from ...hooks import AfterToolCall, BeforeToolCall, first_parameter_annotation
from ...hooks import HookEvent as TetherHookEvent
from ...hooks import HookRegistry as TetherHookRegistry
from ._base import BaseHookEvent, HookCallback, HookEvent, HookOrder, HookProvider
from ._translate import STRANDS_EVENTS_OF, ToolCallNote, dispatch


@dataclass
class _Entry:
    callback: HookCallback
    order: float


class HookRegistry(TetherHookRegistry):
    """Callbacks by event type, Strands' way (``add_callback``, ``add_hook``, ``invoke_callbacks``)."""

    __slots__ = ("_strands", "tool_calls")

    def __init__(self) -> None:
        super().__init__()
        self._strands: dict[type, list[_Entry]] = {}
        self.tool_calls: dict[str, ToolCallNote] = {}

    # -- registration ---------------------------------------------------------------------

    def add_callback(self, event_type: Any, callback: HookCallback, *, order: float = HookOrder.DEFAULT) -> None:
        """Call ``callback`` for events of ``event_type`` (a type, a list of types, or None to
        read it from the callback's first parameter annotation, unions included).

        Raises:
            ConfigurationError: (a ``ValueError``) the type is not an event type or cannot be
                inferred, the list is empty, or an ``AgentInitializedEvent`` callback is async.
        """
        if isinstance(event_type, list):
            if not event_type:
                raise ConfigurationError("event_type list cannot be empty")
            resolved = list(event_type)
        elif event_type is None:
            resolved = infer_event_types(callback)
        else:
            resolved = [event_type]
        for each in dict.fromkeys(resolved):
            if isinstance(each, type) and issubclass(each, TetherHookEvent):
                super().add_callback(each, callback)
                continue
            if not (isinstance(each, type) and issubclass(each, BaseHookEvent)):
                raise ConfigurationError(f"Invalid event type: {each} | must be a subclass of BaseHookEvent")
            if each.__name__ == "AgentInitializedEvent" and inspect.iscoroutinefunction(callback):
                raise ConfigurationError("AgentInitializedEvent can only be registered with a synchronous callback")
            bisect.insort(self._strands.setdefault(each, []), _Entry(callback, order), key=lambda entry: entry.order)

    def add_hook(self, hook: Any) -> None:
        """Register every callback of a hook provider."""
        hook.register_hooks(self)

    def add(self, item: Any) -> None:
        """Register a hook provider, or a callable whose first parameter names its event type(s)."""
        if hasattr(item, "register_hooks") and not inspect.isfunction(item):
            item.register_hooks(self)
            return
        if not callable(item):
            raise ConfigurationError(f"Invalid hook: {item!r}. Must be a HookProvider instance or a callable hook callback.")
        self.add_callback(None, item)

    # -- Strands' dispatch ----------------------------------------------------------------

    def get_callbacks_for(self, event: Any) -> Generator[HookCallback, None, None]:
        """The callbacks of ``event``'s type in order (lower order first; within an order,
        registration order, reversed for ``After*`` events)."""
        entries = self._strands.get(type(event), [])
        if not event.should_reverse_callbacks:
            yield from (entry.callback for entry in entries)
            return
        index = 0
        while index < len(entries):
            end = index
            while end < len(entries) and entries[end].order == entries[index].order:
                end += 1
            yield from (entry.callback for entry in reversed(entries[index:end]))
            index = end

    async def invoke_callbacks_async(self, event: Any) -> tuple[Any, list[Any]]:
        """Run the callbacks of ``event`` (awaiting async ones); returns ``(event, interrupts)``.

        An interrupt raised by a callback stops the run at once (Tether's interrupts), so the
        list is always empty.
        """
        for callback in list(self.get_callbacks_for(event)):
            outcome = callback(event)
            if inspect.isawaitable(outcome):
                await outcome
        return event, []

    def invoke_callbacks(self, event: Any) -> tuple[Any, list[Any]]:
        """Run the (synchronous) callbacks of ``event``; returns ``(event, interrupts)``.

        Raises:
            RuntimeError: A callback is async.
        """
        callbacks = list(self.get_callbacks_for(event))
        if any(inspect.iscoroutinefunction(callback) for callback in callbacks):
            raise RuntimeError(f"event=<{event}> | use invoke_callbacks_async to invoke async callback")
        for callback in callbacks:
            callback(event)
        return event, []

    def has_callbacks(self) -> bool:
        """Whether anything is registered (Strands or Tether events)."""
        return bool(self._strands) or bool(self._callbacks)

    def has_strands(self, event_type: type) -> bool:
        """Whether Strands callbacks listen for ``event_type``."""
        return event_type in self._strands

    # -- Tether's dispatch (the loop fires these) -----------------------------------------

    def has(self, event_type: type[TetherHookEvent]) -> bool:
        """Whether the loop must fire ``event_type``: always for tool calls (the facade answers a
        call to an unknown tool as Strands does, see :mod:`._translate`), otherwise when Tether or
        Strands callbacks listen."""
        if event_type in (BeforeToolCall, AfterToolCall):
            return True
        return super().has(event_type) or any(kind in self._strands for kind in STRANDS_EVENTS_OF.get(event_type, ()))

    async def fire(self, event: Any) -> Any:
        """Run the Tether callbacks of ``event`` and the Strands callbacks of its Strands
        counterpart (those first for ``After*`` events, so paired hooks nest)."""
        if event.reverse:
            await dispatch(self, event)
            await super().fire(event)
        else:
            await super().fire(event)
            await dispatch(self, event)
        return event


def infer_event_types(callback: HookCallback) -> list[type]:
    """The event types named by ``callback``'s first parameter annotation (each member of a union).

    Raises:
        ConfigurationError: There is no such annotation, or it names no event type.
    """
    annotation = first_parameter_annotation(callback, skip=("self", "cls"))
    members = typing.get_args(annotation) if typing.get_origin(annotation) in (typing.Union, types.UnionType) else (annotation,)
    found = [m for m in members if isinstance(m, type) and issubclass(m, BaseHookEvent | TetherHookEvent)]
    if not found or len(found) != len(members):
        raise ConfigurationError(
            f"cannot infer the event type of hook {getattr(callback, '__name__', callback)!r}: annotate its first parameter "
            "with an event type (e.g. `def on_tool(event: BeforeToolCallEvent)`) or pass the type to add_callback"
        )
    return found


__all__ = ["BaseHookEvent", "HookCallback", "HookEvent", "HookOrder", "HookProvider", "HookRegistry", "infer_event_types"]
