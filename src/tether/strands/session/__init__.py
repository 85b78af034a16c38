"""Strands' `strands.session` on Tether: session managers whose agents' invocations are durable runs.

``FileSessionManager`` and ``SnapshotSessionManager`` read and write Strands' on-disk layouts
(an existing Strands session continues on Tether; a Tether-written session opens in Strands)
and make the agent's run durable: kill the process inside a tool, build the agent again with
the same session manager, and the turn resumes with nothing lost or done twice. See
:mod:`tether.strands.session._durable` for how a session maps onto a durable run.
"""

from .file_session_manager import FileSessionManager
from .repository_session_manager import RepositorySessionManager
from .session_manager import SessionManager
from .session_repository import SessionRepository
from .snapshot_session_manager import (
    BidiAgentSaveLatestStrategy,
    MultiAgentSaveLatestStrategy,
    SaveLatestStrategy,
    SnapshotSessionManager,
    SnapshotTrigger,
)

__all__ = [
    "BidiAgentSaveLatestStrategy",
    "FileSessionManager",
    "MultiAgentSaveLatestStrategy",
    "RepositorySessionManager",
    "SaveLatestStrategy",
    "SessionManager",
    "SessionRepository",
    "SnapshotSessionManager",
    "SnapshotTrigger",
]
