"""SQLiteStore connections: shared by the threads that use the store, all closed by ``close()``.

Strands runs each agent call's event loop on a new thread: a store keeping a connection per
thread opened one per call (settings and schema check each time) and ``close()`` left them open.
"""

from __future__ import annotations

import gc
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tether.durable import SQLiteStore
from tether.durable.sqlite import _MAX_IDLE

from .helpers import Plan, make_agent, open_files


def is_open(conn: sqlite3.Connection) -> bool:
    try:
        conn.execute("SELECT 1")
    except sqlite3.ProgrammingError:  # closed
        return False
    return True


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[sqlite3.Connection]:
    """Every connection ``sqlite3.connect`` opens during the test."""
    connections: list[sqlite3.Connection] = []
    connect = sqlite3.connect

    def counting(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        conn = connect(*args, **kwargs)
        connections.append(conn)
        return conn

    monkeypatch.setattr(sqlite3, "connect", counting)
    return connections


@pytest.fixture
def no_gc() -> Iterator[None]:
    """The cyclic collector off: a connection must be closed by the store, not reclaimed by chance."""
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def on_new_threads(count: int, call: Callable[[int], Any]) -> None:
    """``call(i)`` on a new thread each, one after the other (as Strands runs each agent call)."""
    errors: list[BaseException] = []

    def run(i: int) -> None:
        try:
            call(i)
        except BaseException as exc:
            errors.append(exc)

    for i in range(count):
        thread = threading.Thread(target=run, args=(i,))
        thread.start()
        thread.join()
    assert not errors, errors


def test_calls_from_short_lived_threads_reuse_a_connection_and_close_leaves_none_open(
    tmp_path: Path, opened: list[sqlite3.Connection], no_gc: None
) -> None:
    path = tmp_path / "runs.db"
    store = SQLiteStore(path)
    on_new_threads(12, lambda i: make_agent(store, Plan())("go", run_id=f"r{i}"))
    on_new_threads(12, lambda i: store.head(f"r{i}"))
    assert len(opened) <= 2, len(opened)  # one connection, and one for commits made from the event loop
    assert all(store.head(f"r{i}") is not None for i in range(12))
    store.close()
    assert open_files(path) == 0
    assert not any(is_open(conn) for conn in opened)
    assert store.head("r0") is not None  # a closed store opens a connection when used again
    store.close()
    assert open_files(path) == 0


def test_threads_using_the_store_at_once_each_get_a_connection_of_their_own(tmp_path: Path, opened: list[sqlite3.Connection]) -> None:
    path = tmp_path / "runs.db"
    store = SQLiteStore(path)
    threads = 4
    together = threading.Barrier(threads)
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            together.wait()
            for round_ in range(5):
                make_agent(store, Plan())("go", run_id=f"t{i}-{round_}")
                assert store.load(f"t{i}-{round_}") is not None
        except BaseException as exc:
            errors.append(exc)

    workers = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert not errors, errors
    assert len(opened) <= 2 * threads, len(opened)  # at most one of each kind per thread using it at once
    assert len(store.list_runs()) == threads * 5
    store.close()
    assert open_files(path) == 0


def test_a_connection_in_use_when_the_store_closes_is_closed_when_its_thread_is_done(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    store = SQLiteStore(path)
    inside, closed = threading.Event(), threading.Event()
    result: list[Any] = []

    def read() -> None:
        with store._reading("r") as conn:
            inside.set()
            closed.wait(10)
            result.append(conn.execute("SELECT COUNT(*) FROM runs").fetchone())  # still usable inside

    thread = threading.Thread(target=read)
    thread.start()
    assert inside.wait(10)
    store.close()
    closed.set()
    thread.join()
    assert result == [(0,)]
    assert open_files(path) == 0


def test_idle_connections_kept_are_bounded(tmp_path: Path, opened: list[sqlite3.Connection]) -> None:
    path = tmp_path / "runs.db"
    store = SQLiteStore(path)
    stack = [store._connection() for _ in range(_MAX_IDLE + 3)]  # as many threads inside the store at once
    for context in stack:
        context.__enter__()
    for context in stack:
        context.__exit__(None, None, None)
    assert len(opened) == _MAX_IDLE + 3
    assert sum(is_open(conn) for conn in opened) == _MAX_IDLE
    store.close()
    assert not any(is_open(conn) for conn in opened)
    assert open_files(path) == 0
