"""The null manager: never changes the conversation."""

from __future__ import annotations

from .base import ConversationManager


class NullConversationManager(ConversationManager):
    """Keeps every message; an overflow is an error the caller must handle."""

    kind = "null"
