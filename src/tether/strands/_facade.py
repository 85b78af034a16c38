"""``tether.strands.Agent``: Strands' own ``Agent``, durable through Tether when it has a session.

A subclass that only chooses the session manager; everything else is Strands' code. So that a
program written for ``tether.strands`` stays durable with its one ``session_manager=`` line:

- ``Agent(..., session_id="user-42")`` (and ``store=``) is ``strands.Agent(...,
  session_manager=TetherSessionManager("user-42", store=...))``;
- ``Agent(..., session_manager=FileSessionManager(session_id="user-42", storage_dir=D))`` (Strands'
  own) becomes ``TetherSessionManager("user-42")`` on the store ``D/.tether/runs.sqlite``, beside
  Strands' session folders; the file session's agents are imported into it first, once, so a
  conversation Strands wrote goes on, durable;
- any other session manager (Tether's, S3, your own), or none, is used as given.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from strands import Agent as StrandsAgent
from strands.session.file_session_manager import FileSessionManager

from ..durable.store import RunStore
from ..errors import ConfigurationError, StoreError
from .session_import import import_file_session
from .session_manager import TetherSessionManager


def durable_file_session(files: FileSessionManager) -> TetherSessionManager:
    """The Tether session manager standing in for Strands' ``files`` (its session imported once)."""
    storage = Path(files.storage_dir)
    store = storage / ".tether" / "runs.sqlite"
    store.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    manager = TetherSessionManager(files.session_id, store=store)
    if (storage / f"session_{files.session_id}" / "session.json").is_file():
        try:
            import_file_session(files.session_id, storage, store=manager.store)
        except StoreError:
            pass  # imported before (its runs exist): the runs are the truth from then on
    return manager


class Agent(StrandsAgent):
    """Strands' ``Agent`` (a subclass: every argument and behaviour is Strands'), made durable by
    Tether when it has a session: see :mod:`tether.strands._facade`.

    Args:
        *args: Strands' positional arguments.
        session_id: A Tether session: the agent's turns are a durable Tether run
            (``TetherSessionManager(session_id, store=store)``).
        store: Where ``session_id``'s run lives (a ``RunStore``, a SQLite path or a
            ``postgresql://`` URL; default: ``$TETHER_HOME``).
        **kwargs: Strands' keyword arguments; a Strands ``FileSessionManager`` given as
            ``session_manager`` is replaced by a durable Tether one of the same session id.

    Raises:
        ConfigurationError: Both ``session_id`` and ``session_manager`` are given.
    """

    def __init__(self, *args: Any, session_id: str | None = None, store: RunStore | str | None = None, **kwargs: Any) -> None:
        manager = kwargs.get("session_manager")
        if session_id is not None:
            if manager is not None:
                raise ConfigurationError("tether.strands.Agent: give session_id= or session_manager=, not both")
            kwargs["session_manager"] = TetherSessionManager(session_id, store=store)
        elif store is not None:
            raise ConfigurationError("tether.strands.Agent: store= goes with session_id= (or pass a TetherSessionManager)")
        elif isinstance(manager, FileSessionManager):
            kwargs["session_manager"] = durable_file_session(manager)
        super().__init__(*args, **kwargs)
