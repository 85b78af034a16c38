"""Conversation managers: null, sliding window, summarizing."""

from .base import ConversationManager, trim_point
from .null import NullConversationManager
from .sliding_window import SlidingWindowConversationManager
from .summarizing import SummarizingConversationManager

__all__ = [
    "ConversationManager",
    "NullConversationManager",
    "SlidingWindowConversationManager",
    "SummarizingConversationManager",
    "trim_point",
]
