"""Strands' ``ToolProvider``: tools with a lifecycle managed by the agent.

A provider loads its tools when the agent starts (``add_consumer`` then ``load_tools``) and is
released when the agent closes (``remove_consumer``), which is the lifecycle of a Tether tool
source (the bridge is :class:`tether.strands.tools._adapt.ProviderSource`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any


class ToolProvider(ABC):
    """Tools with a lifecycle managed by the agent (Strands' ``strands.tools.ToolProvider``)."""

    @abstractmethod
    async def load_tools(self, **kwargs: Any) -> Sequence[Any]:
        """Load and return the provider's tools."""

    @abstractmethod
    def add_consumer(self, consumer_id: Any, **kwargs: Any) -> None:
        """Note that ``consumer_id`` (an agent's registry) uses the provider."""

    @abstractmethod
    def remove_consumer(self, consumer_id: Any, **kwargs: Any) -> None:
        """Release ``consumer_id``; idempotent; the provider may clean up when none remain."""


__all__ = ["ToolProvider"]
