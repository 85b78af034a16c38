"""`AgentRegistry`: agent, graph and swarm factories by name, so workers rebuild them from JSON.

Nothing unpicklable crosses the wire: a run names its agent (``"support-bot"``) and carries a
small JSON ``config``; every worker holds the same registry and calls the factory to get the
model, tools, hooks and conversation manager. Keep configs small: they travel with every
activity of the run.

Nested runs are named by *paths*: ``"lead/researcher"`` is the agent behind the agent tool
``researcher`` of agent ``lead``; ``"pipeline/summarize"`` is the agent of node ``summarize`` of
graph ``pipeline``; ``"team/coder"`` is member ``coder`` of swarm ``team`` (with its handoff
tool). Each step is resolved on the worker from the object the factory built, so a child
workflow needs no registration of its own and always runs the child its parent holds.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from .._json import json_roundtrip_copy
from ..errors import ConfigurationError, ShapeError
from ..runnable import Runnable, kind_of
from .shapes import Config

if TYPE_CHECKING:
    from ..agent import Agent
    from ..multiagent.graph import Graph
    from ..multiagent.swarm import Swarm

AgentFactory = Callable[[Config], "Agent"]
"""Builds a fresh :class:`~tether.Agent` from a JSON config."""
GraphFactory = Callable[[Config], "Graph"]
"""Builds a :class:`~tether.multiagent.Graph` from a JSON config."""
SwarmFactory = Callable[[Config], "Swarm"]
"""Builds a :class:`~tether.multiagent.Swarm` from a JSON config."""

SEPARATOR = "/"
"""Separates the steps of a nested name (``"lead/researcher"``); registered names cannot hold it."""


class AgentRegistry:
    """Agent, graph and swarm factories by name (one namespace)."""

    def __init__(self) -> None:
        self._factories: dict[str, tuple[str, Callable[[Config], Any]]] = {}

    def register(self, name: str, factory: AgentFactory | None = None) -> Any:
        """Register agent ``factory`` under ``name``; usable as ``@registry.register("name")``.

        Args:
            name: The agent's name on the wire (no ``/``: that separates nested names).
            factory: Builds a fresh :class:`~tether.Agent` from the run's JSON config.
        """
        return self._register("agent", name, factory)

    def register_graph(self, name: str, factory: GraphFactory | None = None) -> Any:
        """Register graph ``factory`` under ``name`` (runs: ``TetherClient.start_graph``).

        Args:
            name: The graph's name on the wire (no ``/``).
            factory: Builds the :class:`~tether.multiagent.Graph` from the run's JSON config;
                every worker must build the same graph (nodes, edges, conditions).
        """
        return self._register("graph", name, factory)

    def register_swarm(self, name: str, factory: SwarmFactory | None = None) -> Any:
        """Register swarm ``factory`` under ``name`` (runs: ``TetherClient.start_swarm``).

        Args:
            name: The swarm's name on the wire (no ``/``).
            factory: Builds the :class:`~tether.multiagent.Swarm` from the run's JSON config.
        """
        return self._register("swarm", name, factory)

    def _register(self, kind: str, name: str, factory: Callable[[Config], Any] | None) -> Any:
        if not isinstance(name, str) or not name or SEPARATOR in name:
            raise ConfigurationError(f"a registered {kind} name must be a non-empty string without {SEPARATOR!r}, got {name!r}")

        def add(func: Callable[[Config], Any]) -> Callable[[Config], Any]:
            if name in self._factories:
                raise ConfigurationError(f"a factory named {name!r} is already registered")
            self._factories[name] = (kind, func)
            return func

        if factory is not None:
            return add(factory)
        return add

    @property
    def names(self) -> list[str]:
        """The registered names (agents, graphs and swarms)."""
        return sorted(self._factories)

    def build(self, name: str, config: Config | None = None) -> Agent:
        """A fresh agent for ``name`` (a registered agent, or a nested name) built from ``config``."""
        return cast("Agent", self._resolve_kind(name, config, "agent"))

    def build_graph(self, name: str, config: Config | None = None) -> Graph:
        """The graph ``name`` (registered, or a nested graph node) built from ``config``."""
        return cast("Graph", self._resolve_kind(name, config, "graph"))

    def build_swarm(self, name: str, config: Config | None = None) -> Swarm:
        """The swarm ``name`` built from ``config``."""
        return cast("Swarm", self._resolve_kind(name, config, "swarm"))

    def _resolve_kind(self, name: str, config: Config | None, kind: str) -> Runnable:
        """:meth:`_resolve`, refused unless it names a runnable of ``kind`` (:class:`~tether.runnable.Runnable`)."""
        built = self._resolve(name, config)
        if kind_of(built) != kind:
            raise ConfigurationError(f"{name!r} names {_a(type(built).__name__)}, not {_a(kind)}")
        return cast("Runnable", built)

    def _resolve(self, name: str, config: Config | None) -> Any:
        if not isinstance(name, str) or not name:
            raise ConfigurationError(f"an agent name must be a non-empty string, got {name!r}")
        head, *steps = name.split(SEPARATOR)
        entry = self._factories.get(head)
        if entry is None:
            known = ", ".join(self.names) or "none"
            raise ConfigurationError(f"no factory named {head!r} in this worker's registry (known: {known})")
        kind, factory = entry
        try:
            config = json_roundtrip_copy(config or {}, f"config of {kind} {head!r}")
        except ShapeError as exc:
            raise ConfigurationError(str(exc)) from None
        built = factory(config)
        if kind_of(built) != kind:
            raise ConfigurationError(f"the factory of {kind} {head!r} returned {type(built).__name__}, not {_a(kind.capitalize())}")
        path = head
        for step in steps:
            built = _step(built, step, path)
            path = f"{path}{SEPARATOR}{step}"
        return built

    def __contains__(self, name: object) -> bool:
        return name in self._factories


def _a(noun: str) -> str:
    """``noun`` with its indefinite article."""
    return f"an {noun}" if noun[:1].lower() in "aeiou" else f"a {noun}"


def _step(parent: Any, step: str, path: str) -> Any:
    """The child ``step`` of ``parent`` (named ``path``): an agent tool's agent, a graph node's
    agent or graph, a swarm member's agent (:meth:`~tether.runnable.Runnable.child`)."""
    if kind_of(parent) is None:
        raise ConfigurationError(f"{path!r} is a {type(parent).__name__}: it has no nested {step!r}")
    return parent.child(step, path)


__all__ = ["SEPARATOR", "AgentFactory", "AgentRegistry", "GraphFactory", "SwarmFactory"]
