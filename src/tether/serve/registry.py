"""What ``tether serve`` runs: named zero-argument factories of agents, graphs and swarms.

A registry is a dict ``{name: factory}``; each factory returns a fresh
:class:`~tether.Agent`, :class:`~tether.multiagent.Graph` or :class:`~tether.multiagent.Swarm`
every time it is called (an agent runs one invocation at a time, so every run gets its own).

A run the server starts remembers which entry it belongs to, so that a server started later
(after a crash, in another process) resumes it with the same factory: an agent's run keeps the
name in its agent state under :data:`SERVE_KEY`; a graph or swarm run is matched by the spec its
state keeps (the nodes and edges, as JSON). Stored data only *names* an entry of the registry
the operator wrote: it never chooses a module to import or code to run.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Mapping
from typing import Any, TypeAlias, cast

from ..errors import ConfigurationError
from ..runnable import Runnable, kind_of

Registry: TypeAlias = Mapping[str, Callable[[], Any]]

SERVE_KEY = "tether.serve"
"""The agent-state key where a served agent run records its registry name (``{"agent": NAME}``)."""

_NAME = re.compile(r"[A-Za-z0-9._-]{1,64}")


def check_registry(registry: Any, where: str = "the registry") -> dict[str, Callable[[], Any]]:
    """``registry`` as a checked dict: names of 1-64 characters from ``A-Z a-z 0-9 . _ -``
    mapped to callables; :class:`~tether.errors.ConfigurationError` naming what is wrong."""
    if not isinstance(registry, Mapping):
        raise ConfigurationError(f"{where} must be a dict of agent names to zero-argument factories, got {type(registry).__name__}")
    if not registry:
        raise ConfigurationError(f"{where} is empty: map at least one agent name to a factory")
    checked: dict[str, Callable[[], Any]] = {}
    for name, factory in registry.items():
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise ConfigurationError(f"{where}: agent name {name!r} is invalid (use 1-64 characters from A-Z a-z 0-9 . _ -)")
        if not callable(factory):
            raise ConfigurationError(f"{where}[{name!r}] is a {type(factory).__name__}, not a zero-argument factory")
        checked[name] = factory
    return checked


def load_registry(spec: str) -> dict[str, Callable[[], Any]]:
    """The registry ``spec`` names, checked (:func:`check_registry`).

    Args:
        spec: ``MODULE:ATTR``: the module is imported from ``sys.path`` (``tether serve`` puts
            the current directory first), ATTR is the dict in it.
    """
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ConfigurationError(f"{spec!r} is not MODULE:ATTR (e.g. myapp.agents:AGENTS)")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigurationError(f"cannot import {module_name!r} for {spec!r}: {exc}") from None
    try:
        value = getattr(module, attr)
    except AttributeError:
        raise ConfigurationError(f"module {module_name!r} has no attribute {attr!r}") from None
    return check_registry(value, spec)


def build(registry: Registry, name: str) -> Runnable:
    """A fresh runnable of entry ``name``; ConfigurationError when the factory returns something else."""
    made = registry[name]()
    if kind_of(made) is None:
        raise ConfigurationError(f"agent factory {name!r} returned a {type(made).__name__}, not an Agent, a Graph or a Swarm")
    return cast(Runnable, made)


def entry_of(registry: Registry, head: Mapping[str, Any]) -> str | None:
    """The registry name a stored run belongs to (None: a run this registry did not start)."""
    state = head.get("state")
    if not isinstance(state, dict):
        return None
    marker = state.get(SERVE_KEY)
    if isinstance(marker, dict) and isinstance(marker.get("agent"), str):
        name: str = marker["agent"]
        return name if name in registry else None
    for name in registry:
        made = registry[name]()
        if kind_of(made) is not None and made.owns_state(state):
            return name
    return None


__all__ = ["SERVE_KEY", "Registry", "Runnable", "build", "check_registry", "entry_of", "load_registry"]
