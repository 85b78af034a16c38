"""`AgentState`: the agent's JSON-only key/value state (captured in snapshots)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._json import json_roundtrip_copy
from .errors import ShapeError, StateError
from .loop.journal import DELETED, tracking


class AgentState:
    """Key/value state whose values must be JSON; reads and writes copy, so no aliasing leaks.

    A non-JSON value is refused with a :class:`~tether.errors.StateError` naming the key (and
    the path inside the value). Inside a tool call, reads and writes are noted in the run's
    :class:`~tether.loop.journal.StateJournal`, so the call's changes are stored with its result.
    """

    __slots__ = ("_get_store",)

    def __init__(self, get_store: Callable[[], dict[str, Any]]) -> None:
        self._get_store = get_store

    def get(self, key: str | None = None, default: Any = None) -> Any:
        """The value of ``key`` (a copy), or the whole state as a dict when ``key`` is None."""
        store = self._read(key)
        if key is None:
            return state_copy(store, "state")
        if key not in store:
            return default
        return state_copy(store[key], f"state[{key!r}]")

    def set(self, key: str, value: Any) -> None:
        """Store a JSON value under ``key``."""
        if not isinstance(key, str) or not key:
            raise StateError(f"state keys must be non-empty strings, got {key!r}")
        store = self._get_store()
        copy = state_copy(value, f"state[{key!r}]")
        active = tracking(store)
        if active is not None:
            active[0].write(active[1], key, copy)
        store[key] = copy

    def delete(self, key: str) -> None:
        """Remove ``key`` (no error if it is absent)."""
        store = self._get_store()
        active = tracking(store)
        if active is not None:
            if key in store:
                active[0].write(active[1], key, DELETED)
            else:
                active[0].read(active[1], key)
        store.pop(key, None)

    def keys(self) -> list[str]:
        """The keys of the state."""
        return list(self._read(None))

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and key in self._read(key)

    def __len__(self) -> int:
        return len(self._read(None))

    def _read(self, key: str | None) -> dict[str, Any]:
        """The store, with a read of ``key`` (None: all keys) noted for the running tool call."""
        store = self._get_store()
        active = tracking(store)
        if active is not None:
            active[0].read(active[1], key)
        return store

    def __repr__(self) -> str:
        return f"AgentState({self._get_store()!r})"


def state_copy(value: Any, what: str) -> Any:
    """A JSON copy of agent state or one of its values, or a :class:`StateError` naming the path.

    Accepted as :mod:`json` accepts it (tuples become lists, non-string keys strings); bytes
    and anything else json refuses are refused (see :func:`tether._json.json_roundtrip_copy`).
    """
    try:
        return json_roundtrip_copy(value, what)
    except ShapeError as exc:
        raise StateError(str(exc)) from None
