"""The PostgreSQL store's dialect: its tables, the text of its statements and the shape of their
rows and parameters (no connection here: :mod:`.lanes` holds those, :mod:`.pipeline` sends a
save point, :mod:`.store` runs the rest).

**A save point is one statement.** A write is one ``WITH`` statement on an autocommit
connection: one round trip and one transaction (one WAL flush). Its first part is the
compare-and-swap itself, ``UPDATE tether_runs … WHERE run_id = … AND rev = <previous> AND epoch
= <the lease's> AND inc = <the incarnation>`` (a new run: ``INSERT … SELECT … FROM tether_leases
… FOR SHARE``); the other parts insert the messages, results, step row and blobs *from* the
updated row, so when the fence does not hold nothing at all is written (the store then reads
why, and raises :class:`~tether.errors.LeaseLostError` or
:class:`~tether.errors.RunReplacedError`). No row is locked by a separate read: a concurrent
lease change (which updates ``tether_runs.epoch`` in its own transaction) and a write conflict
on the run's one row, and PostgreSQL re-checks the condition on the row as the other left it.
"""

from __future__ import annotations

import functools
import hashlib
from typing import Any

from ..codec import zip_text
from ..store import SCHEMA_VERSION, EncodedWrite, Lease, PreparedWrite
from . import wire

STORE_SCHEMA = SCHEMA_VERSION + 1
"""The version a PostgreSQL store records in ``tether_meta``: the row schema plus this store's
own layout (``tether_runs.epoch``, ``delta`` and ``base``). A Tether that does not know it keeps
no ``tether_runs.epoch`` and would not be fenced off, so it refuses to open such a store."""

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS tether_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    # A new store's columns are ordered for the WAL: an update's record leaves out the unchanged
    # prefix and suffix of the row, and a save point changes only ``rev`` and ``delta`` (the base
    # head, the incarnation, the epoch and the base revision change when the head is written whole
    # or the lease changes hands). Stores made before keep their order: the ALTERs add what they lack.
    "CREATE TABLE IF NOT EXISTS tether_runs (run_id TEXT PRIMARY KEY, head TEXT NOT NULL, inc TEXT, epoch BIGINT, base BIGINT,"
    " rev BIGINT, delta TEXT)",
    "ALTER TABLE tether_runs ADD COLUMN IF NOT EXISTS rev BIGINT",  # schema 1 stores: learned at the next write
    "ALTER TABLE tether_runs ADD COLUMN IF NOT EXISTS inc TEXT",  # the run's incarnation (NULL: stored before incarnations)
    # the run's lease epoch (a copy of tether_leases.epoch kept by every lease change: the write's
    # compare-and-swap reads it on the row it updates), the head's delta and the revision of its base
    "ALTER TABLE tether_runs ADD COLUMN IF NOT EXISTS epoch BIGINT",
    "ALTER TABLE tether_runs ADD COLUMN IF NOT EXISTS delta TEXT",
    "ALTER TABLE tether_runs ADD COLUMN IF NOT EXISTS base BIGINT",
    "CREATE TABLE IF NOT EXISTS tether_leases (run_id TEXT PRIMARY KEY, epoch BIGINT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS tether_messages (run_id TEXT NOT NULL, seq BIGINT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (run_id, seq))",
    "CREATE TABLE IF NOT EXISTS tether_results (run_id TEXT NOT NULL, cycle BIGINT NOT NULL, tool_use_id TEXT NOT NULL,"
    " body TEXT NOT NULL, PRIMARY KEY (run_id, cycle, tool_use_id))",
    "CREATE TABLE IF NOT EXISTS tether_steps (run_id TEXT NOT NULL, step BIGINT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (run_id, step))",
    "CREATE TABLE IF NOT EXISTS tether_blobs (run_id TEXT NOT NULL, id TEXT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (run_id, id))",
    # A head is replaced at every save point: leave each page room, so PostgreSQL prunes the dead
    # versions of a head before its page is full and every update stays a HOT update in place
    # (a HOT update on the same page is also the one whose WAL record leaves out the unchanged
    # prefix of the row: the base head).
    "ALTER TABLE tether_runs SET (fillfactor = 50)",
)
EPOCHS_FROM_LEASES = (
    "UPDATE tether_runs r SET epoch = l.epoch FROM tether_leases l WHERE l.run_id = r.run_id AND r.epoch IS DISTINCT FROM l.epoch"
)
"""Upgrading a store of schema 3 or older: every run's epoch column from its lease row."""
SCHEMA_LOCK = 0x7465746865720001  # advisory key serializing concurrent schema creation ("tether" + 1)

_APPENDS = {
    "m": "m AS (INSERT INTO tether_messages (run_id, seq, body)"
    " SELECT h.run_id, u.seq, u.body FROM h, unnest(%(mseq)b::bigint[], %(mbody)b::text[]) AS u(seq, body))",
    "M": "m AS (INSERT INTO tether_messages (run_id, seq, body) SELECT h.run_id, %(mseq1)s, %(mbody1)s FROM h)",
    "r": "r AS (INSERT INTO tether_results (run_id, cycle, tool_use_id, body)"
    " SELECT h.run_id, u.cycle, u.id, u.body FROM h, unnest(%(rcycle)b::bigint[], %(rid)b::text[], %(rbody)b::text[]) AS u(cycle, id, body)"
    " ON CONFLICT (run_id, cycle, tool_use_id) DO UPDATE SET body = EXCLUDED.body)",
    "s": "s AS (INSERT INTO tether_steps (run_id, step, body) SELECT h.run_id, %(step)s, %(sbody)s FROM h)",
    "b": "b AS (INSERT INTO tether_blobs (run_id, id, body)"
    " SELECT h.run_id, u.id, u.body FROM h, unnest(%(bid)b::text[], %(bbody)b::text[]) AS u(id, body) ON CONFLICT (run_id, id) DO NOTHING)",
}
"""The rows a write appends, each inserted *from* the head row the write's first part changed
(``h``): when the compare-and-swap changed no row, none of them is inserted. A statement names
only the kinds of rows its write has (a cycle's save point has no blobs and, but for the last
call of a cycle, no results), so the server neither plans nor runs the others. The arrays go in
binary (``%(name)b``): as text, every quote of every JSON row is escaped in Python first. A
write of one message (a cycle's save points) passes it as two plain values (``M``): an array
costs psycopg more to adapt than the rest of the statement's values together."""

_HEADS = {
    "save": "WITH h AS (UPDATE tether_runs SET head = coalesce(%(head)s, head), delta = %(delta)s, base = coalesce(%(newbase)s, base),"
    " rev = %(rev)s WHERE run_id = %(run)s AND (rev = %(prev)s OR rev IS NULL) AND inc IS NOT DISTINCT FROM %(inc)s"
    " AND (%(epoch)s::bigint IS NULL OR epoch = %(epoch)s) AND (%(base)s::bigint IS NULL OR base = %(base)s) RETURNING run_id)",
    "create_leased": "WITH h AS (INSERT INTO tether_runs (run_id, head, rev, inc, epoch, delta, base)"
    " (SELECT %(run)s, %(head)s, 1, %(inc)s, l.epoch, NULL, 1 FROM tether_leases l WHERE l.run_id = %(run)s AND l.epoch = %(epoch)s"
    " FOR SHARE) ON CONFLICT (run_id) DO NOTHING RETURNING run_id)",
    "create": "WITH h AS (INSERT INTO tether_runs (run_id, head, rev, inc, epoch, delta, base)"
    " SELECT %(run)s, %(head)s, 1, %(inc)s, (SELECT epoch FROM tether_leases WHERE run_id = %(run)s), NULL, 1"
    " ON CONFLICT (run_id) DO NOTHING RETURNING run_id)",
    "append": "WITH h AS (SELECT %(run)s::text AS run_id)",
}
"""The first part of a save-point statement:

- ``save``: a save point of an existing run: the head (whole, or a delta against the base it
  names) if the run is at the previous revision, of the write's incarnation and, leased, at the
  lease's epoch;
- ``create_leased``: the first save point of a run, made under a lease: the lease row is read
  locked (once per run), so a lease change waits for this write, or this write sees the change
  and writes nothing;
- ``create``: the first save point of a run made without a lease;
- ``append``: the rows of a write whose head was written by a statement of its own."""


@functools.lru_cache(maxsize=64)
def save_query(head: str, kinds: str) -> str:
    """The statement of a write: :data:`_HEADS` ``[head]`` and the appends of ``kinds`` (letters
    of :data:`_APPENDS`), answering the number of head rows it changed (0: the fence failed)."""
    return _HEADS[head] + "".join(", " + _APPENDS[kind] for kind in kinds) + " SELECT count(*) FROM h"


@functools.lru_cache(maxsize=64)
def save_statement(head: str, kinds: str) -> wire.Statement:
    """The statement of a write (see :func:`save_query`) in libpq's form (:mod:`.wire`), as
    :func:`~tether.durable.postgres.pipeline.save_point` sends it."""
    return wire.statement(save_query(head, kinds), _SAVE_TYPES)


def row_kinds(rows: EncodedWrite) -> str:
    """The kinds of rows a write appends (see :func:`save_query`)."""
    kinds = ("M" if len(rows.messages) == 1 else "m", rows.messages), ("r", rows.results), ("s", rows.step is not None), ("b", rows.blobs)
    return "".join(kind for kind, present in kinds if present)


BUMP = (
    "INSERT INTO tether_leases (run_id, epoch) VALUES (%s, 1)"
    " ON CONFLICT (run_id) DO UPDATE SET epoch = tether_leases.epoch + 1 RETURNING epoch"
)
SYNC_EPOCH = "UPDATE tether_runs SET epoch = %s WHERE run_id = %s"
"""A lease change: the epoch bumped, then copied to the run's row by a second statement of the
same transaction (a fresh snapshot: it sees a run created by a write that held the lease row)."""


SIZED = (
    ("head", "tether_runs", "octet_length(head) + coalesce(octet_length(delta), 0)"),
    ("messages", "tether_messages", "octet_length(body)"),
    ("results", "tether_results", "octet_length(body)"),
    ("steps", "tether_steps", "octet_length(body)"),
    ("blobs", "tether_blobs", "octet_length(body)"),
)
"""Each kind of row a run is stored as: its table and the bytes of a row (for ``size``)."""


def advisory_key(run_id: str) -> int:
    """The signed 64-bit advisory-lock key of a run (a hash, stable across processes)."""
    digest = hashlib.sha256(b"tether-run:" + run_id.encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def lock_ids(key: int) -> tuple[int, int]:
    """How ``pg_locks`` shows a bigint advisory key: (classid, objid) = its high and low halves."""
    unsigned = key & 0xFFFFFFFFFFFFFFFF
    return unsigned >> 32, unsigned & 0xFFFFFFFF


HELD = (
    "SELECT classid::bigint, objid::bigint, pid FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 1 AND granted"
    " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
)
HELD_BY = HELD + " AND classid::bigint = %s AND objid::bigint = %s LIMIT 1"
"""Whether one advisory key is held (its ``lock_ids``): one row at most, not every lease's."""


_SAVE_TYPES = (
    ("run", wire.TEXT), ("head", wire.TEXT), ("delta", wire.TEXT), ("newbase", wire.INT8), ("base", wire.INT8),
    ("rev", wire.INT8), ("prev", wire.INT8), ("inc", wire.TEXT), ("epoch", wire.INT8),
    ("mseq", wire.INT8_ARRAY), ("mbody", wire.TEXT_ARRAY), ("mseq1", wire.INT8), ("mbody1", wire.TEXT),
    ("rcycle", wire.INT8_ARRAY), ("rid", wire.TEXT_ARRAY), ("rbody", wire.TEXT_ARRAY),
    ("step", wire.INT8), ("sbody", wire.TEXT), ("bid", wire.TEXT_ARRAY), ("bbody", wire.TEXT_ARRAY),
)  # fmt: skip
"""The type of every parameter of a save-point statement (:func:`save_query`), for libpq
(:mod:`.wire`): the columns' types."""


def save_params(run_id: str, prepared: PreparedWrite, lease: Lease | None, *, whole: bool = False) -> dict[str, Any]:
    """The parameters of a save-point statement (``whole``: the head written whole, not as its
    delta): those of the row kinds the write has (:func:`row_kinds`), which its statement names."""
    rows = prepared.rows
    delta = None if whole else rows.head_delta
    rev = prepared.rev
    params: dict[str, Any] = {
        "run": run_id,
        "head": rows.head if delta is None else None,
        "delta": delta,
        "newbase": rev if delta is None else None,
        "base": None if delta is None else rows.head_base,
        "rev": rev,
        "prev": None if rev is None else rev - 1,
        "inc": prepared.incarnation,
        "epoch": None if lease is None else lease.epoch,
    }
    messages = rows.messages
    if len(messages) == 1:
        params["mseq1"], params["mbody1"] = messages[0]
    elif messages:
        params["mseq"] = [seq for seq, _ in messages]
        params["mbody"] = [text for _, text in messages]
    if rows.results:
        params["rcycle"] = [cycle for cycle, _, _ in rows.results]
        params["rid"] = [ident for _, ident, _ in rows.results]
        params["rbody"] = [text for _, _, text in rows.results]
    if rows.step is not None:
        params["step"] = prepared.step
        params["sbody"] = zip_text(rows.step)
    if rows.blobs:
        params["bid"] = [ident for ident, _ in rows.blobs]
        params["bbody"] = [text for _, text in rows.blobs]
    return params
