"""Strands' `strands.agent.state.AgentState`: JSON key/value state, built standalone from a dict.

Strands users write ``Agent(state=AgentState({"k": 1}))``; the agent's own ``agent.state`` is
the same class bound to its run state (Tether's :class:`tether.agent_state.AgentState`, whose
values must be JSON and are copied on every read and write).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...agent_state import AgentState as _TetherAgentState
from ...agent_state import state_copy
from ...errors import StateError


class AgentState(_TetherAgentState):
    """Key/value agent state: ``get(key=None)``, ``set(key, value)``, ``delete(key)``."""

    __slots__ = ()

    def __init__(self, initial_state: dict[str, Any] | Callable[[], dict[str, Any]] | None = None) -> None:
        """A standalone state holding a copy of ``initial_state`` (or, given a callable, the
        view of the dict it returns: how an agent binds its state to its run).

        Raises:
            StateError: ``initial_state`` is not a dict of JSON values.
        """
        if callable(initial_state):
            super().__init__(initial_state)
            return
        if initial_state is None:
            initial_state = {}
        if not isinstance(initial_state, dict):
            raise StateError(f"AgentState takes a dict of JSON values, got {type(initial_state).__name__}")
        store: dict[str, Any] = state_copy(initial_state, "state")
        super().__init__(lambda: store)


__all__ = ["AgentState"]
