"""Strands' `NullConversationManager`: never changes the conversation."""

from ....conversation import NullConversationManager as _TetherNull
from .conversation_manager import StrandsManagerState


class NullConversationManager(StrandsManagerState, _TetherNull):
    """Keeps every message (Tether's manager, with Strands' ``get_state()`` and friends)."""


__all__ = ["NullConversationManager"]
