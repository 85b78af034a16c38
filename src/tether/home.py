"""Where Tether keeps its runs when no store is given: ``$TETHER_HOME``, else the user's data directory.

The SDK (``Agent(run_id=...)`` without a store) and the ``tether`` command agree on this place,
so ``tether runs`` lists the same runs from any working directory. The data directory is the
platform's (``~/.local/share/tether`` on Linux, ``~/Library/Application Support/tether`` on
macOS, ``%LOCALAPPDATA%\\tether`` on Windows), found by ``platformdirs``.
"""

from __future__ import annotations

import os
from pathlib import Path

HOME_VAR = "TETHER_HOME"
"""The environment variable that overrides the data directory (tests and CI set it)."""

STORE_FILE = "runs.db"


def tether_home() -> Path:
    """``$TETHER_HOME`` when set (and not empty), else the platform's user data directory for Tether."""
    configured = os.environ.get(HOME_VAR)
    if configured:
        return Path(configured).expanduser()
    from platformdirs import user_data_path

    return user_data_path("tether", appauthor=False)


def default_store_path() -> Path:
    """The SQLite file of the default run store: ``tether_home() / "runs.db"`` (absolute)."""
    return (tether_home() / STORE_FILE).resolve()


__all__ = ["HOME_VAR", "default_store_path", "tether_home"]
