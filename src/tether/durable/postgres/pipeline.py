"""A save point, written once as a protocol over libpq (``psycopg.pq``), with two drivers.

psycopg's own pattern (``psycopg/generators.py`` and ``waiting.py``): the protocol is a
generator that makes the libpq calls and yields what it waits for (the socket readable, or
writable too); a driver waits for that and sends back what became ready. :func:`save_point` is
the protocol of one save point: its statement sent (prepared first on a connection that lacks
it), then its answer read, then its outcome. :func:`wait` drives it blocking (the writer
thread's commits, a tool's transaction), :func:`wait_async` on the event loop's selector (a
leased save point sent from the loop, :meth:`Pipeline.finish`): one protocol, two waiters.

Statements go out in libpq's pipeline mode (:class:`Pipeline`): a run's next save point, ready
while its last is still committing, is sent right behind it. Each statement is followed by a
sync, so each is its own transaction, committed or refused alone; a run's save points are
chained by their compare-and-swap on the revision, so one sent behind a save point that was
refused is refused too (it names a revision the store never reached).

A statement prepared on a connection lives in its server session: should the session drop it
(a ``DEALLOCATE ALL``, which psycopg itself sends when its own statement cache is cleared), the
execution fails with ``invalid_sql_statement_name`` before running anything
(:class:`Unprepared`), and the statement is prepared again at its next send.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import select
from collections import deque
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any, TypeVar

from .wire import Prepared, Statement

T = TypeVar("T")

WAIT_NONE = 0
"""Nothing to wait for (the statement is sent): a driver goes on at once."""
WAIT_R = 1
"""Wait for the socket to be readable (an answer arriving)."""
WAIT_W = 2
"""Wait for the socket to be writable."""
WAIT_RW = WAIT_R | WAIT_W
"""Wait for either (libpq still buffers part of a statement: the server may be writing answers)."""

PQGen = Generator[int, int, T]
"""A protocol: yields what it waits for (``WAIT_*``), is sent what became ready (``WAIT_R``,
``WAIT_W``, or ``WAIT_NONE``: look again), returns its outcome."""

_UNDEFINED_STATEMENT = "26000"  # invalid_sql_statement_name: the session has no such prepared statement
_DUPLICATE_STATEMENT = "42P05"  # duplicate_prepared_statement: the session has it already


class Unprepared(Exception):
    """The server session had dropped the statement (a ``DEALLOCATE ALL``, which psycopg sends
    when it clears its own statement cache), or had it already when it was prepared again: nothing
    ran. It is sent again, prepared first in the first case."""


def save_point(pipeline: Pipeline, stmt: Statement, params: list[bytes | None]) -> PQGen[bool]:
    """The protocol of one save point on ``pipeline``: ``stmt`` sent with ``params`` at the first
    step (which yields :data:`WAIT_NONE`: a caller may stop there, send more statements behind it,
    and drive the rest later), then its answer read; returns whether it changed the head row
    (its statement's ``count(*)``: False when the compare-and-swap refused it). Raises
    ``psycopg.Error`` as psycopg would (a server error, a lost connection), :class:`Unprepared`
    when the session had dropped the statement (nothing ran)."""
    out = pipeline.send(stmt, params)
    yield WAIT_NONE
    yield from pipeline.answer(out)
    result = pipeline.outcome(out)
    row = result.get_value(0, 0) if result.ntuples == 1 else None
    return row is not None and int(row) != 0


def wait(gen: PQGen[T], fileno: int) -> T:
    """Drive ``gen`` blocking: wait for what it yields with ``poll`` (no limit on the descriptor's
    number, unlike ``select``; ``select`` where there is no ``poll``)."""
    try:
        state = next(gen)
        while True:
            state = gen.send(ready(fileno, state))
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


def ready(fileno: int, state: int, timeout: float | None = None) -> int:
    """Wait (at most ``timeout`` seconds; None: no limit) until the socket is ready for some of
    ``state`` (:data:`WAIT_NONE`: at once); what is (an error, a hang-up or a closed descriptor
    counts as readable: reading it is what reports it)."""
    if state == WAIT_NONE:
        return WAIT_NONE
    if not hasattr(select, "poll"):
        readable, writable, _ = select.select([fileno] if state & WAIT_R else [], [fileno] if state & WAIT_W else [], [], timeout)
        return (WAIT_R if readable else 0) | (WAIT_W if writable else 0)
    poller = select.poll()
    poller.register(fileno, (select.POLLIN if state & WAIT_R else 0) | (select.POLLOUT if state & WAIT_W else 0))
    what = WAIT_NONE
    for _, events in poller.poll(None if timeout is None else timeout * 1000):
        if events & (select.POLLIN | select.POLLERR | select.POLLHUP | select.POLLNVAL):
            what |= WAIT_R
        if events & select.POLLOUT:
            what |= WAIT_W
    return what


async def wait_async(gen: PQGen[T], fileno: int, *, wake: asyncio.Future[None] | None = None) -> T:
    """Drive ``gen`` on the running event loop: wait for what it yields on the loop's selector
    (a reader or writer stays registered from one wait to the next while ``gen`` waits for the
    same: no system call in between). ``wake``: a future whose end also ends a wait (what ``gen``
    waits for was read elsewhere, see :meth:`Pipeline.drain`, which takes this wait's reader off
    the loop): ``gen`` is sent :data:`WAIT_NONE` and looks again."""
    loop = asyncio.get_running_loop()
    registered = WAIT_NONE
    try:
        state = next(gen)
        while True:
            if state == WAIT_NONE:
                state = gen.send(WAIT_NONE)
                continue
            fired: asyncio.Future[int] = loop.create_future()
            wakeup = functools.partial(_fire, fired)
            if state & WAIT_R:
                loop.add_reader(fileno, wakeup, WAIT_R)
            elif registered & WAIT_R:
                loop.remove_reader(fileno)
            if state & WAIT_W:
                loop.add_writer(fileno, wakeup, WAIT_W)
            elif registered & WAIT_W:
                loop.remove_writer(fileno)
            registered = state
            woken = functools.partial(_woken, fired)
            if wake is not None:
                wake.add_done_callback(woken)
            try:
                what = await fired
            finally:
                if wake is not None:
                    wake.remove_done_callback(woken)
            state = gen.send(what)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
    finally:
        if registered & WAIT_R and (wake is None or not wake.done()):  # else the pipeline's reader is what stays
            loop.remove_reader(fileno)
        if registered & WAIT_W:
            loop.remove_writer(fileno)


def _fire(fired: asyncio.Future[int], what: int) -> None:
    if not fired.done():
        fired.set_result(what)


def _woken(fired: asyncio.Future[int], _: object) -> None:
    _fire(fired, WAIT_NONE)


class Pipeline:
    """The statements one connection has out, answered in order (libpq's pipeline mode).

    A run's save points follow one another on its lease's connection: the next is often ready
    while the last is still committing (the model answered before the server did). Sent at
    once behind it, it reaches the server before the server is done with the last, instead of a
    round trip after its answer reached the caller: no idle gap on either side between two
    commits.

    :meth:`send` puts a statement on the wire (no wait) and :meth:`answer` reads until its answer
    is in (the protocol's reading half); when none is out any more the connection leaves
    pipeline mode and ``on_idle`` is called (the owner lets the connection go). On an event
    loop (``loop``) one waiter reads at a time (:meth:`finish`), and while none does the loop
    takes the answers as they arrive (:meth:`_listen`); a waiter cancelled, or a blocking
    use of the connection on the loop's thread (:meth:`drain`), reads every answer still out,
    blocking: the connection is never left in the middle of a statement.

    Args:
        psycopg: The psycopg module.
        conn: A psycopg connection, idle, in autocommit or in a transaction, held by the caller
            (its lock too) while a statement is out.
        prepared: The statements prepared on ``conn``.
        on_idle: Called when the last answer out is in (default: nothing).
        loop: The event loop the statements are sent from (None: a thread's, driven by :func:`wait`).
    """

    def __init__(
        self,
        psycopg: Any,
        conn: Any,
        prepared: Prepared,
        on_idle: Callable[[], None] | None = None,
        loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        self.psycopg = psycopg
        self.conn = conn
        self.prepared = prepared
        self.on_idle = on_idle
        self.loop = loop
        self._pgconn = conn.pgconn
        self.fileno: int = self._pgconn.socket
        self._out: deque[Sent] = deque()
        self._reading: Sent | None = None  # what the waiter reading on the loop waits for

    @property
    def last(self) -> Sent:
        """The statement sent last (out)."""
        return self._out[-1]

    @property
    def busy(self) -> bool:
        """Whether a statement is out (the connection is in pipeline mode, held by this pipeline)."""
        return bool(self._out)

    def send(self, stmt: Statement, params: list[bytes | None]) -> Sent:
        """Send ``stmt`` with ``params`` now, prepared first (before the same sync: still one
        request) when this connection has not prepared it; raises ``psycopg.Error`` when the connection fails
        (every answer still out then fails with it)."""
        pgconn = self._pgconn
        try:
            if not self._out:
                pgconn.enter_pipeline_mode()
            prepare = stmt.name not in self.prepared.names
            if prepare:  # under the same sync as its execution: one request
                pgconn.send_prepare(stmt.name, stmt.query, param_types=stmt.types)
                self.prepared.names.add(stmt.name)
            pgconn.send_query_prepared(stmt.name, params, param_formats=stmt.formats)
            pgconn.pipeline_sync()
            out = self._push(stmt, prepare)
            pgconn.flush()  # what the socket takes now; the rest goes out as the answer is awaited
        except self.psycopg.Error as exc:
            self._fail(exc)
            raise
        self._listen()
        return out

    def answer(self, out: Sent) -> PQGen[None]:
        """The reading half of the protocol: send what libpq still buffers (a statement larger
        than the socket's buffer: rare) and take the answers as they arrive, until ``out`` is
        answered (a failed connection fails every answer still out)."""
        pgconn = self._pgconn
        try:
            while not out.done:
                if pgconn.flush():
                    got = yield WAIT_RW
                else:
                    self._collect()  # libpq may hold whole answers already
                    if out.done:
                        break
                    got = yield WAIT_R
                if got & WAIT_R:
                    pgconn.consume_input()
                    self._collect()
        except self.psycopg.Error as exc:
            self._fail(exc)

    def outcome(self, out: Sent) -> Any:
        """The one result (``psycopg.pq.PGresult``) of the answered ``out``; a server error is
        raised as psycopg raises it (a ``psycopg.Error``), a dropped statement as :class:`Unprepared`."""
        psycopg = self.psycopg
        if out.error is not None:
            raise out.error
        results = out.results
        if out.prepare:
            failed = results[0] if results else None
            if failed is not None and failed.status == psycopg.pq.ExecStatus.FATAL_ERROR:
                if _sqlstate(psycopg, failed) == _DUPLICATE_STATEMENT:
                    raise Unprepared(out.stmt.name.decode())  # the session had it: nothing ran, sent again as it is
                self.prepared.names.discard(out.stmt.name)
                _check(psycopg, failed, self.prepared)  # why it could not be prepared (its execution was skipped for that)
            results = results[1:]
        if not results:
            raise psycopg.OperationalError("the server sent no result")
        result = results[0]
        if result.status == psycopg.pq.ExecStatus.FATAL_ERROR and _sqlstate(psycopg, result) == _UNDEFINED_STATEMENT:
            self.prepared.names.discard(out.stmt.name)
            raise Unprepared(out.stmt.name.decode())
        _check(psycopg, result, self.prepared)
        return result

    async def finish(self, gen: PQGen[T], out: Sent) -> T:
        """Drive ``gen``, the protocol of ``out`` (its first step taken), on the loop. The answers
        come in order: while another waiter reads, this one waits for it to stop, then reads on
        (one reader at a time). Cancelled while it waits, every answer still out is read first."""
        try:
            while not out.done and self._reading is not None:
                assert self._reading.future is not None
                await asyncio.wait([self._reading.future])  # the reader stops once its answer is in
            reading = not out.done
            if reading:
                self._reading = out  # its reader replaces the idle one (_listen) on the socket
            try:
                return await wait_async(gen, self.fileno, wake=out.future)
            finally:
                if reading:
                    self._reading = None
                    self._listen()
        except asyncio.CancelledError:
            self.drain()
            raise

    def drain(self) -> None:
        """Read every answer still out, blocking (a caller stops waiting, or must use the
        connection itself now)."""
        if self._out:
            wait(self.answer(self._out[-1]), self.fileno)

    def _listen(self) -> None:
        """Statements out on a loop and no waiter reading: the loop takes their answers as they
        arrive, so the connection is let go once the last is in even if nobody awaits it (its
        waiter was cancelled before it ran)."""
        if self.loop is not None and self._out and self._reading is None:
            self.loop.add_reader(self.fileno, self._readable)

    def _readable(self) -> None:
        try:
            self._pgconn.consume_input()
            self._collect()
        except self.psycopg.Error as exc:
            self._fail(exc)

    def _push(self, stmt: Statement, prepare: bool) -> Sent:
        future = self.loop.create_future() if self.loop is not None else None
        out = Sent(stmt, prepare, future)
        self._out.append(out)
        return out

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
            self._pgconn.exit_pipeline_mode()
            self._stop()

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

    def _stop(self) -> None:
        """Nothing out any more: no reader of the loop's stays on the socket, the owner lets go."""
        if self.loop is not None:
            self.loop.remove_reader(self.fileno)  # a waiter's writer, if any, goes with its wait
        if self.on_idle is not None:
            self.on_idle()


@dataclass(eq=False, slots=True)
class Sent:
    """One request out: its statement (``prepare``: prepared first, under the same sync), the results read
    so far; ``done`` once its sync arrived (or the connection failed: ``error``), which resolves
    ``future`` (None: nobody on a loop waits for it)."""

    stmt: Statement
    prepare: bool
    future: asyncio.Future[None] | None
    results: list[Any] = field(default_factory=list)
    done: bool = False
    error: BaseException | None = None

    def end(self) -> None:
        self.done = True
        if self.future is not None and not self.future.done():
            self.future.set_result(None)


def _sqlstate(psycopg: Any, result: Any) -> str | None:
    code = result.error_field(psycopg.pq.DiagnosticField.SQLSTATE)
    return None if code is None else bytes(code).decode("ascii", "replace")


def _check(psycopg: Any, result: Any, prepared: Prepared) -> None:
    """Raise the server's error of ``result``, as psycopg would, if it is one."""
    status = result.status
    if status not in (psycopg.pq.ExecStatus.TUPLES_OK, psycopg.pq.ExecStatus.COMMAND_OK):
        raise psycopg.errors.error_from_result(result, encoding=prepared.encoding)
