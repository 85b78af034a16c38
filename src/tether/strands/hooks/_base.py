"""The base classes of Strands' hook events and providers (``BaseHookEvent``, ``HookEvent``,
``HookOrder``, ``HookProvider``), apart from the registry so the event classes need not import it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

A = TypeVar("A")


class HookOrder:
    """Execution priorities: lower runs first; equal orders keep registration order."""

    SDK_FIRST: int = -100
    INTERVENTION_OUTPUT: int = -90
    DEFAULT: int = 0
    MODEL_ROUTING: int = 50
    INTERVENTION_INPUT: int = 90
    SDK_LAST: int = 100


@dataclass
class BaseHookEvent:
    """Base of Strands' hook events: only the attributes an event declares writable can be set."""

    @property
    def should_reverse_callbacks(self) -> bool:
        """True for events whose callbacks run in reverse registration order (``After*``)."""
        return False

    def _can_write(self, name: str) -> bool:
        return False

    def __post_init__(self) -> None:
        super().__setattr__("_disallow_writes", True)

    def __setattr__(self, name: str, value: Any) -> None:
        if not hasattr(self, "_disallow_writes") or self._can_write(name):
            super().__setattr__(name, value)
            return
        raise AttributeError(f"Property {name} is not writable")


@dataclass
class HookEvent(BaseHookEvent, Generic[A]):
    """Base of single-agent hook events.

    Attributes:
        agent: The agent that fired the event.
    """

    agent: A


@runtime_checkable
class HookProvider(Protocol):
    """An object registering several callbacks: ``register_hooks(registry)``."""

    def register_hooks(self, registry: Any, **kwargs: Any) -> None: ...


HookCallback = Callable[[Any], Any]
"""A callable taking one event (sync or async)."""


__all__ = ["BaseHookEvent", "HookCallback", "HookEvent", "HookOrder", "HookProvider"]
