"""Strands' `strands.agent.conversation_manager` on Tether's managers (:mod:`tether.conversation`).

Each class takes Strands' arguments and is Tether's manager of the same name, so its state is
in snapshots and sessions in Strands' ``{"__name__": ..., "removed_message_count": ...}`` shape.
"""

from .conversation_manager import ConversationManager
from .null_conversation_manager import NullConversationManager
from .sliding_window_conversation_manager import SlidingWindowConversationManager
from .summarizing_conversation_manager import SummarizingConversationManager

__all__ = [
    "ConversationManager",
    "NullConversationManager",
    "SlidingWindowConversationManager",
    "SummarizingConversationManager",
]
