"""Strands' `strands.agent.state.AgentState`: JSON key/value state, built standalone from a dict.

Strands users write ``Agent(state=AgentState({"k": 1}))``; the agent's own ``agent.state`` is
the same class bound to its run state (Tether's :class:`tether.agent_state.AgentState`, whose
values must be JSON and are copied on every read and write). A value that is not JSON is
refused as Strands refuses it: a ``ValueError`` ("Value is not JSON serializable: ...") that is
also Tether's :class:`~tether.errors.StateError` naming the key
(:class:`~tether.strands.types.exceptions.StateValueError`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...agent_state import AgentState as _TetherAgentState
from ...agent_state import state_copy
from ...errors import StateError
from ..types.exceptions import StateValueError


def strands_state_error(exc: StateError) -> StateValueError:
    """Tether's state error as the facade raises it: Strands' message first, Tether's detail after."""
    if isinstance(exc, StateValueError):
        return exc
    return StateValueError(
        f"Value is not JSON serializable: {exc}. Only JSON-compatible types (str, int, float, bool, list, dict, None) are allowed."
    )


def checked_initial_state(initial_state: Any) -> dict[str, Any]:
    """A JSON copy of the dict given as ``Agent(state=...)`` or ``AgentState(...)``.

    Raises:
        StateValueError: Not a dict (Strands' message), or a value that is not JSON.
    """
    if initial_state is None:
        return {}
    if not isinstance(initial_state, dict):
        raise StateValueError(f"state must be an AgentState object or a dict, got {type(initial_state).__name__}")
    try:
        copied: dict[str, Any] = state_copy(initial_state, "state")
    except StateError as exc:
        raise strands_state_error(exc) from None
    return copied


class AgentState(_TetherAgentState):
    """Key/value agent state: ``get(key=None)``, ``set(key, value)``, ``delete(key)``."""

    __slots__ = ()

    def __init__(self, initial_state: dict[str, Any] | Callable[[], dict[str, Any]] | None = None) -> None:
        """A standalone state holding a copy of ``initial_state`` (or, given a callable, the
        view of the dict it returns: how an agent binds its state to its run).

        Raises:
            StateValueError: ``initial_state`` is not a dict of JSON values.
        """
        if callable(initial_state):
            super().__init__(initial_state)
            return
        store = checked_initial_state(initial_state)
        super().__init__(lambda: store)

    def set(self, key: str, value: Any) -> None:
        """Store a JSON value under ``key``.

        Raises:
            StateValueError: ``key`` is not a non-empty string, or ``value`` is not JSON.
        """
        if key is None:
            raise StateValueError("Key cannot be None")
        if not isinstance(key, str):
            raise StateValueError("Key must be a string")
        if not key.strip():
            raise StateValueError("Key cannot be empty")
        try:
            super().set(key, value)
        except StateError as exc:
            raise strands_state_error(exc) from None


__all__ = ["AgentState"]
