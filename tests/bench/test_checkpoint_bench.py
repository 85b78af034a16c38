"""bench/checkpoint.py runs at a small size and reports sane figures (never asserts on timing)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "checkpoint.py"


def load_bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("tether_bench_checkpoint", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_checkpoint_bench_runs_at_a_small_size(capsys: pytest.CaptureFixture[str]) -> None:
    bench = load_bench()
    rows = bench.main([10, 30], repeats=3)
    out = capsys.readouterr().out
    assert "round ms" in out and "overhead" in out
    assert [row["messages"] for row in rows] == [10.0, 30.0]
    for row in rows:
        assert row["round_ms"] > 0 and row["plain_ms"] > 0 and row["save_ms"] > 0 and row["load_ms"] > 0
        assert row["overhead_ms"] == pytest.approx(row["round_ms"] - row["plain_ms"])
    assert rows[1]["json_bytes"] > rows[0]["json_bytes"]  # the checkpoint carries the whole conversation
