"""Strands' `ConversationManager` base: Tether's (:class:`tether.conversation.ConversationManager`)."""

from __future__ import annotations

from typing import Any

from ....conversation import ConversationManager
from ....errors import ConfigurationError


def refuse_unsupported(manager: str, **arguments: Any) -> None:
    """Raise for a Strands manager argument set to a behaviour Tether does not provide.

    Raises:
        ConfigurationError: Naming the manager and the argument.
    """
    for name, value in arguments.items():
        if value not in (None, False):
            raise ConfigurationError(
                f"{manager}({name}=...) is not supported by tether.strands: Tether's manager has no such behaviour; "
                f"leave {name} unset"
            )


__all__ = ["ConversationManager", "refuse_unsupported"]
