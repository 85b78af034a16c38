"""bench/temporal.py runs end to end at a tiny size (no timing asserts)."""

from __future__ import annotations

import pytest

from .._bench import load_bench
from .server import DevServer


async def test_temporal_bench_runs_at_a_tiny_size(dev_server: DevServer, capsys: pytest.CaptureFixture[str]) -> None:
    bench = load_bench("temporal")
    row = await bench.main_async(2, 3, 1, dev_server.address)
    out = capsys.readouterr().out
    assert "tether/bare:" in out
    assert (row["workflows"], row["cycles"]) == (2, 3)
    assert row["bare_ms_per_cycle"] > 0 and row["tether_ms_per_cycle"] > 0
    assert row["ratio"] > 0


async def test_temporal_bench_large_state_mode_runs_at_a_tiny_size(dev_server: DevServer, capsys: pytest.CaptureFixture[str]) -> None:
    bench = load_bench("temporal")
    row = await bench.main_async(1, 4, 1, dev_server.address, state_bytes=40_000, entry_bytes=1000)
    out = capsys.readouterr().out
    assert "a state of 40,000 bytes" in out and "stored B/cycle" in out
    # The bare runs rewrite the whole ~40 KB state file at each of the 3 tool calls; Tether
    # writes the state once, then a patch of about one entry per change.
    assert row["bare_bytes_per_cycle"] == pytest.approx(3 * row["state_bytes"] / 4, rel=0.1)
    assert 0 < row["tether_bytes_per_cycle"] < row["bare_bytes_per_cycle"] / 2
    assert 0 < row["tether_max_event_bytes"] < 512 * 1024 and 0 < row["bare_max_event_bytes"] < 512 * 1024
