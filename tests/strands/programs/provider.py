"""The one line a corpus program gains: ``session_manager=provider()`` in each ``Agent(...)``.

With ``$CORPUS_PLAIN`` set it is None (the program as written); otherwise each agent gets a
:class:`~tether.strands.session_manager.TetherSessionManager` of its own session
(``$CORPUS_SESSION-N``, ``corpus-N`` by default) in the store ``$CORPUS_STORE``.
"""

from __future__ import annotations

import itertools
import os
from typing import Any

_sessions = itertools.count(1)


def provider() -> Any:
    if os.environ.get("CORPUS_PLAIN"):
        return None
    from tether.strands.session_manager import TetherSessionManager

    prefix = os.environ.get("CORPUS_SESSION") or "corpus"
    return TetherSessionManager(f"{prefix}-{next(_sessions)}", store=os.environ["CORPUS_STORE"])
