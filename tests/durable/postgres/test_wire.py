"""`tether.durable.postgres.wire`: statements in libpq's form, their parameters as libpq takes
them, checked on a real PostgreSQL server."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tether.durable.postgres import pipeline, wire

psycopg = pytest.importorskip("psycopg")


def _execute(conn: Any, stmt: wire.Statement, params: list[bytes | None]) -> Any:
    """``stmt`` run on ``conn`` through a pipeline of one statement, blocking: its one result."""
    pipe = pipeline.Pipeline(psycopg, conn, wire.Prepared.of(conn))
    out = pipe.send(stmt, params)
    pipeline.wait(pipe.answer(out), pipe.fileno)
    return pipe.outcome(out)


def test_a_placeholder_named_twice_is_one_parameter_and_every_one_needs_a_type() -> None:
    stmt = wire.statement("SELECT %(a)s, %(b)b, %(a)s", (("a", wire.INT8), ("b", wire.TEXT_ARRAY)))
    assert stmt.query == b"SELECT $1, $2, $1" and stmt.params == ("a", "b")
    assert stmt.types == (wire.INT8, wire.TEXT_ARRAY) and stmt.formats == (0, 1)
    assert stmt.name.startswith(b"tether_") and stmt == wire.statement("SELECT %(a)s, %(b)b, %(a)s", (("a", 20), ("b", 1009)))
    with pytest.raises(KeyError, match="'c'"):
        wire.statement("SELECT %(c)s", (("a", wire.INT8),))
    with pytest.raises(ValueError, match="arrays go in binary"):
        wire.statement("SELECT %(a)s", (("a", wire.INT8_ARRAY),))
    with pytest.raises(ValueError, match="in text and in binary"):
        wire.statement("SELECT %(a)s, %(a)b", (("a", wire.INT8_ARRAY),))
    with pytest.raises(TypeError, match="'a'"):
        wire.encode(wire.statement("SELECT %(a)s", (("a", wire.INT8),)), {"a": 1.5})


_TEXTS = st.lists(st.text(st.characters(exclude_characters="\x00", exclude_categories=["Cs"]), max_size=40), max_size=6)
_INTS = st.lists(st.integers(-(2**63), 2**63 - 1), max_size=6)


@settings(max_examples=60, deadline=None)
@given(texts=_TEXTS, ints=_INTS, scalar=st.text(st.characters(exclude_characters="\x00", exclude_categories=["Cs"]), max_size=60))
def test_parameters_reach_the_server_exactly(pg_server: Any, texts: list[str], ints: list[int], scalar: str) -> None:
    """Text and bigint arrays (binary), text and bigint scalars (text) and NULL arrive as sent:
    quotes, backslashes, braces, commas and non-ASCII text included, and empty arrays."""
    stmt = wire.statement(
        "SELECT %(t)b::text[], %(i)b::bigint[], %(s)s::text, %(n)s::bigint, %(z)s::text",
        (("t", wire.TEXT_ARRAY), ("i", wire.INT8_ARRAY), ("s", wire.TEXT), ("n", wire.INT8), ("z", wire.TEXT)),
    )
    with psycopg.connect(pg_server.conninfo(), autocommit=True) as conn:
        params = wire.encode(stmt, {"t": texts, "i": ints, "s": scalar, "n": len(ints), "z": None})
        result = _execute(conn, stmt, params)
        row = conn.execute("SELECT %s::text[], %s::bigint[]", (texts, ints)).fetchone()  # psycopg's own reading of the same values
        assert row is not None
        assert result.get_value(0, 0) == conn.execute("SELECT %s::text[]::text", (texts,)).fetchone()[0].encode()  # type: ignore[index]
        assert result.get_value(0, 1) == conn.execute("SELECT %s::bigint[]::text", (ints,)).fetchone()[0].encode()  # type: ignore[index]
        assert result.get_value(0, 2) == scalar.encode() and result.get_value(0, 3) == str(len(ints)).encode()
        assert result.get_value(0, 4) is None
