"""The ``tether`` command on a Strands agent's run (``tether.strands.TetherSessionManager``): no
``tether`` command continues one (its Strands program does), and ``tether fork`` forks it into a
new Strands session (:func:`tether.strands.fork_session`)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from ..durable.store import RunStore
from ..errors import ConfigurationError

if TYPE_CHECKING:
    from rich.console import Console


def fork_strands_session(args: argparse.Namespace, store: RunStore, entry: dict[str, Any], out: Console) -> int:
    """``tether fork`` of a Strands agent's run: a new Strands session (:func:`tether.strands.fork_session`)."""
    from ..strands.session_fork import fork_session, free_session_id

    if args.new_id is not None:
        raise ConfigurationError(
            f"{args.run_id!r} is a Strands agent's run: it is forked into a session; give --session, not --new-id (see tether fork --help)"
        )
    session_id, agent_id = str(entry.get("session_id")), str(entry.get("agent_id"))
    session = args.session if args.session is not None else free_session_id(store, session_id, agent_id)
    new_id = fork_session(session_id, args.at, new_session_id=session, agent_id=agent_id, store=store)
    forked = f"forked Strands session {session_id!r} at step {args.at} -> session {session!r} (run {new_id})"
    out.print(forked, markup=False, soft_wrap=True)
    out.print(f"continue it with: {continue_strands(session)}", markup=False, soft_wrap=True)
    return 0


def strands_session(head: dict[str, Any] | None) -> str | None:
    """The Strands session id of a Strands agent's run (None for any other run)."""
    entry = head.get("strands") if isinstance(head, dict) else None
    if isinstance(entry, dict) and entry.get("kind", "agent") == "agent":
        return str(entry.get("session_id"))
    return None


def continue_strands(session: str) -> str:
    """How a Strands agent's run goes on: its own program, with the session manager (no tether command)."""
    return (
        f"its Strands program, the agent built with session_manager=TetherSessionManager({session!r}), "
        "making the cut-off call again (a finished turn: the next one)"
    )


__all__ = ["continue_strands", "fork_strands_session", "strands_session"]
