"""The seam between Strands-style hooks and Tether's hook registry."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def to_tether_hooks(items: Iterable[Any] | None) -> list[Any]:
    """The items of ``Agent(hooks=...)`` of the Strands facade as what ``tether.Agent`` takes.

    Args:
        items: Hook providers and callbacks (None for none).

    Returns:
        Hook providers and callbacks Tether's :class:`~tether.hooks.HookRegistry` accepts.
    """
    return list(items or ())
