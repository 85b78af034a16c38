"""A PostgreSQL save point sent through libpq itself (``psycopg.pq``), awaited on the event loop.

A leased run's save point is one statement (see :mod:`tether.durable.postgres`), sent twice a
cycle. Through a psycopg cursor, that statement cost about 100-120 µs of client CPU more than
the same statement sent with the connection's libpq handle (measured on one connection: 212 vs
85 µs per statement): the cursor builds an adapters map, converts the query, dumps every
parameter, counts executions for its own prepared statements and wraps the result. Here the
statement is prepared once per connection under a name of its own, its parameters are encoded
to bytes by :func:`encode` (text for scalars, PostgreSQL's binary array format for arrays: a
JSON row goes as it is, with no escaping), and the answer is read with libpq's non-blocking
calls as the socket becomes readable on the event loop. Only public psycopg modules are used
(``psycopg.pq``, ``psycopg.errors``).

A statement prepared here lives in the server session of its connection: :class:`Prepared`
remembers which, per connection. Should the session drop it (a ``DEALLOCATE ALL``, which
psycopg itself sends when its own statement cache is cleared), the execution fails with
``invalid_sql_statement_name`` before running anything, and the statement is prepared again.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import re
import select
import struct
from collections.abc import Mapping, Sequence
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


async def execute(psycopg: Any, conn: Any, stmt: Statement, params: list[bytes | None], prepared: Prepared) -> Any:
    """Run ``stmt`` with ``params`` on ``conn`` (a psycopg connection, idle, in autocommit, held
    by the caller) and return its one result (``psycopg.pq.PGresult``); a server error is
    raised as psycopg raises it (a ``psycopg.Error``). The statement is prepared first when
    this connection has not prepared it. Cancelled while it waits, the round trip is finished
    before the cancellation goes through: the connection is never left mid-statement."""
    pgconn = conn.pgconn
    for _attempt in range(2):
        if stmt.name not in prepared.names:
            await _prepare(psycopg, pgconn, stmt)
            prepared.names.add(stmt.name)
        pgconn.send_query_prepared(stmt.name, params, param_formats=stmt.formats)
        result = await _result(psycopg, pgconn)
        if result.status != psycopg.pq.ExecStatus.FATAL_ERROR or _sqlstate(psycopg, result) != _UNDEFINED_STATEMENT:
            break
        prepared.names.discard(stmt.name)  # the session dropped it (DEALLOCATE ALL): nothing ran, prepare it again
    _check(psycopg, result, conn)
    return result


async def _prepare(psycopg: Any, pgconn: Any, stmt: Statement) -> None:
    pgconn.send_prepare(stmt.name, stmt.query, param_types=stmt.types)
    result = await _result(psycopg, pgconn)
    if result.status == psycopg.pq.ExecStatus.FATAL_ERROR and _sqlstate(psycopg, result) == _DUPLICATE_STATEMENT:
        return  # duplicate_prepared_statement: this session has it already (same name, same text)
    _check(psycopg, result, None)


async def _result(psycopg: Any, pgconn: Any) -> Any:
    """The first result of the statement just sent (errors included); the rest are read too.

    The answer is awaited with a reader on the event loop and no timer (psycopg's
    ``wait_async`` also arms a timer per wait, to look for interrupts: it cost ~35 µs of CPU
    per statement more, measured; a cancellation reaches this coroutine without one)."""
    loop = asyncio.get_running_loop()
    fileno = pgconn.socket
    try:
        while pgconn.flush():  # a statement larger than the socket's buffer: rare
            if await _ready(loop, fileno, write=True):
                pgconn.consume_input()
        while pgconn.is_busy():
            await _ready(loop, fileno, write=False)
            pgconn.consume_input()
    except asyncio.CancelledError:
        _finish(pgconn, fileno)  # the statement is out: finish its round trip, then stop
        raise
    results = []
    while (result := pgconn.get_result()) is not None:
        results.append(result)
    if not results:
        raise psycopg.OperationalError("the server sent no result")
    return results[0]


async def _ready(loop: asyncio.AbstractEventLoop, fileno: int, *, write: bool) -> bool:
    """Wait until ``fileno`` is readable (or, with ``write``, writable or readable); True
    when it is readable."""
    readable = loop.create_future()
    loop.add_reader(fileno, _resolve, readable, True)
    if write:
        loop.add_writer(fileno, _resolve, readable, False)
    try:
        return bool(await readable)
    finally:
        loop.remove_reader(fileno)
        if write:
            loop.remove_writer(fileno)


def _resolve(future: asyncio.Future[bool], readable: bool) -> None:
    if not future.done():
        future.set_result(readable)


def _finish(pgconn: Any, fileno: int) -> None:
    """Complete the round trip of the statement out on ``pgconn``, blocking, and drop its
    results (its caller was cancelled: it stops here, and the connection is idle again)."""
    while pgconn.flush():
        readable, _, _ = select.select([fileno], [fileno], [])
        if readable:
            pgconn.consume_input()
    while pgconn.is_busy():
        select.select([fileno], [], [])
        pgconn.consume_input()
    while pgconn.get_result() is not None:
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
