"""Strands' `strands.agent` on Tether (see :mod:`tether.strands`)."""

from .agent import Agent
from .agent_result import AgentResult
from .conversation_manager import (
    ConversationManager,
    NullConversationManager,
    SlidingWindowConversationManager,
    SummarizingConversationManager,
)
from .state import AgentState

__all__ = [
    "Agent",
    "AgentResult",
    "AgentState",
    "ConversationManager",
    "NullConversationManager",
    "SlidingWindowConversationManager",
    "SummarizingConversationManager",
]
