"""bench/temporal.py runs end to end at a tiny size (no timing asserts)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from .server import DevServer

BENCH = Path(__file__).resolve().parents[2] / "bench" / "temporal.py"


def load_bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("tether_bench_temporal", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


async def test_temporal_bench_runs_at_a_tiny_size(dev_server: DevServer, capsys: pytest.CaptureFixture[str]) -> None:
    bench = load_bench()
    row = await bench.main_async(2, 3, 1, dev_server.address)
    out = capsys.readouterr().out
    assert "tether/bare:" in out
    assert (row["workflows"], row["cycles"]) == (2, 3)
    assert row["bare_ms_per_cycle"] > 0 and row["tether_ms_per_cycle"] > 0
    assert row["ratio"] > 0
