"""The seam between a Strands ``session_manager=`` and the agent's durable run."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ...agent import Agent


def attach_session(agent: Agent, session_manager: Any) -> str | None:
    """Bind ``agent`` to ``session_manager`` (restoring what the session holds).

    Args:
        agent: The facade agent being built.
        session_manager: The ``session_manager`` argument (None for none).

    Returns:
        The durable run id the agent's invocations use, or None when they are not durable.
    """
    return None
