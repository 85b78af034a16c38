"""`SessionManager`: the interface of Strands' session managers (``strands.session.session_manager``).

A session manager keeps an agent's conversation and state across processes. Strands calls its
methods from hooks (``initialize`` when the agent is built, ``append_message`` and
``sync_agent`` when a message is added, ``sync_agent`` after each invocation); so does Tether,
through :meth:`register_hooks` on a Tether :class:`~tether.hooks.HookRegistry`.

Tether's own managers (:class:`~tether.strands.session.FileSessionManager`,
:class:`~tether.strands.session.RepositorySessionManager`,
:class:`~tether.strands.session.SnapshotSessionManager`) also make the agent's invocations a
durable run (see :mod:`tether.strands.session._attach`); a subclass written by a user keeps
Strands' behaviour: its methods are called, nothing more.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any

from ...hooks import AfterInvocation, HookRegistry, MessageAdded

if TYPE_CHECKING:
    from ...agent import Agent
    from ...types import Message


class SessionManager(ABC):
    """Abstract interface for managing sessions (Strands' methods and their meaning)."""

    session_id: str
    """The unique session identifier for this session manager."""

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        """Persist the agent on its events: each added message (``append_message`` then
        ``sync_agent``) and the end of each invocation (``sync_agent``).

        ``initialize`` is not a hook in Tether: the agent calls it when it is built.
        """

        def on_message(event: MessageAdded) -> None:
            if event.message is not None:
                self.append_message(event.message, event.agent)
                self.sync_agent(event.agent)

        def on_end(event: AfterInvocation) -> None:
            self.sync_agent(event.agent)

        registry.add_callback(MessageAdded, on_message)
        registry.add_callback(AfterInvocation, on_end)

    @abstractmethod
    def redact_latest_message(self, redact_message: Message, agent: Agent, **kwargs: Any) -> None:
        """Replace the message most recently appended to the agent in the session."""

    @abstractmethod
    def append_message(self, message: Message, agent: Agent, **kwargs: Any) -> None:
        """Append a message to the agent's session."""

    @abstractmethod
    def sync_agent(self, agent: Agent, **kwargs: Any) -> None:
        """Write the agent (state, conversation-manager state, internal state) to the session."""

    @abstractmethod
    def initialize(self, agent: Agent, **kwargs: Any) -> None:
        """Restore the agent from the session (or create it there)."""

    def sync_multi_agent(self, source: Any, **kwargs: Any) -> None:
        """Write a multi-agent orchestrator's state to the session (not supported here)."""
        raise NotImplementedError(
            f"{self.__class__.__name__} does not support multi-agent persistence "
            "(sync_multi_agent). Provide an implementation or use a "
            "SessionManager with session_type=SessionType.MULTI_AGENT."
        )

    def initialize_multi_agent(self, source: Any, **kwargs: Any) -> None:
        """Restore a multi-agent orchestrator's state from the session (not supported here)."""
        raise NotImplementedError(
            f"{self.__class__.__name__} does not support multi-agent persistence "
            "(initialize_multi_agent). Provide an implementation or use a "
            "SessionManager with session_type=SessionType.MULTI_AGENT."
        )
