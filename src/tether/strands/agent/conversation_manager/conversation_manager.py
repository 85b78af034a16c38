"""Strands' `ConversationManager` base: Tether's (:class:`tether.conversation.ConversationManager`).

Strands' managers hold their state (``removed_message_count``, a summary) themselves; Tether's
keep it in the run (``RunState.conversation_manager_state``) so it is durable.
:class:`StrandsManagerState` gives the facade's managers Strands' public methods over the state
of the run the manager last worked on.
"""

from __future__ import annotations

from typing import Any

from ....conversation import ConversationManager
from ....errors import ConfigurationError
from ....loop.state import RunState
from ....models.base import Model
from ....snapshot.shapes import manager_state_out
from ....types import Message


def refuse_unsupported(manager: str, **arguments: Any) -> None:
    """Raise for a Strands manager argument set to a behaviour Tether does not provide.

    Raises:
        ConfigurationError: Naming the manager and the argument.
    """
    for name, value in arguments.items():
        if value not in (None, False):
            raise ConfigurationError(
                f"{manager}({name}=...) is not supported by tether.strands: Tether's manager has no such behaviour; leave {name} unset"
            )


class StrandsManagerState(ConversationManager):
    """Strands' ``get_state()``, ``restore_from_session()`` and ``removed_message_count``.

    They read and write the conversation-manager state of the run this manager last managed
    (the agent's run: every call Tether's loop, snapshots and sessions make passes it), so they
    show what Strands' manager would hold, and what a snapshot or a session stores. Before the
    manager has managed a run they use a state of its own, which the first run it manages
    adopts if that run has none yet (as Strands' manager carries its state into its agent).
    """

    _managed: RunState | None = None
    _unbound: dict[str, Any] | None = None

    def _current(self) -> dict[str, Any]:
        """The state Strands' methods read and write (the managed run's, or the manager's own)."""
        if self._managed is not None:
            return self._managed.conversation_manager_state
        if self._unbound is None:
            self._unbound = {}
        return self._unbound

    def _manage(self, run: RunState) -> None:
        if run is self._managed:
            return
        if self._managed is None and self._unbound and not run.conversation_manager_state:
            run.conversation_manager_state = dict(self._unbound)
        self._managed = run
        self._unbound = None

    @property
    def removed_message_count(self) -> int:
        """The conversation's original messages this manager removed (summaries not counted)."""
        return int(self._current().get("removed_message_count", 0))

    @removed_message_count.setter
    def removed_message_count(self, value: int) -> None:
        self._current()["removed_message_count"] = value

    def get_state(self) -> dict[str, Any]:
        """The manager's state as Strands' ``get_state()`` returns it (JSON, tagged ``__name__``)."""
        return manager_state_out(self.kind, self.state_name(), self._current())

    def restore_from_session(self, state: dict[str, Any]) -> list[Message] | None:
        """Adopt a state read from a session, as Strands does.

        Returns:
            The summary message to put before the session's messages (a summarizing manager's
            state that holds one), else None.

        Raises:
            SnapshotError: ``state`` was written by another kind of manager (also a ``ValueError``,
                what Strands raises).
        """
        holder = RunState()
        super().restore(holder, state)
        current = self._current()
        current.clear()
        current.update(holder.conversation_manager_state)
        summary = current.get("summary_message")
        return [summary] if summary else None

    def state(self, run: RunState) -> dict[str, Any]:
        self._manage(run)
        return super().state(run)

    def restore(self, run: RunState, state: dict[str, Any]) -> None:
        self._manage(run)
        super().restore(run, state)

    def apply_management(self, run: RunState) -> None:
        self._manage(run)
        super().apply_management(run)

    async def reduce_context(self, run: RunState, model: Model, error: Exception | None = None) -> None:
        self._manage(run)
        await super().reduce_context(run, model, error)


__all__ = ["ConversationManager", "StrandsManagerState", "refuse_unsupported"]
