"""Durable-run overhead: per-cycle cost of SQLiteStore and MemoryStore against no store, and
bytes written per message, for conversations of 10 to 10,000 messages.

Run: ``python bench/durable.py`` (or ``python bench/durable.py 10 100`` for chosen sizes).
Target: SQLite adds <= 0.5 ms per cycle at 1,000 messages; bytes per message stay flat.
PostgreSQL: a throwaway local server is started like the tests' (``tests/durable/pg.py``: initdb +
pg_ctl, unix socket, ``synchronous_commit=off`` like SQLite's WAL + synchronous=NORMAL); its
column says "skipped" with the reason when no PostgreSQL binaries or psycopg are installed.
"""

from __future__ import annotations

import importlib.util
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from tether import Agent, tool
from tether.conversation import NullConversationManager
from tether.durable import MemoryStore, RunStore, SQLiteStore
from tether.models import ScriptedModel
from tether.models.scripted import tool_call

SIZES = (10, 100, 1000, 10000)
PG_HELPER = Path(__file__).resolve().parents[1] / "tests" / "durable" / "pg.py"


def start_postgres(stack: ExitStack) -> tuple[str | None, str]:
    """A conninfo of a throwaway PostgreSQL server (stopped by ``stack``), or None and why not."""
    try:
        import psycopg  # noqa: F401

        spec = importlib.util.spec_from_file_location("tether_bench_pg", PG_HELPER)
        assert spec is not None and spec.loader is not None
        pg = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(pg)
        server = pg.PgServer(durable=True)
        stack.callback(server.stop)
        server.start()
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


def main(
    sizes: list[int] | tuple[int, ...] = SIZES, repeats: int = 5, cycles: int = 50, postgres: str | bool = True
) -> list[dict[str, float]]:
    """Print one row per size; returns the rows. ``postgres``: True starts a throwaway server,
    a conninfo string uses that database, False leaves the column out."""
    rows = []
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
    return rows


if __name__ == "__main__":
    main([int(arg) for arg in sys.argv[1:]] or SIZES)
