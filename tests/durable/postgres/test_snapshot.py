"""`PostgresStore.snapshot`: the reads of a thread inside it are one read transaction (one
snapshot, one lane), as :mod:`tether.serve.eventlog` reads a run's new steps and their messages."""

from __future__ import annotations

import pytest

from tether import Agent
from tether.durable.postgres import PostgresStore
from tether.errors import RunNotFoundError
from tether.models import ScriptedModel

psycopg = pytest.importorskip("psycopg")


def test_reads_inside_a_snapshot_see_one_state_of_the_store(pg_conninfo: str) -> None:
    store, other = PostgresStore(pg_conninfo), PostgresStore(pg_conninfo)
    try:
        Agent(model=ScriptedModel(["hello", "again"]), store=store)("hi", run_id="r1")
        with store.snapshot("r1"):
            steps = store.history("r1")
            assert other.delete_run("r1") == ["r1"]  # committed by another connection meanwhile
            assert store.history("r1") == steps  # the same snapshot: the run is still there
            assert [m["role"] for m in store.messages("r1", 0, 2)] == ["user", "assistant"]
            with store.snapshot("r1"):  # nested: the outer one holds
                assert store.head("r1") is not None
        with pytest.raises(RunNotFoundError):
            store.history("r1")  # a new snapshot: deleted
        with pytest.raises(RunNotFoundError), store.snapshot("r1"):
            store.history("r1")  # an error inside: the transaction is rolled back, the lane serves on
        assert store.list_runs() == [] and store.head("r1") is None
    finally:
        store.close()
        other.close()
