"""Conversation managers keep the conversation within the model's context window.

A manager is configuration; everything it must remember lives in
``RunState.conversation_manager_state`` (JSON), tagged with the manager's type so that state
cannot be restored into a different kind of manager.
"""

from __future__ import annotations

import logging
from abc import ABC
from typing import Any, ClassVar

from ..errors import ContextWindowExhaustedError, SnapshotError
from ..loop.state import RunState
from ..models.base import Model
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


class ConversationManager(ABC):
    """Base class: reduce on overflow, optionally trim after each invocation."""

    kind: ClassVar[str] = "base"

    def state(self, run: RunState) -> dict[str, Any]:
        """This manager's JSON state for ``run`` (tagged with its kind)."""
        state = dict(run.conversation_manager_state)
        state["kind"] = self.kind
        return state

    def restore(self, run: RunState, state: dict[str, Any]) -> None:
        """Adopt ``state``; refuses state written by another kind of manager."""
        kind = state.get("kind")
        if kind is not None and kind != self.kind:
            raise SnapshotError(
                f"conversation_manager_state was written by a {kind!r} manager but this agent uses "
                f"{self.kind!r}; build the agent with the same conversation manager, or exclude "
                "conversation_manager_state from the snapshot"
            )
        run.conversation_manager_state = {k: v for k, v in state.items() if k != "kind"}

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
