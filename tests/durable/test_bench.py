"""bench/durable.py runs at a small size and reports sane figures (never asserts on timing)."""

from __future__ import annotations

import os

import pytest

from .._bench import load_bench


def test_durable_bench_runs_at_a_small_size(capsys: pytest.CaptureFixture[str]) -> None:
    rows = load_bench("durable").main([10, 100], repeats=1, cycles=5, pg_cycles=20, pg_conversations=4)
    out = capsys.readouterr().out
    assert "sqlite +ms" in out and "postgres +ms" in out
    assert [row["messages"] for row in rows[:2]] == [10.0, 100.0]
    for row in rows[:2]:
        assert row["plain_ms"] > 0 and row["sqlite_ms"] > 0 and row["memory_ms"] > 0
        assert row["sqlite_bytes_per_message"] > 0
    # bytes per message do not grow with the conversation (O(n) storage)
    assert rows[1]["sqlite_bytes_per_message"] < 1.5 * rows[0]["sqlite_bytes_per_message"]
    if "postgres_ms" not in rows[0]:  # no PostgreSQL binaries or psycopg here: the column says why
        assert "skipped (" in out and os.environ.get("CI") != "true", out
        return
    rows, save_points = rows[:2], rows[2]
    for row in rows:
        assert row["postgres_ms"] > 0 and row["postgres_bytes_per_message"] > 0
    assert rows[1]["postgres_bytes_per_message"] < 1.5 * rows[0]["postgres_bytes_per_message"]
    assert "PostgreSQL save points" in out and "synchronous_commit=on" in out and "fsync=on" in out
    # two commits per tool cycle (after_model with the tool start, after_tools), one round trip each,
    # plus the invocation's lease, load, first and last writes spread over the 20 cycles
    assert 2 <= save_points["commits_per_cycle"] <= 2.6 and 2 <= save_points["round_trips_per_cycle"] <= 4, save_points
    assert save_points["wal_bytes_per_cycle"] > 0 and save_points["floor_ms"] > 0 and save_points["conversations_per_s"] > 0
