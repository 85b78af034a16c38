"""The run store a :class:`~tether.strands.session_manager.TetherSessionManager` writes to.

``None`` is Tether's default store (``$TETHER_HOME/runs.db``, the one ``Agent(run_id=...)`` and the
``tether`` command use); a string or path is what ``tether --store`` takes (a SQLite file, a
``sqlite:///`` URL or a ``postgresql://`` URL), opened by the CLI's own parser; a ``RunStore`` is
used as it is.
"""

from __future__ import annotations

import os

from ..cli.stores import parse_store
from ..durable.runner import default_store
from ..durable.store import RunStore


def open_store(store: RunStore | str | os.PathLike[str] | None) -> tuple[RunStore, bool]:
    """The store ``store`` names, and whether it was opened here (so the caller closes it)."""
    if store is None:
        return default_store(), True
    if isinstance(store, str | os.PathLike):
        return parse_store(os.fspath(store)).open(create=True), True
    return store, False


__all__ = ["open_store"]
