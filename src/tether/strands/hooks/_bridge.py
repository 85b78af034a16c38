"""The seam between Strands-style hooks and Tether's hook registry."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...hooks import HookRegistry as TetherHookRegistry
from ._translate import STRANDS_EVENTS_OF
from .events import AgentInitializedEvent
from .registry import HookRegistry


class StrandsHooks:
    """Strands hook providers and typed callbacks as one Tether hook provider.

    Registered on the facade's :class:`~tether.strands.hooks.HookRegistry` (itself a Tether
    registry), it adds the items to it directly. Registered on a plain Tether registry, it keeps
    them in a registry of its own and forwards each Tether event to it (for the event types its
    items listen to).
    """

    def __init__(self, items: Iterable[Any]) -> None:
        self.items = list(items)
        self.registry: HookRegistry | None = None

    def register_hooks(self, registry: TetherHookRegistry, **kwargs: Any) -> None:
        if isinstance(registry, HookRegistry):
            for item in self.items:
                registry.add(item)
            self.registry = registry
            return
        inner = HookRegistry()
        for item in self.items:
            inner.add(item)
        for tether_event in STRANDS_EVENTS_OF:
            if inner.has(tether_event):
                registry.add_callback(tether_event, inner.fire)
        self.registry = inner


def to_tether_hooks(items: Iterable[Any] | None) -> list[Any]:
    """The items of ``Agent(hooks=...)`` of the Strands facade as what ``tether.Agent`` takes.

    Args:
        items: Hook providers and callbacks, for Strands' events or Tether's (None for none).

    Returns:
        One :class:`StrandsHooks` provider holding them (none for no items).
    """
    listed = list(items or ())
    return [StrandsHooks(listed)] if listed else []


def fire_agent_initialized(agent: Any, hooks: HookRegistry | Iterable[Any]) -> None:
    """Fire ``AgentInitializedEvent`` (synchronously, as Strands does at the end of ``Agent.__init__``).

    Args:
        agent: The agent just built.
        hooks: The facade's :class:`HookRegistry` (the agent's ``hooks``), or the list
            :func:`to_tether_hooks` returned (after the agent registered it).
    """
    registries = [hooks] if isinstance(hooks, HookRegistry) else [item.registry for item in hooks if isinstance(item, StrandsHooks)]
    seen: set[int] = set()
    for registry in registries:
        if registry is not None and id(registry) not in seen:
            seen.add(id(registry))
            registry.invoke_callbacks(AgentInitializedEvent(agent=agent))


__all__ = ["StrandsHooks", "fire_agent_initialized", "to_tether_hooks"]
