"""A PostgreSQL save point sent through libpq itself (``psycopg.pq``), awaited on the event loop.

A leased run's save point is one statement (see :mod:`tether.durable.postgres`), sent twice a
cycle. Through a psycopg cursor, that statement cost about 100-120 µs of client CPU more than
the same statement sent with the connection's libpq handle (measured on one connection: 212 vs
85 µs per statement): the cursor builds an adapters map, converts the query, dumps every
parameter, counts executions for its own prepared statements and wraps the result. Here the
statement is prepared once per connection under a name of its own, its parameters are encoded
to bytes by :func:`encode` (text for scalars, PostgreSQL's binary array format for arrays: a
JSON row goes as it is, with no escaping), and the answers are read with libpq's non-blocking
calls as the socket becomes readable on the event loop. Statements go out in libpq's pipeline
mode (:class:`Pipeline`): a run's next save point, ready while its last is still committing,
is sent right behind it. Only public psycopg modules are used (``psycopg.pq``, ``psycopg.errors``).

A statement prepared here lives in the server session of its connection: :class:`Prepared`
remembers which, per connection. Should the session drop it (a ``DEALLOCATE ALL``, which
psycopg itself sends when its own statement cache is cleared), the execution fails with
``invalid_sql_statement_name`` before running anything, and the statement is prepared again.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import re
import select
import struct
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

TEXT = 25
INT8 = 20
TEXT_ARRAY = 1009
INT8_ARRAY = 1016
_ELEMENTS = {TEXT_ARRAY: TEXT, INT8_ARRAY: INT8}
"""The element type of each array type a statement's parameter may have."""

_PLACEHOLDER = re.compile(r"%\((\w+)\)([sb])")
_ARRAY_HEAD = struct.Struct("!iiIii")  # dimensions, has-nulls flag, element type; length, lower bound
_EMPTY_ARRAY = struct.Struct("!iiI")
_INT8_ITEM = struct.Struct("!iq")
_LENGTH = struct.Struct("!i")
_UNDEFINED_STATEMENT = "26000"  # invalid_sql_statement_name: the session has no such prepared statement
_DUPLICATE_STATEMENT = "42P05"  # duplicate_prepared_statement: the session has it already


@dataclass(frozen=True, slots=True)
class Statement:
    """A statement in libpq's form: ``$n`` placeholders, their names in order, their types
    (OIDs) and formats (0: text, 1: binary), and the name it is prepared under."""

    name: bytes
    query: bytes
    params: tuple[str, ...]
    types: tuple[int, ...]
    formats: tuple[int, ...]


@functools.lru_cache(maxsize=128)
def statement(query: str, types: tuple[tuple[str, int], ...]) -> Statement:
    """``query``, written with psycopg's named placeholders (``%(name)s`` in text, ``%(name)b``
    in binary), in libpq's form; every placeholder's type is given in ``types`` (name, OID).
    A name used twice is one parameter. The prepared name is a digest of the query and types,
    so equal statements share it on a connection."""
    by_name = dict(types)
    names: list[str] = []
    formats: list[int] = []

    def number(match: re.Match[str]) -> str:
        name, kind = match.groups()
        if name not in names:
            if name not in by_name:
                raise KeyError(f"no type given for parameter {name!r}")
            names.append(name)
            formats.append(1 if kind == "b" else 0)
        elif formats[names.index(name)] != (1 if kind == "b" else 0):
            raise ValueError(f"parameter {name!r} is used in text and in binary")
        return f"${names.index(name) + 1}"

    text = _PLACEHOLDER.sub(number, query)
    for name, kind in zip(names, formats, strict=True):
        if (by_name[name] in _ELEMENTS) != (kind == 1):
            raise ValueError(f"parameter {name!r}: arrays go in binary, scalars in text")
    digest = hashlib.sha256(repr((text, [by_name[n] for n in names])).encode()).hexdigest()[:24]
    return Statement(b"tether_" + digest.encode(), text.encode(), tuple(names), tuple(by_name[n] for n in names), tuple(formats))


def encode(stmt: Statement, values: Mapping[str, Any]) -> list[bytes | None]:
    """The parameters of ``stmt`` from ``values`` by name, as libpq takes them: None (NULL),
    a scalar's text (an ``int`` or a ``str``), an array (a list of ``int`` or ``str``) in binary."""
    out: list[bytes | None] = []
    for name, oid in zip(stmt.params, stmt.types, strict=True):
        value = values[name]
        if value is None:
            out.append(None)
        elif oid in _ELEMENTS:
            out.append(_array(value, oid))
        elif type(value) is str:
            out.append(value.encode())
        elif type(value) is int:
            out.append(int.__repr__(value).encode())
        else:
            raise TypeError(f"parameter {name!r}: cannot send a {type(value).__name__} as a scalar")
    return out


def _array(values: Sequence[Any], oid: int) -> bytes:
    """A one-dimensional array without NULLs in PostgreSQL's binary format."""
    element = _ELEMENTS[oid]
    if not values:
        return _EMPTY_ARRAY.pack(0, 0, element)
    head = _ARRAY_HEAD.pack(1, 0, element, len(values), 1)
    if element == INT8:
        return head + b"".join([_INT8_ITEM.pack(8, value) for value in values])
    parts = [head]
    for value in values:
        data = value.encode()
        parts.append(_LENGTH.pack(len(data)))
        parts.append(data)
    return b"".join(parts)


@dataclass(eq=False)
class Prepared:
    """The statements prepared on one connection (a new connection starts with none), and
    whether the connection's client encoding is UTF-8, the encoding :func:`encode` writes (read
    once: psycopg's ``conn.info.encoding`` looks it up anew on every call)."""

    utf8: bool = True
    names: set[bytes] = field(default_factory=set)

    @classmethod
    def of(cls, conn: Any) -> Prepared:
        """The record of a new psycopg connection ``conn``."""
        return cls(utf8=conn.info.encoding == "utf-8")


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


def available(psycopg: Any) -> bool:
    """Whether this psycopg offers what :func:`execute` uses (its libpq wrapper and its
    errors made from a result)."""
    errors = getattr(psycopg, "errors", None)
    return getattr(errors, "error_from_result", None) is not None and hasattr(getattr(psycopg, "pq", None), "ExecStatus")
