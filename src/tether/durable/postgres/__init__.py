"""`PostgresStore`: durable runs in a PostgreSQL database (psycopg 3, ``tether[postgres]``).

Same layout as the SQLite store, with a ``tether_`` prefix so the tables can share a database
with the application: ``tether_meta`` (schema version), ``tether_runs`` (one head row per run),
``tether_leases`` (each run's lease epoch), ``tether_messages``, ``tether_results`` and
``tether_steps`` (append-only JSON text rows; steps are the time-travel history of
:mod:`tether.durable.history`) and ``tether_blobs``. Every statement is parameterized.

**A save point is one statement** (:mod:`.dialect`): a compare-and-swap on the run's head row,
its rows inserted *from* the updated row, one round trip and one transaction.

**The head as a delta.** ``tether_runs.head`` holds a whole (packed) head, the *base*, written
at revision ``base``; ``delta`` holds the patch from it to the current head (see
:meth:`~tether.durable.packing.HeadPacker.head_delta`), so a save point rewrites the few
hundred bytes that changed, not the ~1 KB head, and PostgreSQL logs only the changed end of the
row (the base is its unchanged prefix). The head is written whole again when the delta grows
past the size of the head itself. Stores with a cipher write every head whole.

**Connections: a bounded pool** of lanes (:mod:`.lanes`); a run's lease is an advisory lock on
one of them (:mod:`.leases`), and its writes go through that lane.

The package, bottom to top: :mod:`.errors` (what a driver error means: ``StoreError`` or
``LeaseLostError``), :mod:`.dialect` (SQL text, rows and parameters), :mod:`.wire` (a statement
in libpq's form), :mod:`.pipeline` (one save-point protocol over libpq, driven blocking or on the event loop),
:mod:`.lanes` and :mod:`.leases`, :mod:`.effects` (a tool call's transaction) and
:mod:`.store` (:class:`PostgresStore`).
"""

from .dialect import STORE_SCHEMA, advisory_key, lock_ids, row_kinds, save_params, save_query, save_statement
from .effects import PostgresEffects
from .lanes import DEFAULT_POOL_SIZE, Lane, Owned
from .store import PostgresStore, SentCommit

__all__ = [
    "DEFAULT_POOL_SIZE",
    "STORE_SCHEMA",
    "Lane",
    "Owned",
    "PostgresEffects",
    "PostgresStore",
    "SentCommit",
    "advisory_key",
    "lock_ids",
    "row_kinds",
    "save_params",
    "save_query",
    "save_statement",
]
