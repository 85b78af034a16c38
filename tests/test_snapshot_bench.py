"""The snapshot benchmark keeps running (at a tiny size; timings are printed, never asserted)."""

from __future__ import annotations

import pytest

from ._bench import load_bench


def test_bench_main_runs_at_a_small_size(capsys: pytest.CaptureFixture[str]) -> None:
    bench = load_bench("snapshot", "bench_snapshot")
    rows = bench.main([3, 12], repeats=2)
    assert [row["messages"] for row in rows] == [3, 12]
    assert all(row["save_ms"] >= 0 and row["load_ms"] >= 0 and row["json_bytes"] > 0 for row in rows)
    assert all(row["dict_save_ms"] >= 0 and row["dict_load_ms"] >= 0 for row in rows)
    out = capsys.readouterr().out
    assert "save ms" in out and "load ms" in out and "JSON path" in out and "dict path" in out


def test_bench_conversation_is_realistic_and_valid() -> None:
    bench = load_bench("snapshot", "bench_snapshot")
    messages = bench.conversation(6)
    assert [m["role"] for m in messages] == ["user", "assistant", "user"] * 2
    assert "toolUse" in messages[1]["content"][1] and "toolResult" in messages[2]["content"][0]
