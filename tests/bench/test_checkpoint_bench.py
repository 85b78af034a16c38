"""bench/checkpoint.py runs at a small size and reports sane figures (never asserts on timing)."""

from __future__ import annotations

import pytest

from .._bench import load_bench


def test_checkpoint_bench_runs_at_a_small_size(capsys: pytest.CaptureFixture[str]) -> None:
    bench = load_bench("checkpoint")
    rows = bench.main([10, 30], repeats=3)
    out = capsys.readouterr().out
    assert "round ms" in out and "overhead" in out
    assert [row["messages"] for row in rows] == [10.0, 30.0]
    for row in rows:
        assert row["round_ms"] > 0 and row["plain_ms"] > 0 and row["save_ms"] > 0 and row["load_ms"] > 0
        assert row["overhead_ms"] == pytest.approx(row["round_ms"] - row["plain_ms"])
    assert rows[1]["json_bytes"] > rows[0]["json_bytes"]  # the checkpoint carries the whole conversation
