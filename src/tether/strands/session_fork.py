"""Fork a Strands agent's durable session at a step into a new session.

``fork_session("user-42", 3, new_session_id="user-42-b")`` copies the agent's run as it was at
step 3 (``tether show strands.user-42.default`` lists the steps) into the run of session
``user-42-b``; ``Agent(..., session_manager=TetherSessionManager("user-42-b"))`` then opens it and
goes on from there: a turn forked mid-cycle is finished by the same call that started it, a
pending interrupt is answered as usual. The original session is only read. It is
:func:`tether.durable.fork_run` with the fork's ``strands`` head entry made the new session's own
(a run forked under a session id without it is refused as another session's run).
"""

from __future__ import annotations

import copy
import os

from ..durable.fork import fork_run
from ..durable.store import RunStore
from ..errors import StoreError
from ._run import STRANDS_KEY, SessionMismatchError, strands_run_id
from ._store import open_store


def fork_session(
    session_id: str,
    at: int,
    *,
    new_session_id: str,
    agent_id: str = "default",
    store: RunStore | str | os.PathLike[str] | None = None,
) -> str:
    """Fork agent ``agent_id`` of Strands session ``session_id`` at step ``at`` into session
    ``new_session_id``; returns the new run's id.

    Args:
        session_id: The session to fork (left untouched).
        at: The step to start from (``tether show RUN`` lists them).
        new_session_id: The fork's session id; it must not have a run for ``agent_id`` yet.
        agent_id: The agent of the session (Strands' default ``"default"``).
        store: Where the session lives, as for :class:`~tether.strands.TetherSessionManager`.

    Raises:
        SessionMismatchError: The run is not this session's agent run (a graph's or swarm's, a
            native agent's, another session's).
        StoreError: No such run or step, or the new session already has this agent's run.
    """
    if not isinstance(new_session_id, str) or not new_session_id:
        raise StoreError(f"fork_session new_session_id must be a non-empty string, got {new_session_id!r}")
    run_id = strands_run_id(session_id, agent_id)
    runs, owned = open_store(store)
    try:
        if runs.head(run_id) is None:
            raise StoreError(f"Strands session {session_id!r} has no run for agent {agent_id!r} ({run_id!r}); nothing to fork")
        entry = runs.load_at(run_id, at).head.get(STRANDS_KEY)
        if not isinstance(entry, dict) or entry.get("kind", "agent") != "agent" or entry.get("session_id") != session_id:
            raise SessionMismatchError(
                f"run {run_id!r} is not the agent run of Strands session {session_id!r} (head.strands at step {at}); "
                "fork_session forks an agent's session (a native run forks with `tether fork`)"
            )
        entry = {**copy.deepcopy(entry), "session_id": new_session_id, "agent_id": agent_id}
        return fork_run(runs, run_id, at, new_run_id=strands_run_id(new_session_id, agent_id), extra={STRANDS_KEY: entry})
    finally:
        if owned:
            runs.close()


def free_session_id(store: RunStore, session_id: str, agent_id: str = "default") -> str:
    """``<session_id>-fork-<n>`` with the smallest ``n`` whose session has no run for ``agent_id``."""
    n = 1
    while store.head(strands_run_id(f"{session_id}-fork-{n}", agent_id)) is not None:
        n += 1
    return f"{session_id}-fork-{n}"


__all__ = ["fork_session", "free_session_id"]
