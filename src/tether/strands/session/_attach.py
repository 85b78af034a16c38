"""The seam between a Strands ``session_manager=`` and the agent's durable run.

The facade agent (:class:`tether.strands.agent.agent.Agent`) follows this contract:

1. In its constructor, once messages, state, conversation manager and hooks are set:
   ``self._session_run_id = attach_session(self, session_manager)``. This restores the agent
   from the session (messages, state, conversation-manager and internal state; or the durable
   run, when the store holds a newer one), sets ``self.store`` and registers the hooks that
   keep the session's files in step with the run. A damaged session raises
   :class:`~tether.strands.types.session.SessionException` (nothing written).
2. Every invocation with a run id (not None) is a durable run:
   ``plan = plan_call(self, prompt)``; if ``plan.resume``: ``result = self.resume(run_id)``
   (or ``nested_events(None, run_id=run_id, resume=True)`` when streaming), and if
   ``plan.send`` and the result is not waiting for interrupt answers
   (``result.stop_reason != "interrupt"``): ``result = <tether.Agent call>(prompt, run_id=run_id)``;
   the call's result is the last one. With ``plan.resume`` false, just the call with
   ``run_id=run_id``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...hooks import AfterInvocation, MessageAdded
from ._durable import CallPlan, plan_call
from .repository_session_manager import RepositorySessionManager
from .session_manager import SessionManager

if TYPE_CHECKING:
    from ...agent import Agent


def attach_session(agent: Agent, session_manager: Any) -> str | None:
    """Bind ``agent`` to ``session_manager`` (restoring what the session holds).

    Tether's managers (:class:`FileSessionManager`, :class:`RepositorySessionManager`,
    :class:`SnapshotSessionManager`) make the agent's invocations the durable run this returns.
    Any other session manager (a user's own ``SessionManager`` subclass) keeps Strands'
    behaviour: ``initialize(agent)`` now, ``append_message``/``sync_agent`` on each message and
    ``sync_agent`` after each invocation; its invocations are not durable (None).

    Args:
        agent: The facade agent being built.
        session_manager: The ``session_manager`` argument (None for none).

    Returns:
        The durable run id the agent's invocations use, or None when they are not durable.
    """
    if session_manager is None:
        return None
    from .snapshot_session_manager import SnapshotSessionManager

    if isinstance(session_manager, (RepositorySessionManager, SnapshotSessionManager)):
        return session_manager.attach(agent)
    session_manager.initialize(agent)
    if isinstance(session_manager, SessionManager):
        session_manager.register_hooks(agent.hooks)
        return None

    def on_message(event: MessageAdded) -> None:
        if event.message is not None:
            session_manager.append_message(event.message, event.agent)
            session_manager.sync_agent(event.agent)

    def on_end(event: AfterInvocation) -> None:
        session_manager.sync_agent(event.agent)

    agent.hooks.add_callback(MessageAdded, on_message)
    agent.hooks.add_callback(AfterInvocation, on_end)
    return None


__all__ = ["CallPlan", "attach_session", "plan_call"]
