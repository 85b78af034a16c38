"""Fencing: a writer that lost its lease can neither overwrite the run nor start another tool.

The split-brain tests stop owner A (SIGSTOP) inside a tool, take its lease away the way the
world does (SQLite: a stale-lock cleanup removes the lock directory; PostgreSQL: the lease's
database session is terminated, as an idle timeout, a pooler or a failover does), let B resume
and finish the run, then wake A up: A must exit with LeaseLostError and the run must end as B
left it, with no side effect executed twice unless it was flagged in doubt.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import sqlite3
import stat
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tether import Agent, ScriptedModel
from tether.durable import MemoryStore, RunStore, SQLiteStore
from tether.durable.store import SCHEMA_VERSION
from tether.errors import LeaseLostError, RunLockedError, StoreError
from tether.loop.state import new_metrics

from .worker import build_agent, tool_ids

ROOT = Path(__file__).resolve().parents[2]


def reference(tmp_path: Path) -> list[Any]:
    agent = build_agent(MemoryStore(), str(tmp_path / "ref.log"))
    assert asyncio.run(agent.invoke_async("run the 20 steps", run_id="ref")).stop_reason == "end_turn"
    return agent.messages


def spawn(spec: str, run_id: str, log: Path, action: str, gate: Path | None = None) -> subprocess.Popen[str]:
    args = [sys.executable, "-m", "tests.durable.worker", spec, run_id, str(log), action, *([str(gate)] if gate else [])]
    proc = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    return proc


def wait_until_in_a_tool(store: RunStore, run_id: str, proc: subprocess.Popen[str]) -> None:
    """Poll the store until the run's head records a started tool call (A sits at the gate)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        head = store.head(run_id)
        if head is not None and head["cursor"]["phase"] == "tools" and head["cursor"]["started"]:
            return
        time.sleep(0.02)
    raise AssertionError("owner A never started a tool")


def take_lease_away(kind: str, store: RunStore, run_id: str) -> None:
    if kind == "sqlite":
        assert isinstance(store, SQLiteStore)
        shutil.rmtree(store.lock_dir)  # a stale-lock cleanup
        return
    import psycopg

    from tether.durable.postgres import advisory_key, lock_ids

    high, low = lock_ids(advisory_key(run_id))
    with psycopg.connect(store.conninfo, autocommit=True) as admin:  # type: ignore[attr-defined]
        pids = [
            row[0]
            for row in admin.execute(
                "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND classid::bigint = %s AND objid::bigint = %s AND granted",
                (high, low),
            )
        ]
        assert len(pids) == 1
        admin.execute("SELECT pg_terminate_backend(%s)", (pids[0],))  # as idle_session_timeout or a failover would


def effect_counts(log: Path, run_id: str) -> tuple[Counter[str], Counter[str]]:
    effects: Counter[str] = Counter()
    doubts: Counter[str] = Counter()
    for line in log.read_text().splitlines():
        kind, key = line.split(" ", 1)
        if key.startswith(f"{run_id}/"):
            (effects if kind == "effect" else doubts)[key] += 1
    return effects, doubts


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_split_brain_the_stopped_owner_is_fenced_off(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    if kind == "sqlite":
        spec = f"sqlite:{tmp_path / 'runs.db'}"
        store: RunStore = SQLiteStore(tmp_path / "runs.db")
    else:
        from tether.durable.postgres import PostgresStore

        conninfo = request.getfixturevalue("pg_conninfo")
        spec, store = f"postgres:{conninfo}", PostgresStore(conninfo)
    log, gate = tmp_path / "effects.log", tmp_path / "gate"
    owner_a = spawn(spec, "split", log, "start", gate)
    try:
        wait_until_in_a_tool(store, "split", owner_a)
        owner_a.send_signal(signal.SIGSTOP)
        take_lease_away(kind, store, "split")
        owner_b = spawn(spec, "split", log, "resume")
        _, err_b = owner_b.communicate(timeout=120)
        assert owner_b.returncode == 0, err_b
        finished = store.head("split")
        assert finished is not None and finished["cursor"]["phase"] == "idle" and finished["status"] == "finished"
        gate.write_text("open")
    finally:
        owner_a.send_signal(signal.SIGCONT)
    out_a, err_a = owner_a.communicate(timeout=120)
    assert owner_a.returncode == 4, (out_a, err_a)  # fenced: LeaseLostError at its next write
    assert "lease lost" in out_a and "nothing was written" in out_a
    after = store.load("split")
    assert after is not None and after.head == finished  # the run ends as the new owner left it
    assert after.messages == reference(tmp_path)
    effects, doubts = effect_counts(log, "split")
    assert set(effects) == {f"split/{tid}" for tid in tool_ids()}
    for key, count in effects.items():
        assert count - 1 <= doubts[key], (key, count, doubts[key])  # a repeat only for a call flagged in doubt
    assert sum(doubts.values()) == 1  # A's one started call; A started no other tool after it lost the lease
    store.close()


def bare_head(rev: int) -> dict[str, Any]:
    cursor = {"phase": "model", "cycle_index": 0}
    return {"schema_version": 2, "rev": rev, "start_seq": 0, "next_seq": 0, "cursor": cursor, "metrics": dict(new_metrics())}


def test_a_stale_lease_cannot_write(store: RunStore) -> None:
    with store.lease("r") as first:
        store.write("r", bare_head(1), [], {}, lease=first)
    with store.lease("r") as second:
        assert second.epoch == first.epoch + 1
        with pytest.raises(LeaseLostError, match=r"run 'r': this writer's lease \(epoch 1\) was lost"):
            store.write("r", bare_head(2), [], {}, lease=first)
        store.write("r", bare_head(2), [], {}, lease=second)
    head = store.head("r")
    assert head is not None and head["rev"] == 2


def test_a_write_on_an_old_revision_is_refused_and_changes_nothing(store: RunStore) -> None:
    with store.lease("r") as lease:
        store.write("r", {**bare_head(1), "next_seq": 1}, [{"role": "user", "content": [{"text": "a"}]}], {}, lease=lease)
        store.write("r", {**bare_head(2), "next_seq": 1}, [], {}, lease=lease)
        with pytest.raises(LeaseLostError, match="stored revision 2, this writer expected 1"):
            store.write("r", {**bare_head(2), "next_seq": 2}, [{"role": "user", "content": [{"text": "b"}]}], {}, lease=lease)
    loaded = store.load("r")
    assert loaded is not None and loaded.head["rev"] == 2 and loaded.messages == [{"role": "user", "content": [{"text": "a"}]}]


def test_break_lease_fences_a_live_owner_and_frees_the_run(store: RunStore) -> None:
    with store.lease("r") as stuck:
        store.write("r", bare_head(1), [], {}, lease=stuck)
        assert store.owner_alive("r")  # type: ignore[attr-defined]
        epoch = store.break_lease("r")
        assert epoch == stuck.epoch + 1
        with pytest.raises(LeaseLostError):
            store.write("r", bare_head(2), [], {}, lease=stuck)
        with store.lease("r") as rescuer:  # the lease is free again although the stuck owner never let go
            store.write("r", bare_head(2), [], {}, lease=rescuer)


def test_a_fenced_agent_stops_before_its_next_tool(store: RunStore) -> None:

    assert_fenced_before_the_second_tool(store, "fenced", lambda: store.break_lease("fenced"))  # an operator's `tether unlock`


def test_sqlite_lease_follows_the_file_not_the_path(tmp_path: Path) -> None:
    real = tmp_path / "real" / "runs.db"
    real.parent.mkdir()
    link = tmp_path / "link.db"
    SQLiteStore(real).close()
    link.symlink_to(real)
    via_real, via_link = SQLiteStore(real), SQLiteStore(link)
    with via_real.lease("r"), pytest.raises(RunLockedError):
        with via_link.lease("r"):
            pass


def test_sqlite_store_files_are_private(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        store = SQLiteStore(tmp_path / "runs.db")
        Agent(model=ScriptedModel(["hi"]), store=store)("hello", run_id="r")
        with store.lease("r"):
            pass
    finally:
        os.umask(old)
    for path in [tmp_path / "runs.db", *tmp_path.glob("runs.db-*")]:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    assert stat.S_IMODE(store.lock_dir.stat().st_mode) == 0o700


def test_a_full_database_is_a_store_error(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "runs.db")
    store.write("r", bare_head(1), [], {})
    with store._connection() as conn:  # the store's one connection: the next write uses it
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {pages}")  # as a full disk: SQLITE_FULL on the next page
    big = [{"role": "user", "content": [{"text": "x" * 50_000}]}]
    with pytest.raises(StoreError, match=r"run 'r': .*runs.db failed \(OperationalError: database or disk is full\)"):
        store.write("r", {**bare_head(2), "next_seq": 1}, big, {})  # type: ignore[list-item]
    assert store.head("r") == bare_head(1) | {}  # nothing of the failed write is visible


def test_a_schema_1_store_is_upgraded_in_place(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with sqlite3.connect(path) as conn:
        conn.executescript(
            "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
            "INSERT INTO meta VALUES ('schema_version', '1');"
            "CREATE TABLE runs (run_id TEXT PRIMARY KEY, head TEXT NOT NULL);"
        )
        old_head = json.dumps({**bare_head(3), "cursor": {"phase": "idle", "cycle_index": 0}})
        conn.execute("INSERT INTO runs VALUES ('old', ?)", (old_head,))
    store = SQLiteStore(path)
    with store.lease("old") as lease:
        store.write("old", bare_head(4), [], {}, lease=lease)  # the unknown stored revision is learned
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT value FROM meta").fetchone() == (str(SCHEMA_VERSION),)
        assert conn.execute("SELECT rev FROM runs").fetchone() == (4,)


def test_break_lease_of_a_missing_run_changes_nothing(store: RunStore) -> None:
    from tether.errors import RunNotFoundError

    with pytest.raises(RunNotFoundError, match="nothing to unlock"):
        store.break_lease("ghost")
    with store.lease("ghost") as lease:
        assert lease.epoch == 1  # no epoch was spent on the missing run


def test_probing_liveness_never_makes_a_real_acquisition_fail(tmp_path: Path) -> None:
    import threading

    store = SQLiteStore(tmp_path / "runs.db")
    store.write("r", bare_head(1), [], {})
    stop = threading.Event()

    def probe() -> None:
        while not stop.is_set():
            store.owner_alive("r")  # what `tether runs` does for every running run

    prober = threading.Thread(target=probe)
    prober.start()
    try:
        for _ in range(300):
            with store.lease("r"):
                pass
    finally:
        stop.set()
        prober.join()


def terminate_sessions(conninfo: str, pids: list[int]) -> None:
    """End database sessions the way a failover or an administrator does (``AdminShutdown``), and
    wait until they are gone (``pg_terminate_backend`` only signals the backend)."""
    import psycopg

    with psycopg.connect(conninfo, autocommit=True) as admin:
        for pid in pids:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        deadline = time.monotonic() + 30
        while admin.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = ANY(%s)", (pids,)).fetchone() != (0,):
            assert time.monotonic() < deadline, f"sessions {pids} still there 30 s after pg_terminate_backend"
            time.sleep(0.01)


def sessions_of(store: Any, run_id: str) -> list[int]:
    """The backend pids of a PostgresStore: its main connection and the one holding ``run_id``'s lease."""
    import psycopg

    from tether.durable.postgres import advisory_key, lock_ids

    high, low = lock_ids(advisory_key(run_id))
    with psycopg.connect(store.conninfo, autocommit=True) as admin:
        held = admin.execute(
            "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND classid::bigint = %s AND objid::bigint = %s AND granted", (high, low)
        ).fetchall()
    assert len(held) == 1
    return [store._main().info.backend_pid, held[0][0]]


def test_an_owner_whose_database_sessions_were_terminated_gets_lease_lost(pg_conninfo: str) -> None:
    from tether.durable.postgres import PostgresStore

    store = PostgresStore(pg_conninfo)
    with store.lease("ended") as lease:
        store.write("ended", bare_head(1), [], {}, lease=lease)
        terminate_sessions(pg_conninfo, sessions_of(store, "ended"))
        # The driver reports the ended session as AdminShutdown or, when the socket closed before
        # the server's notice was read, as a closed connection: either way the lease is lost.
        with pytest.raises(
            LeaseLostError, match=r"run 'ended': this writer's lease session .* was terminated \((AdminShutdown|OperationalError)"
        ):
            store.write("ended", bare_head(2), [], {}, lease=lease)
    with store.lease("ended") as again:  # the run is not lost: a new owner goes on
        store.write("ended", bare_head(2), [], {}, lease=again)
    head = store.head("ended")
    assert head is not None and head["rev"] == 2
    store.close()


def test_an_agent_whose_database_sessions_are_terminated_in_a_tool_stops_with_lease_lost(pg_conninfo: str) -> None:
    from tether.durable.postgres import PostgresStore

    store = PostgresStore(pg_conninfo)
    assert_fenced_before_the_second_tool(store, "failover", lambda: terminate_sessions(pg_conninfo, sessions_of(store, "failover")))
    store.close()


def assert_fenced_before_the_second_tool(store: RunStore, run_id: str, take_over: Callable[[], object]) -> None:
    """An agent whose first tool calls ``take_over`` (the run's ownership is lost meanwhile)
    stops with LeaseLostError before its second tool starts: the start marker cannot be written."""
    from tether import tool
    from tether.models import tool_call

    ran: list[str] = []

    @tool
    def first() -> str:
        """Runs, then the run is taken over."""
        ran.append("first")
        take_over()
        return "ok"

    @tool
    def second() -> str:
        """Must never run: its start marker cannot be written."""
        ran.append("second")
        return "ok"

    agent = Agent(model=ScriptedModel([tool_call("first"), tool_call("second"), "done"]), tools=[first, second], store=store)
    with pytest.raises(LeaseLostError):
        agent("go", run_id=run_id)
    assert ran == ["first"]
