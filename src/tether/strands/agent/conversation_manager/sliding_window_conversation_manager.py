"""Strands' `SlidingWindowConversationManager` with Strands' arguments, on Tether's manager."""

from __future__ import annotations

from typing import Any

from ....conversation import SlidingWindowConversationManager as _TetherSlidingWindow
from .conversation_manager import StrandsManagerState, refuse_unsupported


class SlidingWindowConversationManager(StrandsManagerState, _TetherSlidingWindow):
    """Keeps at most ``window_size`` messages, never separating a tool call from its result.

    ``should_truncate_results`` is accepted (it is Strands' default) but Tether does not shorten
    tool results on a context overflow: it drops the oldest turns. ``per_turn``, ``pin_first``
    and ``proactive_compression`` are refused (Tether has no such behaviour).
    """

    def __init__(
        self,
        window_size: int = 40,
        should_truncate_results: bool = True,
        *,
        per_turn: bool | int = False,
        pin_first: int | None = None,
        proactive_compression: Any = None,
    ) -> None:
        """Keep at most ``window_size`` messages (Strands' arguments).

        Raises:
            ConfigurationError: ``window_size`` below 2, or an argument Tether does not provide.
        """
        refuse_unsupported(
            "SlidingWindowConversationManager", per_turn=per_turn, pin_first=pin_first, proactive_compression=proactive_compression
        )
        super().__init__(window_size)
        self.should_truncate_results = should_truncate_results


__all__ = ["SlidingWindowConversationManager"]
