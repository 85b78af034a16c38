"""``RunStore.delete_run``: every row of the run goes, under its lease, and nothing else does."""

from __future__ import annotations

from pathlib import Path

import pytest

from tether import Agent, ScriptedModel
from tether.durable import RunStore, SQLiteStore
from tether.errors import LeaseLostError, RunLockedError, RunNotFoundError


def make_run(store: RunStore, run_id: str) -> None:
    Agent(model=ScriptedModel(["hello"]), store=store)("hi", run_id=run_id)


def test_delete_run_removes_the_run_and_only_it(store: RunStore) -> None:
    make_run(store, "gone")
    make_run(store, "kept")
    store.delete_run("gone")
    assert store.head("gone") is None and store.load("gone") is None
    assert [run.run_id for run in store.list_runs()] == ["kept"]
    with pytest.raises(RunNotFoundError):
        store.history("gone")
    kept = store.load("kept")
    assert kept is not None and [m["role"] for m in kept.messages] == ["user", "assistant"]
    assert len(store.history("kept")) == 3
    make_run(store, "gone")  # the id can be used again, from scratch
    again = store.load("gone")
    assert again is not None and len(again.messages) == 2 and len(store.history("gone")) == 3


def test_delete_run_of_an_unknown_run_names_it(store: RunStore) -> None:
    with pytest.raises(RunNotFoundError, match=r"'ghost'.*nothing to delete"):
        store.delete_run("ghost")


def test_delete_run_refuses_a_run_with_a_live_owner(store: RunStore) -> None:
    make_run(store, "busy")
    with store.lease("busy"):
        with pytest.raises(RunLockedError):
            store.delete_run("busy")
        assert store.head("busy") is not None  # nothing deleted
    store.delete_run("busy")
    assert store.head("busy") is None


def test_a_fenced_owner_cannot_write_a_deleted_run_back(store: RunStore) -> None:
    make_run(store, "r")
    head = store.head("r")
    assert head is not None
    with store.lease("r") as lease:
        store.break_lease("r")  # what `tether rm --force` does first
        store.delete_run("r")
        with pytest.raises(LeaseLostError):
            store.write("r", {**head, "rev": head["rev"] + 1}, [], {}, lease=lease)
    assert store.head("r") is None


def test_sqlite_delete_run_removes_its_lock_file(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "runs.db")
    make_run(store, "r")
    assert list(store.lock_dir.iterdir())
    store.delete_run("r")
    assert not list(store.lock_dir.iterdir())
