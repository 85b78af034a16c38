"""A tool call's effects on a PostgreSQL store, committed with the write recording its result
(see :mod:`tether.durable.outbox`): one transaction on a connection of its own."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol

from ...errors import StoreError
from ..store import Lease, PreparedWrite
from . import errors

if TYPE_CHECKING:
    import psycopg


class EffectsStore(Protocol):
    """What a tool's transaction needs of its store (a
    :class:`~tether.durable.postgres.PostgresStore`): its driver, its name and its write."""

    bytes_written: int
    _psycopg: Any

    @property
    def where(self) -> str: ...

    def _write_rows(self, conn: psycopg.Connection[Any], run_id: str, prepared: PreparedWrite, lease: Lease | None) -> None: ...


class PostgresEffects:
    """One tool call's transaction on a :class:`~tether.durable.postgres.PostgresStore` (see
    :meth:`~tether.durable.postgres.PostgresStore.begin_effects` and :mod:`tether.durable.outbox`); the connection is
    closed when the transaction is committed or rolled back.

    Args:
        store: The store.
        run_id: The run whose tool call writes.
        conn: A connection of its own (autocommit, like every connection of the store).
    """

    def __init__(self, store: EffectsStore, run_id: str, conn: psycopg.Connection[Any]) -> None:
        self.store = store
        self.run_id = run_id
        self.connection = conn
        self._block = conn.transaction()  # BEGIN; inside it psycopg refuses conn.commit() from the tool
        self._block.__enter__()
        self._done = False

    def savepoint(self) -> AbstractContextManager[Any]:
        """A nested block (a savepoint): an exception leaving it undoes its statements only."""
        return self.connection.transaction()

    def commit_with(self, run_id: str, prepared: PreparedWrite, lease: Lease | None) -> None:
        """The store write ``prepared`` in this transaction (the fenced compare-and-swap, the head,
        the rows), then ``COMMIT``: the effects and the write are durable together or not at all.

        Raises:
            LeaseLostError: The fence failed (another owner took the run): nothing committed.
            StoreError: The server failed: nothing committed.
        """
        store, conn = self.store, self.connection
        psycopg = store._psycopg
        try:
            store._write_rows(conn, run_id, prepared, lease)
        except BaseException as exc:
            self._end(exc)
            if isinstance(exc, psycopg.Error):
                raise errors.failed(store.where, run_id, exc) from None
            raise
        self._end(None)
        store.bytes_written += prepared.rows.size

    def rollback(self) -> None:
        """Roll the transaction back and give the connection back to the store."""
        self._end(self.store._psycopg.Rollback())

    def _end(self, error: BaseException | None) -> None:
        """Leave the transaction block (COMMIT with no ``error``, else ROLLBACK) and hand the
        connection back (closed when the server failed)."""
        if self._done:
            return
        self._done = True
        conn, psycopg = self.connection, self.store._psycopg
        try:
            if error is None:
                self._block.__exit__(None, None, None)
            else:
                self._block.__exit__(type(error), error, error.__traceback__)
        except psycopg.Error as exc:
            conn.close()
            if error is None:
                raise StoreError(f"run {self.run_id!r}: committing on {self.store.where} failed ({str(exc).strip()})") from None
            return
        conn.close()
