"""The sliding-window manager: keep the most recent messages, never split a tool call."""

from __future__ import annotations

from ..errors import ConfigurationError, ContextWindowExhaustedError
from ..loop.state import RunState
from ..models.base import Model
from .base import ConversationManager, trim_point


class SlidingWindowConversationManager(ConversationManager):
    """Keeps at most ``window_size`` messages (after each invocation), trimming at turn starts.

    On a context-window overflow it drops the oldest half of the conversation (again at a turn
    start), so a ``toolUse`` is never separated from its ``toolResult``.
    """

    kind = "sliding_window"

    def __init__(self, window_size: int = 40) -> None:
        """Keep at most ``window_size`` messages.

        Args:
            window_size: The most messages kept after an invocation (>= 2).
        """
        if window_size < 2:
            raise ConfigurationError(f"window_size must be >= 2, got {window_size}")
        self.window_size = window_size

    def apply_management(self, run: RunState) -> None:
        excess = len(run.messages) - self.window_size
        if excess <= 0:
            return
        index = trim_point(run.messages, excess)
        if index is None:
            return
        del run.messages[:index]
        self._record_removed(run, index)

    async def reduce_context(self, run: RunState, model: Model, error: Exception | None = None) -> None:
        index = trim_point(run.messages, max(1, len(run.messages) // 2))
        if index is None:
            index = trim_point(run.messages, 1)
        if index is None:
            raise ContextWindowExhaustedError(
                f"the conversation ({len(run.messages)} messages) overflows the context window and has "
                "no earlier turn to drop; shorten the prompt or the tool results"
            ) from error
        del run.messages[:index]
        self._record_removed(run, index)
