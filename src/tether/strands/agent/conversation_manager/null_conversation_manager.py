"""Strands' `NullConversationManager`: never changes the conversation."""

from ....conversation import NullConversationManager

__all__ = ["NullConversationManager"]
