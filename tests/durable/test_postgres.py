"""PostgresStore specifics, against a real server: schema version, connection options, leases
between processes (advisory locks freed when the owner dies), O(n) storage, clear errors."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tether import Agent
from tether.durable import RunStore
from tether.durable.postgres import PostgresStore, advisory_key
from tether.durable.store import SCHEMA_VERSION
from tether.errors import ConfigurationError, RunLockedError, StoreError
from tether.models import ScriptedModel

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
    assert version == (str(SCHEMA_VERSION),)


def test_newer_store_schema_refused(pg_conninfo: str) -> None:
    PostgresStore(pg_conninfo).close()
    with psycopg.connect(pg_conninfo, autocommit=True) as conn:
        conn.execute("UPDATE tether_meta SET value = %s WHERE key = 'schema_version'", (str(SCHEMA_VERSION + 1),))
    with pytest.raises(StoreError, match=rf"newer Tether \(store schema {SCHEMA_VERSION + 1}"):
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
from tether import Agent
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
    with psycopg.connect(pg_conninfo, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (store._main().info.backend_pid,))
    with pytest.raises(StoreError, match=r"run 'r1': PostgreSQL .* failed"):
        store.head("r1")  # the server dropped the session under us: said plainly, not hidden
    assert store.head("r1") is not None  # the next call opens a new connection
