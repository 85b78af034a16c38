"""Conversation managers keep the conversation within the model's context window.

A manager is configuration; everything it must remember lives in
``RunState.conversation_manager_state`` (JSON). In a snapshot the state is tagged with the
manager's class name (``__name__``, as Strands writes it; see :mod:`tether.snapshot.shapes`) so
that it cannot be restored into a different kind of manager.
"""

from __future__ import annotations

import logging
from abc import ABC
from typing import Any, ClassVar

from ..errors import ContextWindowExhaustedError, SnapshotError
from ..loop.state import RunState
from ..models.base import Model
from ..snapshot.shapes import manager_state_in, manager_state_out, manager_state_writer
from ..types import Message

_log = logging.getLogger(__name__)


def _starts_turn(message: Message) -> bool:
    return message["role"] == "user" and not any("toolResult" in block for block in message["content"])


def trim_point(messages: list[Message], at_least: int) -> int | None:
    """The smallest index ``>= at_least`` where the conversation may start.

    A valid start is a user message that carries no tool result, so a ``toolUse`` is never
    separated from its ``toolResult``. ``None`` when there is none.
    """
    for index in range(max(at_least, 1), len(messages)):
        if _starts_turn(messages[index]):
            return index
    return None


_STATE_NAMES: dict[type, str] = {}
"""Each manager class's :meth:`ConversationManager.state_name` (classes never change it)."""


class ConversationManager(ABC):
    """Base class: reduce on overflow, optionally trim after each invocation."""

    kind: ClassVar[str] = "base"

    @classmethod
    def state_name(cls) -> str:
        """The class name that tags this manager's snapshot state: that of the class defining
        its ``kind`` (``SlidingWindowConversationManager`` for it and its subclasses)."""
        name = _STATE_NAMES.get(cls)
        if name is None:
            name = next((klass.__name__ for klass in cls.__mro__ if "kind" in vars(klass)), cls.__name__)
            _STATE_NAMES[cls] = name
        return name

    def state(self, run: RunState) -> dict[str, Any]:
        """This manager's JSON state for ``run``, in the snapshot shape Strands reads
        (``{"__name__": ..., "removed_message_count": ..., ...}``)."""
        return manager_state_out(self.kind, self.state_name(), run.conversation_manager_state)

    def restore(self, run: RunState, state: dict[str, Any]) -> None:
        """Adopt ``state`` (Strands' shape or Tether's earlier ``kind`` shape); refuses state
        written by another kind of manager."""
        kind, name = manager_state_writer(state)
        same = kind == self.kind if kind is not None else name is None or name == self.state_name()
        if not same:
            writer = name if name is not None else kind
            raise SnapshotError(
                f"conversation_manager_state was written by a {writer!r} manager but this agent uses "
                f"{self.state_name()!r}; build the agent with the same conversation manager, or exclude "
                "conversation_manager_state from the snapshot"
            )
        run.conversation_manager_state = manager_state_in(state)

    def apply_management(self, run: RunState) -> None:
        """Called after each invocation; the default does nothing."""

    async def reduce_context(self, run: RunState, model: Model, error: Exception | None = None) -> None:
        """Shrink the conversation after a context-window overflow, or raise if it cannot."""
        raise ContextWindowExhaustedError(
            f"the conversation ({len(run.messages)} messages) overflows the model's context window "
            f"and {type(self).__name__} cannot reduce it; use SlidingWindowConversationManager or "
            "SummarizingConversationManager"
        ) from error

    def _record_removed(self, run: RunState, count: int) -> None:
        _log.info("%s removed %d messages from the conversation (%d left)", type(self).__name__, count, len(run.messages))
        state = run.conversation_manager_state
        state["removed_message_count"] = int(state.get("removed_message_count", 0)) + count
