"""SQLiteStore specifics: schema version, leases between processes, O(n) storage, metrics."""

from __future__ import annotations

import random
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tether import Agent
from tether.conversation import NullConversationManager
from tether.durable import MemoryStore, RunStore, SQLiteStore
from tether.durable.sqlite import PAGE_SIZE
from tether.durable.store import SCHEMA_VERSION
from tether.errors import ConfigurationError, RunLockedError, StoreError
from tether.models import ScriptedModel

from .helpers import Crash, Plan, make_agent
from .worker import build_agent

ROOT = Path(__file__).resolve().parents[2]


def test_newer_store_schema_refused(tmp_path: Path) -> None:
    SQLiteStore(tmp_path / "runs.db").close()
    with sqlite3.connect(tmp_path / "runs.db") as conn:
        conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION + 1),))
    with pytest.raises(StoreError, match="newer"):
        SQLiteStore(tmp_path / "runs.db")


def test_not_a_database_refused(tmp_path: Path) -> None:
    (tmp_path / "runs.db").write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(StoreError, match=r"runs\.db"):
        SQLiteStore(tmp_path / "runs.db")


@pytest.mark.parametrize("path", [":memory:", Path(":memory:")])
def test_an_in_memory_sqlite_store_is_refused_pointing_to_memory_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, path: str | Path
) -> None:
    """sqlite3 gives every connection its own ``:memory:`` database and the leases are lock files
    beside the database: such a store once created a file named ``:memory:``, a ``:memory:.locks``
    directory, then failed with "no such table". It is refused, naming the store that does it."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigurationError, match=r"SQLiteStore\(':memory:'\) is not supported.*tether\.durable\.MemoryStore\(\)"):
        SQLiteStore(path)
    assert list(tmp_path.iterdir()) == []


def test_lock_files_are_hashed_next_to_the_db(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "runs.db")
    with store.lease("trip-42"):
        (lock,) = (tmp_path / "runs.db.locks").iterdir()
    assert lock.suffix == ".lock" and "trip" not in lock.name


def test_two_processes_resuming_at_once_exactly_one_proceeds(tmp_path: Path) -> None:
    db, log, gate = tmp_path / "runs.db", tmp_path / "effects.log", tmp_path / "gate"
    store = SQLiteStore(db)
    agent = build_agent(store, str(log))
    crash = Crash("stop")

    def crash_on_model(request: Any) -> Any:
        raise crash

    agent.model.responses[1] = crash_on_model  # type: ignore[attr-defined]
    with pytest.raises(Crash):
        agent("run the 20 steps", run_id="shared")
    cmd = [sys.executable, "-m", "tests.durable.worker", str(db), "shared", str(log), "resume", str(gate)]
    procs = [subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    # the tool of the winner blocks on the gate, so the loser must meet the lease; wait for it
    loser = None
    while loser is None:
        loser = next((p for p in procs if p.poll() is not None), None)
        time.sleep(0.02)
    gate.write_text("open")
    outputs = [p.communicate(timeout=60) for p in procs]
    codes = sorted(p.returncode for p in procs)
    assert codes == [0, 3], outputs
    assert loser.returncode == 3 and "is owned by another live process" in outputs[procs.index(loser)][0]
    assert SQLiteStore(db).head("shared")["cursor"]["phase"] == "idle"  # type: ignore[index]


def test_killed_owner_releases_the_lease(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    code = f"""
import sys, os, signal
from tether.durable import SQLiteStore
store = SQLiteStore({str(db)!r})
with store.lease("held"):
    print("held", flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.stdout.strip() == "held" and proc.returncode < 0
    with SQLiteStore(db).lease("held"):
        pass


def test_live_owner_blocks_resume_in_process(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "runs.db")
    agent = Agent(model=ScriptedModel(["hi"]), store=store)
    agent("hello", run_id="r")
    with store.lease("r"):
        with pytest.raises(RunLockedError, match="'r'"):
            Agent(model=ScriptedModel(["x"]), store=SQLiteStore(tmp_path / "runs.db")).resume("r")


def test_metrics_survive_processes(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    code = f"""
from tether import Agent
from tether.durable import SQLiteStore
from tether.models import ScriptedModel
agent = Agent(model=ScriptedModel(["a", "b", "c"], stateful=True, usage=(7, 3)), store=SQLiteStore({str(db)!r}))
agent("one", run_id="m")
agent("two", run_id="m")
"""
    subprocess.run([sys.executable, "-c", code], check=True)
    agent = Agent(model=ScriptedModel(["a", "b", "c"], stateful=True, usage=(7, 3)), store=SQLiteStore(db))
    result = agent("three", run_id="m")
    assert str(result) == "c"
    assert result.metrics.model_call_count == 3
    assert result.metrics.usage["total_tokens"] == 30
    assert result.metrics.usage["input_tokens"] == 21


def bytes_per_message(store: RunStore, count: int) -> float:
    replies = [f"reply number {i}" for i in range(count // 2)]
    agent = Agent(model=ScriptedModel(replies, stateful=True), store=store, conversation_manager=NullConversationManager())
    for i in range(count // 2):
        agent(f"question number {i}", run_id="grow")
    assert len(agent.messages) == count
    return store.bytes_written / count


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_bytes_per_message_stay_flat(tmp_path: Path, kind: str) -> None:
    def make(name: str) -> RunStore:
        return MemoryStore() if kind == "memory" else SQLiteStore(tmp_path / f"{name}.db")

    small = bytes_per_message(make("small"), 100)
    large = bytes_per_message(make("large"), 1000)
    assert large < 1.5 * small, (small, large)  # O(n): 10x the messages, ~10x the bytes


def test_db_file_grows_linearly(tmp_path: Path) -> None:
    sizes = {}
    for count in (100, 1000):
        path = tmp_path / f"{count}.db"
        store = SQLiteStore(path)
        bytes_per_message(store, count)
        store.close()
        with sqlite3.connect(path) as conn:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        sizes[count] = path.stat().st_size
    assert sizes[1000] < 1.5 * 10 * sizes[100], sizes


def test_durability_full_syncs_every_commit_off_the_event_loop(tmp_path: Path) -> None:
    from tether.durable.codec import prepare_write

    store = SQLiteStore(tmp_path / "runs.db", durability="full")
    with store._connection() as conn:
        assert conn.execute("PRAGMA synchronous").fetchone() == (2,)  # FULL
    head = {"schema_version": 3, "rev": 1, "start_seq": 0, "next_seq": 0, "cursor": {"phase": "idle", "cycle_index": 0}, "metrics": {}}
    prepared = prepare_write("r", head, [], {}, None, None, None, None)
    assert store.commit("r", prepared, wait=False) is False  # declined: a writer thread commits it
    assert store.commit("r", prepared, wait=True) is True and store.head("r") is not None
    with SQLiteStore(tmp_path / "n.db")._connection() as conn:
        assert conn.execute("PRAGMA synchronous").fetchone() == (1,)  # NORMAL
    with pytest.raises(ConfigurationError, match="durability='fast' is not one of 'normal', 'full'"):
        SQLiteStore(tmp_path / "x.db", durability="fast")


def read_all(store: SQLiteStore) -> None:
    """Every read of a store; each may refuse with a StoreError, nothing else may escape."""
    reads: list[Any] = [store.list_runs, store.run_sizes]
    for run_id in ("r", "other"):
        reads += [lambda r=run_id: store.load(r), lambda r=run_id: store.head(r), lambda r=run_id: store.history(r)]
        reads += [lambda r=run_id: store.load_at(r, 2), lambda r=run_id: store.size(r)]
    for read in reads:
        try:
            read()
        except StoreError:
            pass


def test_byte_flipped_store_files_raise_only_store_errors_naming_the_file(tmp_path: Path) -> None:
    """A store file damaged anywhere (one bit flipped; half of them in the schema text) opens
    and reads as usual or is refused with a StoreError naming the file, never a
    UnicodeDecodeError or another raw error."""
    good = tmp_path / "good.db"
    store = SQLiteStore(good)
    make_agent(store, Plan())("go", run_id="r")
    make_agent(store, Plan())("again", run_id="other")
    store.close()  # the last connection checkpoints the WAL into the file
    original = good.read_bytes()
    schema = [at for at in range(len(original)) if original.startswith(b"CREATE ", at)]  # the schema text (sqlite_master)
    assert len(schema) >= 7
    rng = random.Random(20261126)
    refused = 0
    for round_ in range(400):
        raw = bytearray(original)
        if round_ % 2:  # a byte of the schema text
            position = rng.choice(schema) + rng.randrange(120)
        else:  # the header and page 1, or anywhere
            position = rng.randrange(PAGE_SIZE) if round_ % 4 else rng.randrange(len(raw))
        raw[position] ^= 1 << rng.randrange(8)
        damaged = tmp_path / f"flipped-{round_}.db"
        damaged.write_bytes(raw)
        try:
            opened = SQLiteStore(damaged)
        except StoreError as exc:
            assert damaged.name in str(exc), f"byte {position}: {exc}"
            refused += 1
            continue
        except Exception as exc:
            pytest.fail(f"byte {position}: {type(exc).__name__}: {exc!s:.300}")
        try:
            read_all(opened)
        except Exception as exc:
            pytest.fail(f"byte {position}: {type(exc).__name__}: {exc!s:.300}")
        finally:
            opened.close()
    assert refused > 20  # damage to the schema was tried
