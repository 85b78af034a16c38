"""`tether.durable.postgres.pipeline`: save points sent with libpq itself, on a real PostgreSQL server."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

import pytest

from tether.durable.codec import new_packer
from tether.durable.postgres import PostgresStore
from tether.durable.session import run_state_of
from tether.durable.store import SCHEMA_VERSION
from tether.errors import LeaseLostError, StoreError

from ..test_postgres import step_row

psycopg = pytest.importorskip("psycopg")


def _writes(store: PostgresStore, run_id: str) -> tuple[dict[str, Any], Any]:
    """A head at revision 1 and the write of revision 2: three messages (one with a large
    tool result, a blob), two results of the last one's calls (one large, a blob) and a large
    agent state (a blob)."""
    packer = new_packer(None)
    head: dict[str, Any] = {"schema_version": SCHEMA_VERSION, "rev": 1, "next_seq": 1, "start_seq": 0, "metrics": {}, "steps": 1}
    head["cursor"] = {"phase": "tools", "cycle_index": 0}
    store.commit(run_id, store.prepare(run_id, head, [{"role": "user", "content": [{"text": "go"}]}], {}, step_row(1, head), packer))
    head = {**head, "rev": 2, "next_seq": 4, "steps": 2, "state": {"notes": 'état "quoted" {braces} \\ ' * 200}}
    big = {"toolUseId": "t1", "status": "success", "content": [{"text": "x" * 3000}]}
    small = {"toolUseId": "t2", "status": "error", "content": [{"text": 'naïve, "quoted"'}]}
    earlier = {"toolUseId": "t0", "status": "success", "content": [{"text": "y" * 3000}]}
    messages: list[Any] = [
        {"role": "assistant", "content": [{"text": "calling, {} \\ ü"}]},
        {"role": "user", "content": [{"toolResult": earlier}, {"text": "a note"}]},
        {"role": "assistant", "content": [{"toolUse": {"toolUseId": t, "name": "f", "input": {"q": "é"}}} for t in ("t1", "t2")]},
    ]
    prepared = store.prepare(run_id, head, messages, {"t1": big, "t2": small}, step_row(2, head), packer)  # type: ignore[dict-item]
    assert len(prepared.rows.messages) == 3 and len(prepared.rows.results) == 2 and prepared.rows.blobs
    return {"messages": messages, "state": head["state"]}, prepared


def test_a_save_point_with_every_kind_of_row_is_stored_exactly(pg_conninfo: str) -> None:
    """Several messages, results and blobs (the statement's arrays, in binary) through the event
    loop's path are read back exactly as the thread's path stores them."""
    store = PostgresStore(pg_conninfo)
    with store.lease("loop") as lease:
        expected, prepared = _writes(store, "loop")
        assert asyncio.run(store.commit_async("loop", prepared, lease=lease)) is True
    _, prepared_thread = _writes(store, "thread")
    store.commit("thread", prepared_thread)
    loop, thread = store.load("loop"), store.load("thread")
    assert loop is not None and thread is not None
    assert loop.messages[1:] == expected["messages"] == thread.messages[1:]
    assert loop.results == thread.results and set(loop.results) == {"t1", "t2"}
    assert run_state_of(loop).state == expected["state"] == run_state_of(thread).state
    assert [s.head for s in store.history("loop")] == [s.head for s in store.history("thread")]
    store.close()


def _leased_run(store: PostgresStore, run_id: str, lease: Any) -> Callable[[int], Any]:
    """Store revision 1 of a small run under ``lease`` (through the writer's path) and return
    ``write(rev)``: the prepared save point of revision ``rev`` (one message, ``m<rev>``)."""
    packer = new_packer(None)
    head: dict[str, Any] = {"rev": 1, "next_seq": 1, "start_seq": 0, "cursor": {"phase": "model", "cycle_index": 0}, "metrics": {}}
    head["steps"] = 1
    store.commit(
        run_id, store.prepare(run_id, head, [{"role": "user", "content": [{"text": "m1"}]}], {}, step_row(1, head), packer), lease=lease
    )

    def write(rev: int) -> Any:
        nonlocal head
        head = {**head, "rev": rev, "next_seq": rev, "steps": rev}
        return store.prepare(run_id, head, [{"role": "user", "content": [{"text": f"m{rev}"}]}], {}, step_row(rev, head), packer)

    return write


def test_a_statement_the_session_dropped_is_prepared_again(pg_conninfo: str) -> None:
    """``DEALLOCATE ALL`` on a lease's connection (psycopg sends it when it clears its own
    statement cache) drops Tether's statements too: the next save point prepares its statement
    again and is stored, once."""
    store = PostgresStore(pg_conninfo)
    with store.lease("d") as lease:
        write = _leased_run(store, "d", lease)
        for rev in (2, 3):
            assert asyncio.run(store.commit_async("d", write(rev), lease=lease)) is True
            conn = store._owned["d"].lane.conn
            assert conn is not None
            conn.execute("DEALLOCATE ALL")
    loaded = store.load("d")
    assert loaded is not None and [m["content"][0]["text"] for m in loaded.messages] == ["m1", "m2", "m3"]  # type: ignore[typeddict-item]
    store.close()


def test_a_server_error_is_a_store_error_and_the_connection_serves_the_next_write(pg_conninfo: str) -> None:
    """A statement the server refuses (here: a lock timeout while another transaction holds the
    run's row) raises StoreError naming the run, writes nothing, and leaves the lease's
    connection idle for the next save point."""
    store = PostgresStore(pg_conninfo)
    with store.lease("e") as lease:
        prepared = _leased_run(store, "e", lease)(2)
        conn = store._owned["e"].lane.conn
        assert conn is not None
        conn.execute("SET lock_timeout = '50ms'")
        with psycopg.connect(pg_conninfo) as other:
            other.execute("SELECT 1 FROM tether_runs WHERE run_id = 'e' FOR UPDATE")
            with pytest.raises(StoreError, match=r"run 'e': .*lock"):
                asyncio.run(store.commit_async("e", prepared, lease=lease))
        conn.execute("SET lock_timeout = 0")
        assert store.head("e")["rev"] == 1  # type: ignore[index]
        assert asyncio.run(store.commit_async("e", prepared, lease=lease)) is True
    assert store.head("e")["rev"] == 2  # type: ignore[index]
    store.close()


def test_a_connection_whose_client_encoding_is_not_utf8_stores_text_intact(pg_conninfo: str) -> None:
    """Text goes in the connection's client encoding: on a LATIN1 connection both drivers (the
    event loop's and the thread's) store a write whose text is not ASCII, read back exactly."""
    store = PostgresStore(pg_conninfo, client_encoding="LATIN1")
    with store.lease("l") as lease:
        expected, prepared = _writes(store, "l")
        assert asyncio.run(store.commit_async("l", prepared, lease=lease)) is True
    _, prepared_thread = _writes(store, "t")
    store.commit("t", prepared_thread)
    for run_id in ("l", "t"):
        loaded = store.load(run_id)
        assert loaded is not None and loaded.messages[1:] == expected["messages"]
        assert loaded.messages[1]["content"][0]["text"] == "calling, {} \\ ü"  # type: ignore[typeddict-item]
    store.close()


def _texts(store: PostgresStore, run_id: str) -> list[str]:
    loaded = store.load(run_id)
    assert loaded is not None
    return [m["content"][0]["text"] for m in loaded.messages]  # type: ignore[typeddict-item]


def test_save_points_sent_back_to_back_commit_in_order_on_one_connection(pg_conninfo: str) -> None:
    """A run's next save point sent while its last is out goes right behind it (pipeline mode):
    both commit, in order, and the lane is free again once both answered."""
    store = PostgresStore(pg_conninfo)
    with store.lease("p") as lease:
        write = _leased_run(store, "p", lease)
        lane = store._owned["p"].lane

        async def both() -> list[bool]:
            first = store.send_commit("p", write(2), lease=lease)
            second = store.send_commit("p", write(3), lease=lease)
            assert first is not None and second is not None
            assert lane.pipeline is not None and lane.pipeline.busy and lane.holder is not None
            return [await first.done(), await second.done()]

        assert asyncio.run(both()) == [True, True]
        assert lane.holder is None and not lane.lock.locked()
        assert store.head("p")["rev"] == 3  # type: ignore[index]
    assert _texts(store, "p") == ["m1", "m2", "m3"]
    store.close()


def test_a_save_point_sent_behind_a_refused_one_is_refused_too(pg_conninfo: str) -> None:
    """The run's lease moved on under its writer (another owner's epoch): the save point out
    first is refused by its compare-and-swap, and the one sent behind it, which names the
    revision the first would have written, is refused too; neither wrote a row, and the
    thread's path says why."""
    store = PostgresStore(pg_conninfo)
    with store.lease("q") as lease:
        write = _leased_run(store, "q", lease)
        with psycopg.connect(pg_conninfo, autocommit=True) as other:
            other.execute("UPDATE tether_runs SET epoch = epoch + 1 WHERE run_id = 'q'")
        second, third = write(2), write(3)

        async def both() -> list[bool]:
            first = store.send_commit("q", second, lease=lease)
            behind = store.send_commit("q", third, lease=lease)
            assert first is not None and behind is not None
            return [await first.done(), await behind.done()]

        assert asyncio.run(both()) == [False, False]
        with pytest.raises(LeaseLostError):
            store.commit("q", second, lease=lease)
    assert _texts(store, "q") == ["m1"]
    store.close()


def test_a_blocking_use_of_the_lane_on_the_loops_thread_reads_the_answers_out_first(pg_conninfo: str) -> None:
    """The writer's path used on the event loop's own thread (a session without a writer
    thread) while that loop's save point is still out on the lane: the answer is read first,
    instead of waiting for a lane only that thread can free (a deadlock), and both writes are
    stored in order. (All of it on a thread of its own: a deadlock fails the test, not the run.)"""
    store = PostgresStore(pg_conninfo)
    outcome: list[bool] = []

    def run() -> None:
        with store.lease("b") as lease:
            write = _leased_run(store, "b", lease)

            async def mixed() -> bool:
                sent = store.send_commit("b", write(2), lease=lease)
                assert sent is not None
                store.commit("b", write(3), lease=lease)  # blocking, on this thread: waits for the lane
                return await sent.done()

            outcome.append(asyncio.run(mixed()))

    runner = threading.Thread(target=run, daemon=True)
    runner.start()
    runner.join(60)
    assert not runner.is_alive(), "the loop's thread waits for a lane only it can free"
    assert outcome == [True]
    assert _texts(store, "b") == ["m1", "m2", "m3"]
    store.close()


def test_cancelling_the_wait_for_a_save_point_behind_another_completes_both(pg_conninfo: str) -> None:
    """Two save points out; the wait for the second is cancelled: every answer is read before
    the cancellation goes through (both are stored), the first's waiter still gets its outcome,
    and the connection serves the next save point."""
    store = PostgresStore(pg_conninfo)
    with store.lease("x") as lease:
        write = _leased_run(store, "x", lease)

        async def cancel_second() -> bool:
            first = store.send_commit("x", write(2), lease=lease)
            second = store.send_commit("x", write(3), lease=lease)
            assert first is not None and second is not None
            task = asyncio.ensure_future(second.done())
            await asyncio.sleep(0)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            return await first.done()

        assert asyncio.run(cancel_second()) is True
        assert store.head("x")["rev"] == 3  # type: ignore[index]
        assert asyncio.run(store.commit_async("x", write(4), lease=lease)) is True
    assert _texts(store, "x") == ["m1", "m2", "m3", "m4"]
    store.close()


def test_a_session_ended_with_save_points_out_fails_each_as_a_lost_lease(pg_conninfo: str) -> None:
    """The server ends the lease's session while two save points are out: each waiter gets
    LeaseLostError (whether it committed is unknown to the writer), and the lane is free."""
    store = PostgresStore(pg_conninfo)
    with store.lease("k") as lease:
        write = _leased_run(store, "k", lease)
        lane = store._owned["k"].lane
        assert lane.conn is not None
        pid = lane.conn.info.backend_pid
        # Hold the run's row, so both statements wait on the server until the session ends.
        with psycopg.connect(pg_conninfo) as other:
            other.execute("SELECT 1 FROM tether_runs WHERE run_id = 'k' FOR UPDATE")

            async def both() -> list[BaseException | bool]:
                first = store.send_commit("k", write(2), lease=lease)
                second = store.send_commit("k", write(3), lease=lease)
                assert first is not None and second is not None
                await asyncio.sleep(0.2)
                with psycopg.connect(pg_conninfo, autocommit=True) as killer:
                    killer.execute("SELECT pg_terminate_backend(%s)", (pid,))
                return list(await asyncio.gather(first.done(), second.done(), return_exceptions=True))

            outcomes = asyncio.run(asyncio.wait_for(both(), 30))
            other.rollback()
        assert [type(o) for o in outcomes] == [LeaseLostError, LeaseLostError]
        assert lane.holder is None and not lane.lock.locked()
    store.close()


def test_a_save_point_nobody_awaits_lets_the_lane_go_once_answered(pg_conninfo: str) -> None:
    """A save point sent whose waiter never runs (its task cancelled before it started): the
    event loop takes its answer as it arrives and lets the lane go, so another thread's write
    on it does not wait forever; the save point is stored."""
    store = PostgresStore(pg_conninfo)
    with store.lease("n") as lease:
        write = _leased_run(store, "n", lease)
        lane = store._owned["n"].lane

        async def send_and_leave() -> None:
            assert store.send_commit("n", write(2), lease=lease) is not None
            while lane.lock.locked():  # the loop runs: its reader takes the answer
                await asyncio.sleep(0.01)

        asyncio.run(asyncio.wait_for(send_and_leave(), 60))
        assert lane.holder is None
        writer = threading.Thread(target=store.commit, args=("n", write(3)), kwargs={"lease": lease}, daemon=True)
        writer.start()
        writer.join(60)
        assert not writer.is_alive(), "a thread waits for a lane nobody lets go"
    assert _texts(store, "n") == ["m1", "m2", "m3"]
    store.close()


def test_a_statement_the_session_has_already_is_sent_again_without_preparing(pg_conninfo: str) -> None:
    """The connection's record lost track of a statement its session still has: preparing it
    again fails (nothing ran), and it is sent again as it is, once, on either driver."""
    store = PostgresStore(pg_conninfo)
    with store.lease("a") as lease:
        write = _leased_run(store, "a", lease)
        assert asyncio.run(store.commit_async("a", write(2), lease=lease)) is True
        lane = store._owned["a"].lane
        lane.prepared.names.clear()
        assert asyncio.run(store.commit_async("a", write(3), lease=lease)) is True
        lane.prepared.names.clear()
        store.commit("a", write(4), lease=lease)
    assert _texts(store, "a") == ["m1", "m2", "m3", "m4"]
    store.close()


def test_a_save_point_that_fails_before_it_is_sent_lets_the_lane_go(pg_conninfo: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """An error while the save point is made ready to send (its parameters cannot be encoded):
    nothing went out, so the lane opened for it is let go; the error reaches the caller, the
    lease ends and the next write is stored. Before, the lane stayed held and ending the lease
    waited forever."""
    from tether.durable.postgres import wire

    store = PostgresStore(pg_conninfo)
    encode = wire.encode

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise UnicodeEncodeError("utf-8", "x", 0, 1, "a parameter that cannot be encoded")

    def attempt(lease: Any, write: Callable[[int], Any]) -> None:
        monkeypatch.setattr(wire, "encode", refuse)
        try:
            with pytest.raises(UnicodeEncodeError):
                asyncio.run(store.commit_async("e", write(2), lease=lease))
        finally:
            monkeypatch.setattr(wire, "encode", encode)

    failed: list[BaseException] = []

    def turn() -> None:
        try:
            with store.lease("e") as lease:
                write = _leased_run(store, "e", lease)
                attempt(lease, write)
                assert store._owned["e"].lane.holder is None
                assert asyncio.run(store.commit_async("e", write(2), lease=lease)) is True
        except BaseException as exc:
            failed.append(exc)

    worker = threading.Thread(target=turn, daemon=True)
    worker.start()
    worker.join(120)
    assert not worker.is_alive(), "ending the lease waits for a lane nobody lets go"
    assert not failed, failed
    assert _texts(store, "e") == ["m1", "m2"]
    store.close()
