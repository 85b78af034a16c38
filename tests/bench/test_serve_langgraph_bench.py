"""bench/serve_langgraph.py at a tiny size, Tether only (the LangGraph peer needs its own
environment, built by the script itself; the real comparison is the script's run), and its SSE
reader on LangGraph's event layout (``id:`` after ``data:``). Never asserts on timing."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "serve_langgraph.py"

if importlib.util.find_spec("uvicorn") is None:
    pytest.skip("the serve extra is not installed", allow_module_level=True)


def load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("tether_bench_serve_langgraph", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_tether_side_runs_at_a_tiny_size(capsys: pytest.CaptureFixture[str]) -> None:
    module = load()
    results = module.main([2, 3], cycles=2, stores=("sqlite",), peer=False)
    out = capsys.readouterr().out
    rows = results["Tether (SQLite)"]
    assert set(rows) == {2, 3}
    per_run = rows[2]["events"] / 2
    assert per_run > 0 and rows[3]["events"] == 3 * per_run  # every run's committed events, each once
    assert len(rows[3]["first"]) == 3 and len(rows[3]["again"]) == 3  # a first event and a reconnect per run
    assert rows[3]["cpu_ms_per_run"] >= 0
    assert "| Tether (SQLite) | 3 |" in out and "CPUs (nproc)" in out and "not evaluated" in out


class FakeResponse:
    def __init__(self, lines: list[str]) -> None:
        self.lines = lines

    def raise_for_status(self) -> None:
        return None

    async def aiter_lines(self) -> AsyncIterator[str]:
        for line in self.lines:
            yield line


def test_reader_counts_langgraph_updates_with_their_id_after_the_data() -> None:
    module = load()
    lines = ["event: metadata", "data: {}", "id: 1-0", ""]
    for i in range(3):
        lines += ["event: updates", "data: {}", f"id: {i + 2}-0", ""]
    first: list[float] = []
    first_id, count = asyncio.run(module.sse(FakeResponse(lines), "langgraph", first, 0.0))
    assert (first_id, count, len(first)) == ("2-0", 3, 1)  # the metadata event is not a committed one
