"""Durable runs: a run is persisted at every step boundary and resumes after a crash.

``Agent(store=SQLiteStore("runs.db"))`` then ``agent(prompt, run_id="trip-42")`` runs a turn of
the durable conversation ``trip-42``; ``agent.resume("trip-42")`` finishes an interrupted turn,
in any process. See :mod:`tether.durable.store` for the store protocol.
"""

from __future__ import annotations

from .compensation import CompensationReport, UndoOutcome, compensate_run
from .crypto import AESGCMCipher, RowCipher
from .fork import fork_run
from .history import RunSummary, Step, StepTail
from .indoubt import RERUN, InDoubtCall
from .memory import MemoryStore
from .postgres import PostgresStore  # psycopg itself is imported only when a PostgresStore is made
from .redaction import RedactionPolicy
from .sqlite import SQLiteStore
from .store import RunSize, RunStore, StoredRun, validate_run_id

__all__ = [
    "RERUN",
    "AESGCMCipher",
    "CompensationReport",
    "InDoubtCall",
    "MemoryStore",
    "PostgresStore",
    "RedactionPolicy",
    "RowCipher",
    "RunSize",
    "RunSummary",
    "RunStore",
    "SQLiteStore",
    "Step",
    "StepTail",
    "StoredRun",
    "UndoOutcome",
    "compensate_run",
    "fork_run",
    "validate_run_id",
]
