"""The seam between Strands-style ``tools=[...]`` items and Tether tools."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def to_tether_tools(items: Iterable[Any] | None) -> list[Any]:
    """The items of ``Agent(tools=...)`` of the Strands facade as what ``tether.Agent`` takes.

    Args:
        items: The ``tools`` argument (None for none).

    Returns:
        Tether tools, tool sources, functions and agents.
    """
    return list(items or ())
