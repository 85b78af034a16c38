"""``tether.strands.Agent``: Strands' own ``Agent``, durable through Tether when given a session id.

A subclass that only chooses the session manager; everything else is Strands' code:
``Agent(..., session_id="user-42")`` (and ``store=``) is ``strands.Agent(...,
session_manager=TetherSessionManager("user-42", store=...))``. Any session manager passed
(Tether's, Strands' file, S3 or snapshot managers, your own), or none, is used as given, so a
program written for ``strands`` behaves the same through ``tether.strands``. A session Strands'
``FileSessionManager`` wrote goes on, durable, after
:func:`~tether.strands.session_import.import_file_session`.
"""

from __future__ import annotations

from typing import Any

from strands import Agent as StrandsAgent

from ..durable.store import RunStore
from ..errors import ConfigurationError
from .session_manager import TetherSessionManager


class Agent(StrandsAgent):
    """Strands' ``Agent`` (a subclass: every argument and behaviour is Strands'), made durable by
    Tether when given ``session_id``: see :mod:`tether.strands._facade`.

    Args:
        *args: Strands' positional arguments.
        session_id: A Tether session: the agent's turns are a durable Tether run
            (``TetherSessionManager(session_id, store=store)``).
        store: Where ``session_id``'s run lives (a ``RunStore``, a SQLite path or a
            ``postgresql://`` URL; default: ``$TETHER_HOME``).
        **kwargs: Strands' keyword arguments.

    Raises:
        ConfigurationError: ``session_id`` with a ``session_manager``, or ``store`` without ``session_id``.
    """

    def __init__(self, *args: Any, session_id: str | None = None, store: RunStore | str | None = None, **kwargs: Any) -> None:
        if session_id is not None:
            if kwargs.get("session_manager") is not None:
                raise ConfigurationError("tether.strands.Agent: give session_id= or session_manager=, not both")
            kwargs["session_manager"] = TetherSessionManager(session_id, store=store)
        elif store is not None:
            raise ConfigurationError("tether.strands.Agent: store= goes with session_id= (or pass a TetherSessionManager)")
        super().__init__(*args, **kwargs)
