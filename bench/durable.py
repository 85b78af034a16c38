"""Durable-run cost: per-cycle time of SQLiteStore, MemoryStore and PostgresStore against no
store, and what a run costs in storage, for conversations of 10 to 10,000 messages.

Run: ``python bench/durable.py`` (or ``python bench/durable.py 10 100`` for chosen sizes).

Two tables. **Time**: a conversation of N messages gets 50 more tool cycles; the extra ms per
cycle over no store. **Storage**: a tool loop of N/2 cycles makes a run of N messages in a fresh
store: bytes on disk per message after the run (SQLite: database + WAL after a checkpoint;
PostgreSQL: ``pg_total_relation_size`` of the tether tables), bytes written per message during
the run (SQLite: the process's ``wchar``, WAL and checkpoints included; PostgreSQL: the WAL LSN
difference), against the messages' own JSON; once plain, once with a 64 KiB agent state set
before the run and never changed, once with a 64 KiB state changed by every tool call.
Targets at 1,000 messages on SQLite: extra time <= 0.5 ms per cycle; on disk <= 3x the
messages' JSON; written <= 6 KiB per message; the unchanged 64 KiB state adds <= 3x its size.
PostgreSQL: a throwaway local server is started like the tests' (``tests/durable/pg.py``: initdb +
pg_ctl, unix socket) with PostgreSQL's default durability: ``fsync=on``, ``synchronous_commit=on``,
``full_page_writes=on`` (every commit waits for its WAL flush, as on a production server; the
settings are printed); its column says "skipped" with the reason when no PostgreSQL binaries or
psycopg are installed.

A third table, **PostgreSQL save points** (``--cycles-pg N``, default 200): a tool loop of N cycles
on one ``PostgresStore``, interleaved rounds with a no-store run and a SQLite run, reporting the
median durable overhead per cycle, WAL bytes per cycle (``pg_current_wal_lsn()`` difference),
commits per cycle (transaction ids the run assigned: ``pg_current_snapshot()``'s xmax difference),
round trips per cycle (frontend Sync and Query messages in a libpq trace of the store's
connections, in a separate traced run), and the physical floor measured in the same run: one
INSERT+UPDATE transaction through psycopg (BEGIN, INSERT, UPDATE, COMMIT on one connection) and the
same as one statement. Then **50 concurrent conversations x 5 cycles** on one shared store:
conversations per second.
Run only that part with ``python bench/durable.py --pg-only`` (``--repeats N`` rounds, default 5).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import sqlite3
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from tether import Agent, ToolContext, tool
from tether.conversation import NullConversationManager
from tether.durable import MemoryStore, RunStore, SQLiteStore
from tether.models import ScriptedModel
from tether.models.scripted import tool_call

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/, for this import only: a test importing
from _pg import throwaway_server  # this script must not find bench/durable.py as `durable`

del sys.path[0]

SIZES = (10, 100, 1000, 10000)


def start_postgres(stack: ExitStack) -> tuple[str | None, str]:
    """A conninfo of a throwaway PostgreSQL server (stopped by ``stack``), or None and why not."""
    try:
        import psycopg  # noqa: F401

        server = throwaway_server(stack, durable=True)
    except Exception as exc:  # ImportError, PgUnavailable: no server here
        return None, f"skipped ({exc})"
    return server.conninfo(), ""


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


def history(count: int) -> list[Any]:
    """A conversation of ``count`` plain messages."""
    return [{"role": "user" if i % 2 == 0 else "assistant", "content": [{"text": f"message {i} " + "x" * 80}]} for i in range(count)]


def one(count: int, cycles: int, store: RunStore | None, run_id: str) -> tuple[float, float]:
    """Seconds per cycle and bytes per message of one measured invocation at ``count`` messages."""
    script: list[Any] = ["warm"] + [tool_call("lookup", {"key": f"k{i}"}) for i in range(cycles)] + ["done"]
    agent = Agent(
        model=ScriptedModel(script, stateful=True),
        tools=[lookup],
        messages=history(count),
        store=store,
        conversation_manager=NullConversationManager(),
    )
    rid = run_id if store is not None else None
    agent("warm up", run_id=rid)  # creates the run (writes the history once)
    before = store.bytes_written if store is not None else 0
    added = len(agent.messages)
    started = time.perf_counter()
    agent("measure", run_id=rid)
    elapsed = time.perf_counter() - started
    added = len(agent.messages) - added
    written = (store.bytes_written - before) if store is not None else 0
    return elapsed / (cycles + 1), written / added


def measure(count: int, repeats: int, cycles: int, directory: Path, postgres: str | None = None) -> dict[str, float]:
    """Median per-cycle ms for each configuration, and bytes per message for each store.

    The embedded stores are measured in one loop (no store, memory, SQLite per repeat) and
    PostgreSQL in a loop of its own, against a no-store baseline measured alongside it: a
    server round trip (and the writer thread that waits for it) would otherwise shift the
    baseline of the embedded stores' figures.
    """
    plain, memory, sqlite, mem_bytes, sql_bytes = [], [], [], [], []
    for r in range(repeats):
        plain.append(one(count, cycles, None, "")[0])
        per_cycle, per_message = one(count, cycles, MemoryStore(), f"m{r}")
        memory.append(per_cycle)
        mem_bytes.append(per_message)
        store = SQLiteStore(directory / f"bench-{count}-{r}.db")
        per_cycle, per_message = one(count, cycles, store, f"s{r}")
        store.close()
        sqlite.append(per_cycle)
        sql_bytes.append(per_message)
    ms = 1000.0
    figures = {}
    if postgres is not None:
        figures = _postgres_figures(count, repeats, cycles, postgres)
    return figures | {
        "messages": float(count),
        "plain_ms": statistics.median(plain) * ms,
        "memory_ms": statistics.median(memory) * ms,
        "sqlite_ms": statistics.median(sqlite) * ms,
        "memory_overhead_ms": (statistics.median(memory) - statistics.median(plain)) * ms,
        "sqlite_overhead_ms": (statistics.median(sqlite) - statistics.median(plain)) * ms,
        "memory_bytes_per_message": statistics.median(mem_bytes),
        "sqlite_bytes_per_message": statistics.median(sql_bytes),
    }


def _postgres_figures(count: int, repeats: int, cycles: int, conninfo: str) -> dict[str, float]:
    """PostgreSQL's per-cycle overhead against a no-store baseline measured in the same loop."""
    from tether.durable.postgres import PostgresStore

    plain, times, sizes = [], [], []
    for r in range(repeats):
        plain.append(one(count, cycles, None, "")[0])
        store = PostgresStore(conninfo)
        per_cycle, per_message = one(count, cycles, store, f"p{count}-{r}")
        store.close()
        times.append(per_cycle)
        sizes.append(per_message)
    return {
        "postgres_ms": statistics.median(times) * 1000.0,
        "postgres_overhead_ms": (statistics.median(times) - statistics.median(plain)) * 1000.0,
        "postgres_bytes_per_message": statistics.median(sizes),
    }


STATE_BYTES = 64 * 1024
SCENARIOS = ("plain", "state once", "state changing")


@tool
def step(key: str, context: ToolContext) -> str:
    """Look a key up; with a changing state, change it a little.

    Args:
        key: The key.
    """
    if context.invocation_state.get("changing"):
        context.agent.state.set("counter", {"key": key, "n": len(key)})  # a small change beside the big value
        blob = context.agent.state.get("blob")
        blob["last"] = key
        context.agent.state.set("blob", blob)
    return f"value of {key}"


def _noise(size: int) -> str:
    """``size`` characters of hex that no store can compress (PostgreSQL compresses a run of one
    letter to nothing), the same in every run."""
    out = []
    digest = b"tether"
    while len(out) * 64 < size:
        digest = hashlib.sha256(digest).digest()
        out.append(hashlib.sha256(digest).hexdigest())
    return "".join(out)[:size]


def _wchar() -> int:
    """Bytes this process has written so far (Linux ``/proc/self/io``; 0 elsewhere)."""
    try:
        for line in Path("/proc/self/io").read_text().splitlines():
            if line.startswith("wchar:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def storage_run(messages: int, scenario: str, store: RunStore) -> tuple[int, float]:
    """Run a tool loop that ends with ``messages`` messages in ``store``; returns the messages and
    their compact JSON bytes per message."""
    cycles = max(1, (messages - 2) // 2)
    script: list[Any] = [tool_call("step", {"key": f"k{i}"}) for i in range(cycles)] + ["done"]
    state = {"blob": {"data": _noise(STATE_BYTES)}} if scenario != "plain" else None
    agent = Agent(model=ScriptedModel(script), tools=[step], store=store, state=state, conversation_manager=NullConversationManager())
    agent("go", run_id="run", invocation_state={"changing": scenario == "state changing"})
    count = len(agent.messages)
    return count, sum(len(json.dumps(m, separators=(",", ":"))) for m in agent.messages) / count


def sqlite_storage(messages: int, scenario: str, directory: Path) -> dict[str, float]:
    """On-disk and written bytes per message of one SQLite run."""
    path = directory / f"storage-{messages}-{scenario.replace(' ', '-')}.db"
    store = SQLiteStore(path)
    before = _wchar()
    count, json_bytes = storage_run(messages, scenario, store)
    written = _wchar() - before
    store.close()
    with contextlib.closing(sqlite3.connect(path)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    disk = sum(p.stat().st_size for p in directory.glob(f"{path.name}*") if p.is_file())
    return {"count": count, "json": json_bytes, "disk": disk / count, "written": written / count, "disk_total": disk}


def postgres_storage(messages: int, scenario: str, admin: str) -> dict[str, float]:
    """On-disk and WAL bytes per message of one PostgreSQL run, in a database of its own."""
    import psycopg

    from tether.durable.postgres import PostgresStore

    name = f"bench_{messages}_{scenario.replace(' ', '_')}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name}")
        conn.execute(f"CREATE DATABASE {name}")
    conninfo = admin.rsplit("dbname=", 1)[0] + f"dbname={name}"
    store = PostgresStore(conninfo)
    with psycopg.connect(conninfo, autocommit=True) as conn:
        start = conn.execute("SELECT pg_current_wal_lsn()").fetchone()[0]  # type: ignore[index]
        count, json_bytes = storage_run(messages, scenario, store)
        store.close()
        wal = conn.execute("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), %s)", (start,)).fetchone()[0]  # type: ignore[index]
        disk = conn.execute(
            "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c WHERE c.relkind = 'r' AND c.relname LIKE 'tether%%'"
        ).fetchone()[0]  # type: ignore[index]
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name}")
    return {"count": count, "json": json_bytes, "disk": float(disk) / count, "written": float(wal) / count, "disk_total": float(disk)}


def storage(sizes: list[int] | tuple[int, ...], postgres: str | None, why: str) -> list[dict[str, Any]]:
    """Print the storage table; returns one row per size and scenario."""
    rows: list[dict[str, Any]] = []
    print(
        f"\n{'messages':>9} {'scenario':>15} {'JSON B/msg':>10} {'sqlite disk B/msg':>18} {'(x JSON)':>8} {'sqlite written B/msg':>21}"
        f" {'pg disk B/msg':>14} {'pg WAL B/msg':>13}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for messages in sizes:
            plain_disk: dict[str, float] = {}
            for scenario in SCENARIOS:
                lite = sqlite_storage(messages, scenario, Path(tmp))
                pg = postgres_storage(messages, scenario, postgres) if postgres is not None else None
                row = {"messages": messages, "scenario": scenario, "sqlite": lite, "postgres": pg}
                rows.append(row)
                if scenario == "plain":
                    plain_disk = {"sqlite": lite["disk_total"], "postgres": pg["disk_total"] if pg else 0.0}
                pg_cols = f"{pg['disk']:>14.0f} {pg['written']:>13.0f}" if pg else f"  {why}"
                print(
                    f"{messages:>9} {scenario:>15} {lite['json']:>10.0f} {lite['disk']:>18.0f} {lite['disk'] / lite['json']:>8.1f}"
                    f" {lite['written']:>21.0f} {pg_cols}"
                )
                if scenario == "state once":
                    added = (lite["disk_total"] - plain_disk["sqlite"]) / STATE_BYTES
                    pg_added = f", PostgreSQL {(pg['disk_total'] - plain_disk['postgres']) / STATE_BYTES:.2f}x" if pg else ""
                    print(f"{'':>9} {'':>15} the unchanged 64 KiB state adds {added:.2f}x its size on disk (SQLite){pg_added}")
    return rows


PG_CYCLES = 200
CONVERSATIONS = 50
CONVERSATION_CYCLES = 5


def _loop_agent(cycles: int, store: RunStore | None) -> Agent:
    """An agent whose scripted model calls ``lookup`` ``cycles`` times, then answers."""
    script: list[Any] = [tool_call("lookup", {"key": f"k{i}"}) for i in range(cycles)] + ["done"]
    return Agent(model=ScriptedModel(script), tools=[lookup], store=store, conversation_manager=NullConversationManager())


def _scalar(conninfo: str, query: str) -> Any:
    import psycopg

    with psycopg.connect(conninfo, autocommit=True) as conn:
        row = conn.execute(query).fetchone()
    assert row is not None
    return row[0]


def _wal_and_xid(conninfo: str) -> tuple[str, int]:
    """The WAL position and the next transaction id (taking none), read in one query."""
    import psycopg

    with psycopg.connect(conninfo, autocommit=True) as conn:
        row = conn.execute("SELECT pg_current_wal_lsn()::text, pg_snapshot_xmax(pg_current_snapshot())::text::bigint").fetchone()
    assert row is not None
    return str(row[0]), int(row[1])


def pg_cycle(conninfo: str, cycles: int, run_id: str) -> dict[str, float]:
    """One tool loop of ``cycles`` cycles on a fresh ``PostgresStore``: seconds, WAL bytes and
    write transactions (commits) per cycle, measured around the invocation alone."""
    from tether.durable.postgres import PostgresStore

    store = PostgresStore(conninfo)
    agent = _loop_agent(cycles, store)
    lsn, xid = _wal_and_xid(conninfo)
    started = time.perf_counter()
    agent("go", run_id=run_id)
    elapsed = time.perf_counter() - started
    end_lsn, end_xid = _wal_and_xid(conninfo)
    wal = float(_scalar(conninfo, f"SELECT pg_wal_lsn_diff('{end_lsn}', '{lsn}')"))
    store.close()
    return {"s": elapsed / cycles, "wal": wal / cycles, "commits": (end_xid - xid) / cycles}


def pg_round_trips(conninfo: str, cycles: int, run_id: str) -> float:
    """Round trips per cycle of a traced run: every Sync or simple Query message the store's
    connections send waits for the server's answer (nothing here pipelines across them)."""
    from psycopg import pq

    from tether.durable import postgres

    store_cls = postgres.PostgresStore
    traces: list[Path] = []
    files: list[Any] = []
    conns: list[Any] = []
    original = store_cls._open

    def trace(conn: Any, handle: Any) -> None:
        conn.pgconn.trace(handle.fileno())
        conn.pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS | pq.Trace.REGRESS_MODE)

    def traced(self: Any, **options: Any) -> Any:
        conn = original(self, **options)
        handle = tempfile.NamedTemporaryFile("w+", prefix="tether-pgtrace-", delete=False)
        files.append(handle)
        traces.append(Path(handle.name))
        conns.append(conn)
        trace(conn, handle)
        return conn

    def count() -> int:
        """Round trips of the connections traced so far (libpq buffers its trace: untracing flushes it)."""
        for conn in conns:
            if not conn.closed:
                conn.pgconn.untrace()
        total = sum(_trips(path) for path in traces)
        for path in traces:
            path.unlink(missing_ok=True)  # counted: the trace files go (the finally below removes the rest)
        conns.clear()
        traces.clear()
        return total

    store_cls._open = traced  # type: ignore[method-assign]
    try:
        store = store_cls(conninfo)  # the warm-up run alone: its round trips are subtracted
        _loop_agent(cycles, store)("warm", run_id=run_id + "-w")
        counted = count()
        store.close()
        store = store_cls(conninfo)  # the same warm-up, then the measured run
        _loop_agent(cycles, store)("warm", run_id=run_id + "-x")
        _loop_agent(cycles, store)("go", run_id=run_id)
        after = count()
        store.close()
    finally:
        store_cls._open = original  # type: ignore[method-assign]
        for handle in files:
            handle.close()
        for path in traces:
            path.unlink(missing_ok=True)
    return (after - counted) / cycles


def _trips(path: Path) -> int:
    """Frontend Sync and Query messages in a libpq trace file."""
    count = 0
    with path.open() as lines:
        for line in lines:
            parts = line.rstrip("\n").split("\t")
            if len(parts) > 2 and parts[0] == "F" and parts[2].split(" ", 1)[0] in ("Sync", "Query"):
                count += 1
    return count


def pg_floor(conninfo: str, repeats: int = 400) -> dict[str, float]:
    """The physical floor of one save point: one INSERT + UPDATE transaction through psycopg on
    this server (BEGIN, INSERT, UPDATE, COMMIT: four round trips, one WAL flush), and the same
    as one statement (one round trip); median seconds."""
    import psycopg

    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS bench_floor_rows, bench_floor_head")
        conn.execute("CREATE TABLE bench_floor_rows (id BIGINT PRIMARY KEY, body TEXT NOT NULL)")
        conn.execute("CREATE TABLE bench_floor_head (id INT PRIMARY KEY, rev BIGINT NOT NULL, body TEXT NOT NULL)")
        conn.execute("INSERT INTO bench_floor_head VALUES (1, 0, 'x')")
        body = "y" * 200
        tx: list[float] = []
        one: list[float] = []
        for i in range(repeats):
            started = time.perf_counter()
            with conn.transaction():
                conn.execute("INSERT INTO bench_floor_rows VALUES (%s, %s)", (2 * i, body))
                conn.execute("UPDATE bench_floor_head SET rev = rev + 1, body = %s WHERE id = 1", (body,))
            tx.append(time.perf_counter() - started)
            started = time.perf_counter()
            conn.execute(
                "WITH h AS (UPDATE bench_floor_head SET rev = rev + 1, body = %s WHERE id = 1 RETURNING id)"
                " INSERT INTO bench_floor_rows SELECT %s, %s FROM h",
                (body, 2 * i + 1, body),
            )
            one.append(time.perf_counter() - started)
        conn.execute("DROP TABLE bench_floor_rows, bench_floor_head")
    return {"transaction": statistics.median(tx), "statement": statistics.median(one)}


def concurrent_conversations(conninfo: str, conversations: int = CONVERSATIONS, cycles: int = CONVERSATION_CYCLES, tag: str = "") -> float:
    """Conversations per second: ``conversations`` agents of ``cycles`` tool cycles each, run at
    once on one event loop, all on one shared ``PostgresStore``."""
    import asyncio

    from tether.durable.postgres import PostgresStore

    store = PostgresStore(conninfo)
    agents = [_loop_agent(cycles, store) for _ in range(conversations)]

    async def all_at_once() -> None:
        await asyncio.gather(*(agent.invoke_async("go", run_id=f"conc{tag}-{i}") for i, agent in enumerate(agents)))

    started = time.perf_counter()
    asyncio.run(all_at_once())
    elapsed = time.perf_counter() - started
    store.close()
    return conversations / elapsed


def pg_save_points(
    conninfo: str, settings: str, cycles: int = PG_CYCLES, repeats: int = 5, conversations: int = CONVERSATIONS
) -> dict[str, float]:
    """The PostgreSQL save-point table (see the module docstring); returns its figures."""
    print(f"\nPostgreSQL save points: {cycles}-cycle tool loop, one PostgresStore; server settings: {settings}")
    plain, pg, lite, wal, commits, floors, statements, rates = [], [], [], [], [], [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(repeats):  # interleaved: a noisy moment shifts every column of a round alike
            started = time.perf_counter()
            _loop_agent(cycles, None)("go")
            plain.append((time.perf_counter() - started) / cycles)
            figures = pg_cycle(conninfo, cycles, f"pgsave-{r}-{time.time_ns()}")
            pg.append(figures["s"])
            wal.append(figures["wal"])
            commits.append(figures["commits"])
            store = SQLiteStore(Path(tmp) / f"pgsave-{r}.db")
            started = time.perf_counter()
            _loop_agent(cycles, store)("go", run_id="r")
            lite.append((time.perf_counter() - started) / cycles)
            store.close()
            floor = pg_floor(conninfo, repeats=max(20, cycles))
            floors.append(floor["transaction"])
            statements.append(floor["statement"])
            rates.append(concurrent_conversations(conninfo, conversations, tag=f"{r}-{time.time_ns()}"))
    trips = pg_round_trips(conninfo, min(cycles, 50), f"pgtrace-{time.time_ns()}")
    ms = 1000.0
    row = {
        "cycles": float(cycles),
        "plain_ms": statistics.median(plain) * ms,
        "pg_overhead_ms": (statistics.median(pg) - statistics.median(plain)) * ms,
        "sqlite_overhead_ms": (statistics.median(lite) - statistics.median(plain)) * ms,
        "wal_bytes_per_cycle": statistics.median(wal),
        "commits_per_cycle": statistics.median(commits),
        "round_trips_per_cycle": trips,
        "floor_ms": statistics.median(floors) * ms,
        "floor_statement_ms": statistics.median(statements) * ms,
        "conversations_per_s": statistics.median(rates),
    }
    row["overhead_x_floor"] = row["pg_overhead_ms"] / row["floor_ms"]
    print(
        f"{'pg +ms/cycle':>13} {'x floor':>8} {'floor ms (tx)':>14} {'floor ms (1 stmt)':>18} {'WAL B/cycle':>12} {'commits/cycle':>14}"
        f" {'trips/cycle':>12} {'sqlite +ms':>11} {f'{conversations}x{CONVERSATION_CYCLES} conv/s':>15}"
    )
    print(
        f"{row['pg_overhead_ms']:>13.3f} {row['overhead_x_floor']:>8.2f} {row['floor_ms']:>14.3f} {row['floor_statement_ms']:>18.3f}"
        f" {row['wal_bytes_per_cycle']:>12.0f} {row['commits_per_cycle']:>14.2f} {row['round_trips_per_cycle']:>12.2f}"
        f" {row['sqlite_overhead_ms']:>11.3f} {row['conversations_per_s']:>15.1f}"
    )
    print(f"(medians of {repeats} interleaved rounds; no-store baseline {row['plain_ms']:.3f} ms/cycle)")
    return row


def main(
    sizes: list[int] | tuple[int, ...] = SIZES,
    repeats: int = 5,
    cycles: int = 50,
    postgres: str | bool = True,
    storage_sizes: list[int] | tuple[int, ...] | None = None,
    pg_cycles: int = PG_CYCLES,
    pg_only: bool = False,
    pg_conversations: int = CONVERSATIONS,
) -> list[dict[str, float]]:
    """Print the time table (one row per size), the storage table and the PostgreSQL save-point
    table; returns the time rows, then (when PostgreSQL ran) the save-point row.
    ``postgres``: True starts a throwaway server, a conninfo string uses that database, False
    leaves the column out. ``storage_sizes`` defaults to ``sizes``. ``pg_cycles``: cycles of the
    save-point table's loop; ``pg_only``: print that table alone; ``pg_conversations``: how many
    conversations run at once in its throughput figure."""
    rows: list[dict[str, float]] = []
    if pg_only:
        with ExitStack() as stack:
            conninfo, why = (postgres, "") if isinstance(postgres, str) else start_postgres(stack)
            if conninfo is None:
                print(f"PostgreSQL save points: {why}")
                return rows
            return [pg_save_points(conninfo, _settings(conninfo), pg_cycles, repeats, pg_conversations)]
    print(
        f"{'messages':>9} {'none ms/cycle':>14} {'memory +ms':>11} {'sqlite +ms':>11} {'B/msg mem':>10} {'B/msg sqlite':>13}"
        f" {'postgres +ms':>13} {'B/msg pg':>9}"
    )
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        conninfo, why = (postgres, "") if isinstance(postgres, str) else start_postgres(stack) if postgres else (None, "skipped")
        for count in sizes:
            row = measure(count, max(1, repeats // 3) if count >= 10000 else repeats, cycles, Path(tmp), conninfo)
            rows.append(row)
            pg = f"{row['postgres_overhead_ms']:>13.3f} {row['postgres_bytes_per_message']:>9.0f}" if conninfo else f"  {why}"
            print(
                f"{count:>9} {row['plain_ms']:>14.3f} {row['memory_overhead_ms']:>11.3f} {row['sqlite_overhead_ms']:>11.3f} "
                f"{row['memory_bytes_per_message']:>10.0f} {row['sqlite_bytes_per_message']:>13.0f} {pg}"
            )
        storage(storage_sizes if storage_sizes is not None else sizes, conninfo, why)
        if conninfo is not None:
            rows.append(pg_save_points(conninfo, _settings(conninfo), pg_cycles, repeats, pg_conversations))
    return rows


def _settings(conninfo: str) -> str:
    """The server's durability settings, as ``SHOW`` reports them."""
    names = ("fsync", "synchronous_commit", "full_page_writes", "wal_level", "shared_buffers", "server_version")
    return ", ".join(f"{name}={_scalar(conninfo, f'SHOW {name}')}" for name in names)


def _arguments(argv: list[str]) -> argparse.Namespace:
    """The command line (argparse: a bad argument is a usage error naming it, not a traceback)."""
    parser = argparse.ArgumentParser(description="Durable-run cost per cycle and in storage (see the module docstring).")
    parser.add_argument("sizes", nargs="*", type=int, help=f"conversation sizes in messages (default: {' '.join(map(str, SIZES))})")
    parser.add_argument("--pg-only", action="store_true", help="run only the PostgreSQL save points table")
    parser.add_argument("--cycles-pg", type=int, default=PG_CYCLES, help=f"tool cycles of the PostgreSQL loop (default {PG_CYCLES})")
    parser.add_argument("--repeats", type=int, default=5, help="interleaved rounds (default 5)")
    return parser.parse_args(argv)


if __name__ == "__main__":
    options = _arguments(sys.argv[1:])
    main(options.sizes or SIZES, repeats=options.repeats, pg_cycles=options.cycles_pg, pg_only=options.pg_only)
