"""A statement in libpq's form, its parameters encoded to bytes as libpq takes them.

A leased run's save point is one statement (see :mod:`.dialect`), sent twice a cycle. Through a
psycopg cursor, that statement cost about 100-120 µs of client CPU more than the same statement
sent with the connection's libpq handle (measured on one connection: 212 vs 85 µs per
statement): the cursor builds an adapters map, converts the query, dumps every parameter, counts
executions for its own prepared statements and wraps the result. Here the statement is prepared
once per connection under a name of its own (:class:`Prepared` remembers which, per
connection), and its parameters are encoded to bytes by :func:`encode` (text for scalars,
PostgreSQL's binary array format for arrays: a JSON row goes as it is, with no escaping).
:mod:`.pipeline` sends it. Only public psycopg modules are used (``psycopg.pq``,
``psycopg.errors``).
"""

from __future__ import annotations

import functools
import hashlib
import re
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


def encode(stmt: Statement, values: Mapping[str, Any], encoding: str = "utf-8") -> list[bytes | None]:
    """The parameters of ``stmt`` from ``values`` by name, as libpq takes them: None (NULL),
    a scalar's text (an ``int`` or a ``str``), an array (a list of ``int`` or ``str``) in binary."""
    out: list[bytes | None] = []
    for name, oid in zip(stmt.params, stmt.types, strict=True):
        value = values[name]
        if value is None:
            out.append(None)
        elif oid in _ELEMENTS:
            out.append(_array(value, oid, encoding))
        elif type(value) is str:
            out.append(value.encode(encoding))
        elif type(value) is int:
            out.append(int.__repr__(value).encode())
        else:
            raise TypeError(f"parameter {name!r}: cannot send a {type(value).__name__} as a scalar")
    return out


def _array(values: Sequence[Any], oid: int, encoding: str) -> bytes:
    """A one-dimensional array without NULLs in PostgreSQL's binary format."""
    element = _ELEMENTS[oid]
    if not values:
        return _EMPTY_ARRAY.pack(0, 0, element)
    head = _ARRAY_HEAD.pack(1, 0, element, len(values), 1)
    if element == INT8:
        return head + b"".join([_INT8_ITEM.pack(8, value) for value in values])
    parts = [head]
    for value in values:
        data = value.encode(encoding)
        parts.append(_LENGTH.pack(len(data)))
        parts.append(data)
    return b"".join(parts)


@dataclass(eq=False)
class Prepared:
    """The statements prepared on one connection (a new connection starts with none), and the
    connection's client encoding (Python's name for it), the one :func:`encode` writes text in
    (read once: psycopg's ``conn.info.encoding`` looks it up anew on every call)."""

    encoding: str = "utf-8"
    names: set[bytes] = field(default_factory=set)

    @classmethod
    def of(cls, conn: Any) -> Prepared:
        """The record of a new psycopg connection ``conn``."""
        return cls(encoding=conn.info.encoding)


def available(psycopg: Any) -> bool:
    """Whether this psycopg offers what :mod:`.pipeline` uses: its libpq wrapper, its errors made
    from a result, and a libpq with pipeline mode (14 or later; ``psycopg[binary]`` bundles one)."""
    errors = getattr(psycopg, "errors", None)
    pq: Any = getattr(psycopg, "pq", None)
    if getattr(errors, "error_from_result", None) is None or not hasattr(pq, "ExecStatus"):
        return False
    return bool(pq.version() >= 140000)
