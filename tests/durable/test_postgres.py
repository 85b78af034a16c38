"""PostgresStore specifics, against a real server: schema version, connection options, leases
between processes (advisory locks freed when the owner dies), O(n) storage, clear errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tether import Agent, tool
from tether.durable import RunStore
from tether.durable.postgres import STORE_SCHEMA, PostgresStore, advisory_key
from tether.errors import ConfigurationError, LeaseLostError, RunLockedError, StoreError
from tether.models import ScriptedModel
from tether.models.scripted import tool_call

from .helpers import Crash
from .pg import PgServer
from .test_sqlite import bytes_per_message
from .worker import build_agent, tool_ids

try:
    import psycopg
except ImportError:  # pragma: no cover - only where the postgres extra is not installed
    if os.environ.get("CI") == "true":
        raise
    pytest.skip("psycopg is not installed (pip install 'tether[postgres]')", allow_module_level=True)

ROOT = Path(__file__).resolve().parents[2]

RESUME_WORKER = """
import sys
from tether.durable.postgres import PostgresStore
from tether.errors import RunLockedError
from tests.durable.worker import build_agent, record_doubts
conninfo, run_id, log, gate = sys.argv[1:5]
store = PostgresStore(conninfo)
agent = build_agent(store, log, gate)
try:
    with store.lease(run_id):
        record_doubts(store, run_id, log)
    result = agent.resume(run_id)
except RunLockedError as exc:
    print(f"locked: {exc}", flush=True)
    sys.exit(3)
print(f"done {result.stop_reason}", flush=True)
sys.exit(0 if result.stop_reason == "end_turn" else 1)
"""


def test_tables_and_schema_version(pg_conninfo: str) -> None:
    PostgresStore(pg_conninfo).close()
    with psycopg.connect(pg_conninfo) as conn:
        tables = {row[0] for row in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")}
        version = conn.execute("SELECT value FROM tether_meta WHERE key = 'schema_version'").fetchone()
    assert tables == {"tether_meta", "tether_runs", "tether_leases", "tether_messages", "tether_results", "tether_steps", "tether_blobs"}
    assert version == (str(STORE_SCHEMA),)


def test_newer_store_schema_refused(pg_conninfo: str) -> None:
    PostgresStore(pg_conninfo).close()
    with psycopg.connect(pg_conninfo, autocommit=True) as conn:
        conn.execute("UPDATE tether_meta SET value = %s WHERE key = 'schema_version'", (str(STORE_SCHEMA + 1),))
    with pytest.raises(StoreError, match=rf"newer Tether \(store schema {STORE_SCHEMA + 1}"):
        PostgresStore(pg_conninfo)


def test_connect_with_keyword_arguments(pg_server: PgServer, pg_conninfo: str) -> None:
    dbname = psycopg.conninfo.conninfo_to_dict(pg_conninfo)["dbname"]
    store = PostgresStore(host=str(pg_server.root), port=pg_server.port, user="postgres", dbname=dbname)
    store.write("kw", {"rev": 1, "next_seq": 0, "start_seq": 0, "cursor": {"phase": "model", "cycle_index": 0}, "metrics": {}}, [], {})
    store.close()
    assert PostgresStore(pg_conninfo).head("kw") is not None


def test_unreachable_server_names_it_without_the_password(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match=r"cannot connect to PostgreSQL .*nowhere") as info:
        PostgresStore(f"host={tmp_path} port=1 dbname=nowhere user=u password=s3cret-pw connect_timeout=2")
    assert "s3cret-pw" not in str(info.value)


def test_missing_psycopg_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)  # makes `import psycopg` raise ImportError
    with pytest.raises(ConfigurationError, match=r"tether\[postgres\]"):
        PostgresStore("dbname=x")


def test_a_corrupt_head_row_names_the_run(pg_conninfo: str) -> None:
    store = PostgresStore(pg_conninfo)
    store.write("r1", {"rev": 1, "next_seq": 0, "start_seq": 0, "cursor": {"phase": "model", "cycle_index": 0}, "metrics": {}}, [], {})
    with psycopg.connect(pg_conninfo, autocommit=True) as conn:
        conn.execute("UPDATE tether_runs SET head = %s WHERE run_id = %s", ('{"cursor": ', "r1"))
    with pytest.raises(StoreError, match=r"'r1'.*head"):
        store.load("r1")


def test_values_are_bound_as_parameters(pg_conninfo: str) -> None:
    store = PostgresStore(pg_conninfo)
    sneaky = "x'); DROP TABLE tether_runs; --"  # tool-use ids come from the model: any text
    result: Any = {"toolUseId": sneaky, "status": "success", "content": [{"text": "it's $1 %s"}]}
    head = {"rev": 1, "next_seq": 0, "start_seq": 0, "cursor": {"phase": "model", "cycle_index": 0}, "metrics": {}}
    store.write("r1", head, [], {sneaky: result})
    loaded = store.load("r1")
    assert loaded is not None and loaded.results == {sneaky: result}


def test_lease_is_an_advisory_lock_on_its_own_connection(pg_conninfo: str) -> None:
    store = PostgresStore(pg_conninfo)
    main_pid = store._main().info.backend_pid
    key = advisory_key("trip-42")
    query = "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND ((classid::bigint << 32) | objid::bigint) = %s"
    with psycopg.connect(pg_conninfo) as observer:
        with store.lease("trip-42"):
            holders = [row[0] for row in observer.execute(query, (key,))]
            other = PostgresStore(pg_conninfo)
            with pytest.raises(RunLockedError, match="'trip-42'"):
                other.lease("trip-42").__enter__()
            with other.lease("trip-43"):
                pass
        assert len(holders) == 1 and holders[0] != main_pid
        assert observer.execute(query, (key,)).fetchall() == []
    with other.lease("trip-42"):
        pass


def test_killed_owner_releases_the_lease(pg_conninfo: str) -> None:
    code = """
import sys, time
from tether.durable.postgres import PostgresStore
with PostgresStore(sys.argv[1]).lease("held"):
    print("held", flush=True)
    time.sleep(600)
"""
    proc = subprocess.Popen([sys.executable, "-c", code, pg_conninfo], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
        store = PostgresStore(pg_conninfo)
        with pytest.raises(RunLockedError, match="'held'"):
            store.lease("held").__enter__()  # the live owner keeps it
    finally:
        proc.kill()
        proc.wait()
    # the server ends the dead client's session, dropping its advisory locks (no expiry to wait out);
    # that happens on the server a moment after the kill, so poll briefly rather than race it
    deadline = time.monotonic() + 30
    while True:
        try:
            with store.lease("held"):
                break
        except RunLockedError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.01)


def test_two_processes_resuming_at_once_exactly_one_proceeds(pg_conninfo: str, tmp_path: Path) -> None:
    log, gate = tmp_path / "effects.log", tmp_path / "gate"
    store = PostgresStore(pg_conninfo)
    agent = build_agent(store, str(log))
    crash = Crash("stop")

    def crash_on_model(request: Any) -> Any:
        raise crash

    agent.model.responses[1] = crash_on_model  # type: ignore[attr-defined]
    with pytest.raises(Crash):
        agent("run the 20 steps", run_id="shared")
    cmd = [sys.executable, "-c", RESUME_WORKER, pg_conninfo, "shared", str(log), str(gate)]
    procs = [subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    loser = None  # the winner's tool blocks on the gate, so the loser must meet the lease
    while loser is None:
        loser = next((p for p in procs if p.poll() is not None), None)
        time.sleep(0.02)
    gate.write_text("open")
    outputs = [p.communicate(timeout=120) for p in procs]
    assert sorted(p.returncode for p in procs) == [0, 3], outputs
    assert loser.returncode == 3 and "is owned by another live process" in outputs[procs.index(loser)][0]
    assert PostgresStore(pg_conninfo).head("shared")["cursor"]["phase"] == "idle"  # type: ignore[index]
    effects = Counter(line.split()[1] for line in log.read_text().splitlines() if line.startswith("effect"))
    assert effects == Counter(f"shared/{tid}" for tid in tool_ids())  # every tool ran exactly once


def test_metrics_survive_processes(pg_conninfo: str) -> None:
    code = """
import sys
from tether import Agent, tool
from tether.durable import RunStore
from tether.durable.postgres import PostgresStore
from tether.models import ScriptedModel
agent = Agent(model=ScriptedModel(["a", "b", "c"], stateful=True, usage=(7, 3)), store=PostgresStore(sys.argv[1]))
agent("one", run_id="m")
agent("two", run_id="m")
"""
    subprocess.run([sys.executable, "-c", code, pg_conninfo], check=True)
    agent = Agent(model=ScriptedModel(["a", "b", "c"], stateful=True, usage=(7, 3)), store=PostgresStore(pg_conninfo))
    result = agent("three", run_id="m")
    assert str(result) == "c"
    assert result.metrics.model_call_count == 3
    assert result.metrics.usage["total_tokens"] == 30


def test_bytes_per_message_stay_flat(pg_conninfo: str) -> None:
    small = bytes_per_message(PostgresStore(pg_conninfo), 100)
    with psycopg.connect(pg_conninfo, autocommit=True) as conn:
        conn.execute("TRUNCATE tether_runs, tether_messages, tether_results, tether_steps")
    large = bytes_per_message(PostgresStore(pg_conninfo), 1000)
    assert large < 1.5 * small, (small, large)  # O(n): 10x the messages, ~10x the bytes
    with psycopg.connect(pg_conninfo) as conn:
        rows = conn.execute("SELECT count(*) FROM tether_messages WHERE run_id = 'grow'").fetchone()
    assert rows == (1000,)  # every message is one row, written once


def test_is_a_run_store_and_reconnects_after_a_lost_connection(pg_conninfo: str) -> None:
    store = PostgresStore(pg_conninfo)
    assert isinstance(store, RunStore)
    store.write("r1", {"rev": 1, "next_seq": 0, "start_seq": 0, "cursor": {"phase": "model", "cycle_index": 0}, "metrics": {}}, [], {})
    pid = store._main().info.backend_pid
    with psycopg.connect(pg_conninfo, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        while admin.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", (pid,)).fetchone() is not None:
            time.sleep(0.01)
    # the server ended the idle session (an idle timeout, a restart): nothing had been sent on
    # it, so the pool opens a new connection for the read instead of failing it
    assert store.head("r1") is not None and store._main().info.backend_pid != pid


def test_a_session_that_ends_during_a_statement_is_a_store_error(pg_conninfo: str) -> None:
    store = PostgresStore(pg_conninfo)
    store.write("r1", {"rev": 1, "next_seq": 0, "start_seq": 0, "cursor": {"phase": "model", "cycle_index": 0}, "metrics": {}}, [], {})
    pid = store._main().info.backend_pid
    with pytest.raises(StoreError, match=r"run 'r1': PostgreSQL .* failed \((AdminShutdown|OperationalError)"):
        with store._reading("r1") as conn:  # the session ends while this read is under way
            with psycopg.connect(pg_conninfo, autocommit=True) as admin:
                admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
            conn.execute("SELECT pg_sleep(0.5)")
    assert store.head("r1") is not None  # the next call opens a new connection


# -- the write path: one statement per save point, head deltas, a bounded pool ----------------


def traced_requests(conn: Any, action: Any) -> int:
    """Round trips ``action()`` makes on ``conn``: the Sync and Query messages its libpq trace shows."""
    import tempfile

    from psycopg import pq

    with tempfile.TemporaryFile("w+") as trace:
        conn.pgconn.trace(trace.fileno())
        conn.pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS | pq.Trace.REGRESS_MODE)
        try:
            action()
        finally:
            conn.pgconn.untrace()
        trace.seek(0)
        lines = [line.split("\t") for line in trace.read().splitlines()]
    return sum(1 for parts in lines if len(parts) > 2 and parts[0] == "F" and parts[2].split(" ", 1)[0] in ("Sync", "Query"))


def step_row(number: int, head: dict[str, Any]) -> dict[str, Any]:
    return {
        "step": number, "position": "after_model", "cycle_index": 0, "seq": head["next_seq"], "message_count": head["next_seq"],
        "created_at": "2026-01-01T00:00:00Z", "status": "running", "stop_reason": None, "model": None, "tools": [],
        "in_doubt": [], "results": [], "forked_from": None, "head": head,
    }  # fmt: skip


def test_a_save_point_is_one_round_trip_on_its_lease_connection(pg_conninfo: str) -> None:
    from tether.durable.codec import new_packer

    store = PostgresStore(pg_conninfo)
    packer = new_packer(None)
    head = {"rev": 1, "next_seq": 1, "start_seq": 0, "cursor": {"phase": "model", "cycle_index": 0}, "metrics": {}, "steps": 1}
    message: Any = {"role": "user", "content": [{"text": "hello"}]}
    with store.lease("one") as lease:
        lane = store._owned["one"].lane
        first = store.prepare("one", head, [message], {}, step_row(1, head), packer)
        assert traced_requests(lane.conn, lambda: store.commit("one", first, lease=lease)) == 1
        for rev in range(2, 6):
            head = {**head, "rev": rev, "next_seq": rev, "steps": rev}
            nxt = store.prepare("one", head, [{"role": "user", "content": [{"text": f"m{rev}"}]}], {}, step_row(rev, head), packer)
            assert traced_requests(lane.conn, lambda: store.commit("one", nxt, lease=lease)) == 1  # noqa: B023
    loaded = store.load("one")
    assert loaded is not None and loaded.head["rev"] == 5 and len(loaded.messages) == 5 and len(store.history("one")) == 5
    store.close()


def test_a_refused_save_point_writes_no_row(pg_conninfo: str) -> None:
    """Each part of the one statement is inserted from the head row it changed: a refused
    compare-and-swap (stale lease, old revision, a stale lease creating the run) inserts nothing."""
    store = PostgresStore(pg_conninfo)
    head = {"rev": 1, "next_seq": 1, "start_seq": 0, "cursor": {"phase": "tools", "cycle_index": 0}, "metrics": {}}
    message: Any = {"role": "user", "content": [{"text": "a"}]}
    result: Any = {"toolUseId": "t", "status": "success", "content": [{"text": "r"}]}
    with store.lease("new") as stale:
        pass
    with store.lease("new"):
        with pytest.raises(LeaseLostError, match="this writer's lease"):
            store.write("new", head, [message], {"t": result}, step_row(1, head), lease=stale)
    assert store.load("new") is None
    with store.lease("old") as lease:
        store.write("old", head, [message], {}, lease=lease)
        with pytest.raises(LeaseLostError, match="stored revision 1, this writer expected 2"):
            store.write("old", {**head, "rev": 3, "next_seq": 2}, [message], {"t": result}, step_row(1, head), lease=lease)
    with psycopg.connect(pg_conninfo) as conn:
        counts = [conn.execute(f"SELECT count(*) FROM {t}").fetchone() for t in ("tether_messages", "tether_results", "tether_steps")]
    assert counts == [(1,), (0,), (0,)]  # the one message of the first write of "old"
    store.close()


def stored_head_columns(conninfo: str, run_id: str) -> tuple[str, str | None, int | None, int]:
    with psycopg.connect(conninfo) as conn:
        row = conn.execute("SELECT head, delta, base, rev FROM tether_runs WHERE run_id = %s", (run_id,)).fetchone()
    assert row is not None
    return row


def test_the_head_is_stored_as_a_small_delta_against_a_base(pg_conninfo: str) -> None:
    store = PostgresStore(pg_conninfo)
    script: list[Any] = [tool_call("lookup", {"key": f"k{i}"}) for i in range(12)] + ["done"]
    agent = Agent(model=ScriptedModel(script), tools=[lookup], store=store)
    agent("go", run_id="d")
    _, delta, base, rev = stored_head_columns(pg_conninfo, "d")
    assert delta is not None and base is not None and base < rev  # the last writes patched an older base
    whole = len(json.dumps(store.head("d"), separators=(",", ":")))
    assert len(delta) <= whole  # a delta is written only while it is no larger than the head it stands for
    assert store.head("d") == store.history("d")[-1].head  # base + delta == the turn_end step's copy of the head
    assert store.load("d").messages == agent.messages  # type: ignore[union-attr]
    store.close()


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


def test_a_delta_against_another_base_is_written_whole(pg_conninfo: str) -> None:
    """A base that is not the one the writer patched (never expected; a guard) makes the write
    store the head whole instead: the head stays exact."""
    store = PostgresStore(pg_conninfo)
    script: list[Any] = [tool_call("lookup", {"key": f"k{i}"}) for i in range(3)] + ["done"]
    agent = Agent(model=ScriptedModel(script * 2), tools=[lookup], store=store)
    agent("go", run_id="g")
    with psycopg.connect(pg_conninfo, autocommit=True) as conn:
        conn.execute("UPDATE tether_runs SET base = base - 100 WHERE run_id = 'g'")
    agent("again", run_id="g")  # the same session: its packer still patches the base it wrote
    _, _, base, rev = stored_head_columns(pg_conninfo, "g")
    assert base is not None and base > 0 and base <= rev
    loaded = store.load("g")
    assert loaded is not None and loaded.messages == agent.messages and loaded.head["rev"] == rev
    store.close()


def test_a_damaged_delta_names_the_run(pg_conninfo: str) -> None:
    store = PostgresStore(pg_conninfo)
    Agent(model=ScriptedModel([tool_call("lookup", {"key": "a"}), tool_call("lookup", {"key": "b"}), "done"]), tools=[lookup], store=store)(
        "go", run_id="bad"
    )
    with psycopg.connect(pg_conninfo, autocommit=True) as conn:
        conn.execute("UPDATE tether_runs SET delta = '{\"cursor\": 7' WHERE run_id = 'bad'")
    with pytest.raises(StoreError, match=r"run 'bad': head delta: .*damaged"):
        store.load("bad")
    assert [run.status for run in store.list_runs()] == ["corrupt"]
    store.close()


def test_the_pool_bounds_connections_with_a_hundred_concurrent_runs(pg_conninfo: str) -> None:
    """100 agents at once on one store with a pool of 4: every run finishes, the store never has
    more than 4 sessions on the server, and each lease was a lock on one of them."""
    import asyncio
    import threading

    pool = 4
    store = PostgresStore(pg_conninfo, pool_size=pool, application_name="tether-pool-test")
    seen: list[int] = []
    stop = threading.Event()

    def sample() -> None:
        with psycopg.connect(pg_conninfo, autocommit=True) as admin:
            while not stop.is_set():
                row = admin.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'tether-pool-test'").fetchone()
                seen.append(int(row[0]) if row else 0)
                stop.wait(0.005)

    agents = [Agent(model=ScriptedModel([tool_call("lookup", {"key": f"{i}"}), "done"]), tools=[lookup], store=store) for i in range(100)]
    sampler = threading.Thread(target=sample)
    sampler.start()
    try:

        async def everyone() -> list[Any]:
            return await asyncio.gather(*(agent.invoke_async("go", run_id=f"p{i}") for i, agent in enumerate(agents)))

        results = asyncio.run(everyone())
    finally:
        stop.set()
        sampler.join()
    assert [str(result) for result in results] == ["done"] * 100
    assert max(seen) <= pool and store.connections <= pool
    assert max(seen) > 1  # the runs did spread over the pool
    finished = [run for run in store.list_runs() if run.status == "finished"]
    assert len(finished) == 100
    store.close()


def test_leases_sharing_a_connection_stay_exclusive(pg_conninfo: str) -> None:
    """With one connection, every lease is an advisory lock on the same session (a session may
    take its own lock again): a second lease of a run is still refused, in this store and another."""
    store = PostgresStore(pg_conninfo, pool_size=1)
    other = PostgresStore(pg_conninfo, pool_size=1)
    with store.lease("a"), store.lease("b"):
        assert store.connections == 1
        with pytest.raises(RunLockedError, match="'a'"):
            store.lease("a").__enter__()
        with pytest.raises(RunLockedError, match="'b'"):
            other.lease("b").__enter__()
    with other.lease("a"), other.lease("b"):
        pass
    store.close()
    other.close()


def test_pool_size_must_be_positive(pg_conninfo: str) -> None:
    from tether.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match="pool_size"):
        PostgresStore(pg_conninfo, pool_size=0)


MANY_RUNS = """
import asyncio, sys
from tether import Agent, tool
from tether.durable.postgres import PostgresStore
from tether.models import ScriptedModel
from tether.models.scripted import tool_call
from tether.tools.context import ToolContext

conninfo, tag, log = sys.argv[1:4]

@tool
def lookup(key: str, ctx: ToolContext) -> str:
    \"\"\"Look a key up.\"\"\"
    with open(log, "a") as out:
        out.write(ctx.idempotency_key + "\\n")
    return f"value of {key}"

store = PostgresStore(conninfo, pool_size=3)
agents = [Agent(model=ScriptedModel([tool_call("lookup", {"key": str(c)}) for c in range(3)] + ["done"]), tools=[lookup], store=store)
          for _ in range(8)]

async def main():
    await asyncio.gather(*(a.invoke_async("go", run_id=f"{tag}-{i}") for i, a in enumerate(agents)))

asyncio.run(main())
print("ok", flush=True)
"""


def test_several_processes_run_their_own_runs_on_one_database(pg_conninfo: str, tmp_path: Path) -> None:
    log = tmp_path / "calls.log"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", MANY_RUNS, pg_conninfo, f"proc{n}", str(log)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(3)
    ]
    outputs = [proc.communicate(timeout=120) for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0, 0], outputs
    store = PostgresStore(pg_conninfo)
    runs = store.list_runs()
    assert len(runs) == 24 and {run.status for run in runs} == {"finished"}
    calls = Counter(log.read_text().split())
    assert len(calls) == 24 * 3 and set(calls.values()) == {1}  # every call ran once
    store.close()


def test_the_head_delta_is_stored_compressed(pg_conninfo: str) -> None:
    """A save point writes the head's delta deflated like a step row (``z1:``): a cycle's WAL is
    mostly that delta. A damaged compressed delta is a damaged store, naming the run."""
    store = PostgresStore(pg_conninfo)
    script: list[Any] = [tool_call("lookup", {"key": f"k{i}"}) for i in range(6)] + ["done"]
    Agent(model=ScriptedModel(script), tools=[lookup], store=store)("go", run_id="z")
    _, delta, _, _ = stored_head_columns(pg_conninfo, "z")
    assert delta is not None and delta.startswith("z1:")
    assert store.head("z") == store.history("z")[-1].head
    with psycopg.connect(pg_conninfo, autocommit=True) as conn:
        conn.execute("UPDATE tether_runs SET delta = 'z1:AAAA' WHERE run_id = 'z'")
    with pytest.raises(StoreError, match=r"run 'z': head delta: .*inflate"):
        store.load("z")
    store.close()


def test_save_points_commit_on_the_event_loop(pg_conninfo: str) -> None:
    """A leased run's save points go out on the event loop (``commit_async``): only the run's
    first write (which creates it) takes the writer thread; the run is stored whole."""
    import threading

    store = PostgresStore(pg_conninfo)
    threads: list[str] = []
    original = store._write_rows

    def spy(conn: Any, run_id: str, prepared: Any, lease: Any) -> None:
        threads.append(threading.current_thread().name)
        original(conn, run_id, prepared, lease)

    store._write_rows = spy  # type: ignore[method-assign]
    script: list[Any] = [tool_call("lookup", {"key": f"k{i}"}) for i in range(5)] + ["done"]
    agent = Agent(model=ScriptedModel(script), tools=[lookup], store=store)
    agent("go", run_id="loop")
    assert len(threads) == 1 and threads[0].startswith("tether-store-writer")  # the first write alone
    assert len(store.history("loop")) > 10
    loaded = store.load("loop")
    assert loaded is not None and loaded.messages == agent.messages and loaded.head["status"] == "finished"
    store.close()


def test_a_commit_on_the_loop_cancelled_mid_round_trip_completes_it(pg_conninfo: str) -> None:
    """Cancelling a caller while its save point's statement is out does not cut the statement:
    the round trip finishes (the write is stored), the cancellation goes through, and the
    lease's connection serves the next write. The first save point of a shape on a connection
    goes out with its statement's preparation, in one pipeline: cancelled then, it is stored
    too (the statement was out)."""
    import asyncio

    from tether.durable.codec import new_packer

    store = PostgresStore(pg_conninfo)
    packer = new_packer(None)
    head: dict[str, Any] = {"rev": 1, "next_seq": 1, "start_seq": 0, "cursor": {"phase": "model", "cycle_index": 0}, "metrics": {}}
    head["steps"] = 1
    first: Any = {"role": "user", "content": [{"text": "m1"}]}
    with store.lease("c") as lease:
        store.commit("c", store.prepare("c", head, [first], {}, step_row(1, head), packer), lease=lease)

        def write(rev: int) -> Any:
            nonlocal head
            head = {**head, "rev": rev, "next_seq": rev, "steps": rev}
            return store.prepare("c", head, [{"role": "user", "content": [{"text": f"m{rev}"}]}], {}, step_row(rev, head), packer)

        async def cancelled(prepared: Any) -> None:
            task = asyncio.ensure_future(store.commit_async("c", prepared, lease=lease))
            await asyncio.sleep(0)  # the task's first statement is out; it awaits its answer
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

        asyncio.run(cancelled(write(2)))  # the statement's preparation and the save point were out
        assert store.head("c")["rev"] == 2  # type: ignore[index]
        asyncio.run(cancelled(write(3)))  # prepared now: the save point alone was out
        assert store.head("c")["rev"] == 3  # type: ignore[index]
        assert asyncio.run(store.commit_async("c", write(4), lease=lease)) is True
    loaded = store.load("c")
    assert loaded is not None and loaded.head["rev"] == 4 and [m["content"][0]["text"] for m in loaded.messages] == ["m1", "m2", "m3", "m4"]
    store.close()
