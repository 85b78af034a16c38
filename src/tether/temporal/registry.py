"""`AgentRegistry`: agent factories by name, so workers rebuild agents from plain JSON.

Nothing unpicklable crosses the wire: a run names its agent (``"support-bot"``) and carries a
small JSON ``config``; every worker holds the same registry and calls the factory to get the
model, tools, hooks and conversation manager. Keep configs small: they travel with every
activity of the run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .._json import json_roundtrip_copy
from ..errors import ConfigurationError, ShapeError

if TYPE_CHECKING:
    from ..agent import Agent

AgentFactory = Callable[[dict[str, Any]], "Agent"]
"""Builds a fresh :class:`~tether.Agent` from a JSON config."""


class AgentRegistry:
    """Agent factories by name."""

    def __init__(self) -> None:
        self._factories: dict[str, AgentFactory] = {}

    def register(self, name: str, factory: AgentFactory | None = None) -> Any:
        """Register ``factory`` under ``name``; usable as ``@registry.register("name")``."""
        if not isinstance(name, str) or not name:
            raise ConfigurationError(f"agent name must be a non-empty string, got {name!r}")

        def add(func: AgentFactory) -> AgentFactory:
            if name in self._factories:
                raise ConfigurationError(f"an agent factory named {name!r} is already registered")
            self._factories[name] = func
            return func

        if factory is not None:
            return add(factory)
        return add

    @property
    def names(self) -> list[str]:
        return sorted(self._factories)

    def build(self, name: str, config: dict[str, Any] | None = None) -> Agent:
        """A fresh agent for ``name`` built from ``config``."""
        from ..agent import Agent

        factory = self._factories.get(name)
        if factory is None:
            known = ", ".join(self.names) or "none"
            raise ConfigurationError(f"no agent factory named {name!r} in this worker's registry (known: {known})")
        try:
            config = json_roundtrip_copy(config or {}, f"config of agent {name!r}")
        except ShapeError as exc:
            raise ConfigurationError(str(exc)) from None
        agent = factory(config)
        if not isinstance(agent, Agent):
            raise ConfigurationError(f"the factory of agent {name!r} returned {type(agent).__name__}, not an Agent")
        return agent

    def __contains__(self, name: object) -> bool:
        return name in self._factories


__all__ = ["AgentFactory", "AgentRegistry"]
