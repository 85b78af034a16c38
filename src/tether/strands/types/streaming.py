"""Strands' `strands.types.streaming`: the Converse-shaped model stream events (Tether's, same JSON)."""

from ...types.streaming import (
    ContentBlockDeltaEvent,
    ContentBlockStartEvent,
    MessageStartEvent,
    MessageStopEvent,
    MetadataEvent,
    StopReason,
    StreamEvent,
    Usage,
)
from ...types.streaming import ContentDelta as ContentBlockDelta

__all__ = [
    "ContentBlockDelta",
    "ContentBlockDeltaEvent",
    "ContentBlockStartEvent",
    "MessageStartEvent",
    "MessageStopEvent",
    "MetadataEvent",
    "StopReason",
    "StreamEvent",
    "Usage",
]
