"""A save point sent through libpq itself (``psycopg.pq``) in pipeline mode, its answer awaited.

Statements go out in libpq's pipeline mode (:class:`Pipeline`): a run's next save point, ready
while its last is still committing, is sent right behind it. A statement prepared on a
connection lives in its server session: should the session drop it (a ``DEALLOCATE ALL``, which
psycopg itself sends when its own statement cache is cleared), the execution fails with
``invalid_sql_statement_name`` before running anything, and the statement is prepared again.
"""

from __future__ import annotations

import asyncio
import contextlib
import select
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .wire import Prepared, Statement

_UNDEFINED_STATEMENT = "26000"  # invalid_sql_statement_name: the session has no such prepared statement
_DUPLICATE_STATEMENT = "42P05"  # duplicate_prepared_statement: the session has it already


class Unprepared(Exception):
    """The server session had dropped the statement (a ``DEALLOCATE ALL``, which psycopg sends
    when it clears its own statement cache): nothing ran. It is prepared again at its next send."""


class Pipeline:
    """The statements one connection has out, sent from an event loop and answered in order.

    A run's save points follow one another on its lease's connection: the next is often ready
    while the last is still committing (the model answered before the server did). Sent at
    once behind it, in libpq's pipeline mode, it reaches the server before the server is done
    with the last, instead of a round trip after its answer reached the caller: no idle gap
    on either side between two commits. Each statement is followed by a sync, so each is its
    own transaction, committed or refused alone; a run's save points are chained by their
    compare-and-swap on the revision, so one sent behind a save point that was refused is
    refused too (it names a revision the store never reached).

    :meth:`send` puts a statement on the wire at once (no await) and returns its
    :class:`Answer`. A reader on the loop collects the answers as they arrive; when none is
    out any more the connection leaves pipeline mode and ``on_idle`` is called (the owner
    lets the connection go). Cancelling the wait for an answer, or :meth:`drain`, reads every
    answer still out, blocking: the connection is never left in the middle of a statement.
    """

    def __init__(self, psycopg: Any, conn: Any, prepared: Prepared, on_idle: Callable[[], None]) -> None:
        self.psycopg = psycopg
        self.conn = conn
        self.prepared = prepared
        self.on_idle = on_idle
        self.loop = asyncio.get_running_loop()
        self._pgconn = conn.pgconn
        self._fileno: int = self._pgconn.socket
        self._out: deque[_Out] = deque()

    @property
    def busy(self) -> bool:
        """Whether a statement is out (the connection is in pipeline mode, held by this pipeline)."""
        return bool(self._out)

    def send(self, stmt: Statement, params: list[bytes | None]) -> Answer:
        """Send ``stmt`` with ``params`` now, prepared first (in the same pipeline) when this
        connection has not prepared it; raises ``psycopg.Error`` when the connection fails
        (every answer still out then fails with it)."""
        pgconn = self._pgconn
        opened = not self._out
        try:
            if opened:
                pgconn.enter_pipeline_mode()
                self.loop.add_reader(self._fileno, self._readable)
            prepare = None
            if stmt.name not in self.prepared.names:
                pgconn.send_prepare(stmt.name, stmt.query, param_types=stmt.types)
                pgconn.pipeline_sync()
                prepare = self._push(waited=False)
                self.prepared.names.add(stmt.name)
            pgconn.send_query_prepared(stmt.name, params, param_formats=stmt.formats)
            pgconn.pipeline_sync()
            out = self._push()
            self._flush()
        except self.psycopg.Error as exc:
            self._fail(exc)
            raise
        return Answer(self, stmt, prepare, out)

    def drain(self) -> None:
        """Read every answer still out, blocking (a caller stops waiting, or must use the
        connection itself now)."""
        pgconn = self._pgconn
        try:
            while self._out:
                self._flush()
                if pgconn.is_busy():
                    select.select([self._fileno], [], [])
                    pgconn.consume_input()
                self._collect()
        except self.psycopg.Error as exc:
            self._fail(exc)

    def _flush(self) -> None:
        """Send what libpq still buffers (a statement larger than the socket's buffer: rare),
        taking answers in meanwhile (the server may be waiting to write them)."""
        pgconn = self._pgconn
        while pgconn.flush():
            readable, _, _ = select.select([self._fileno], [self._fileno], [])
            if readable:
                pgconn.consume_input()
                self._collect()

    def _push(self, *, waited: bool = True) -> _Out:
        out = _Out(self.loop.create_future() if waited else None)
        self._out.append(out)
        return out

    def _readable(self) -> None:
        try:
            self._pgconn.consume_input()
            self._collect()
        except self.psycopg.Error as exc:
            self._fail(exc)

    def _collect(self) -> None:
        """Take the answers that have arrived: each command's results, then its sync."""
        pgconn = self._pgconn
        sync = self.psycopg.pq.ExecStatus.PIPELINE_SYNC
        queue = self._out
        if not queue:
            return  # nothing out (the last answer was taken already): the lane was let go
        while queue and not pgconn.is_busy():
            result = pgconn.get_result()
            if result is None:
                continue  # the end of a command's results: its sync follows
            if result.status != sync:
                queue[0].results.append(result)
                continue
            queue.popleft().end()
        if not queue:
            self._idle()

    def _fail(self, exc: BaseException) -> None:
        """The connection failed: every answer still out fails with ``exc``."""
        queue = self._out
        while queue:
            out = queue.popleft()
            out.error = exc
            out.end()
        with contextlib.suppress(self.psycopg.Error):
            self._pgconn.exit_pipeline_mode()
        self._stop()

    def _idle(self) -> None:
        self._pgconn.exit_pipeline_mode()
        self._stop()

    def _stop(self) -> None:
        self.loop.remove_reader(self._fileno)
        self.on_idle()


@dataclass(eq=False, slots=True)
class _Out:
    """One command out: the results read so far; ``done`` once its sync arrived (or the
    connection failed: ``error``), which resolves ``future`` (None: nobody waits for it)."""

    future: asyncio.Future[None] | None
    results: list[Any] = field(default_factory=list)
    done: bool = False
    error: BaseException | None = None

    def end(self) -> None:
        self.done = True
        if self.future is not None and not self.future.done():  # cancelled: its waiter drains
            self.future.set_result(None)


class Answer:
    """The answer to one statement of a :class:`Pipeline`."""

    __slots__ = ("_out", "_pipeline", "_prepare", "_stmt")

    def __init__(self, pipeline: Pipeline, stmt: Statement, prepare: _Out | None, out: _Out) -> None:
        self._pipeline = pipeline
        self._stmt = stmt
        self._prepare = prepare
        self._out = out

    async def result(self) -> Any:
        """The statement's one result (``psycopg.pq.PGresult``); a server error is raised as
        psycopg raises it (a ``psycopg.Error``), a dropped statement as :class:`Unprepared`.
        Cancelled while it waits, every answer still out is read first."""
        pipeline = self._pipeline
        psycopg = pipeline.psycopg
        out = self._out
        if not out.done:
            assert out.future is not None
            try:
                await out.future
            except asyncio.CancelledError:
                pipeline.drain()
                raise
        if out.error is not None:
            raise out.error
        prepare = self._prepare
        if prepare is not None and prepare.results and prepare.error is None:
            failed = prepare.results[0]
            if failed.status == psycopg.pq.ExecStatus.FATAL_ERROR and _sqlstate(psycopg, failed) != _DUPLICATE_STATEMENT:
                pipeline.prepared.names.discard(self._stmt.name)
                _check(psycopg, failed, None)  # why it could not be prepared (its execution failed for that)
        results = out.results
        if not results:
            raise psycopg.OperationalError("the server sent no result")
        result = results[0]
        if result.status == psycopg.pq.ExecStatus.FATAL_ERROR and _sqlstate(psycopg, result) == _UNDEFINED_STATEMENT:
            pipeline.prepared.names.discard(self._stmt.name)
            raise Unprepared(self._stmt.name.decode())
        _check(psycopg, result, pipeline.conn)
        return result


async def execute(psycopg: Any, conn: Any, stmt: Statement, params: list[bytes | None], prepared: Prepared) -> Any:
    """Run ``stmt`` with ``params`` on ``conn`` (a psycopg connection, idle, in autocommit, held
    by the caller) and return its one result: a :class:`Pipeline` of one statement."""
    return await Pipeline(psycopg, conn, prepared, _nothing).send(stmt, params).result()


def _nothing() -> None:
    pass


def _sqlstate(psycopg: Any, result: Any) -> str | None:
    code = result.error_field(psycopg.pq.DiagnosticField.SQLSTATE)
    return None if code is None else bytes(code).decode("ascii", "replace")


def _check(psycopg: Any, result: Any, conn: Any) -> None:
    """Raise the server's error of ``result``, as psycopg would, if it is one."""
    status = result.status
    if status not in (psycopg.pq.ExecStatus.TUPLES_OK, psycopg.pq.ExecStatus.COMMAND_OK):
        encoding = "utf-8" if conn is None else conn.info.encoding
        raise psycopg.errors.error_from_result(result, encoding=encoding)
