"""bench/serve.py runs at a tiny size against a real server process and prints its figures
(never asserts on timing)."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "serve.py"

if importlib.util.find_spec("uvicorn") is None:
    pytest.skip("the serve extra is not installed", allow_module_level=True)


def test_serve_bench_runs_at_a_tiny_size(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("tether_bench_serve", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    results = module.main(3, 2, pace=0.05, stores=("sqlite",))
    out = capsys.readouterr().out
    assert "| SQLite | runs | 3 |" in out and "| SQLite | paced | 3 |" in out and "events/s" in out
    rows = results["SQLite"]
    assert set(rows) == {"runs", "replay", "fanout", "paced"}
    per_run = rows["fanout"]["events"] / 3  # every stream of the one run got every committed event
    assert per_run > 0 and rows["runs"]["events"] == rows["replay"]["events"] == 3 * per_run
    assert all(not math.isnan(rows[name]["median_ms"]) for name in ("runs", "fanout", "paced"))
    report = tmp_path / "results.md"
    report.write_text("# other results\n")
    module.write_section(report, module.table(results, 3, 2, 0.05, BENCH.parent.parent / "src"))
    module.write_section(report, module.table(results, 3, 2, 0.05, BENCH.parent.parent / "src"))  # replaced, not added
    text = report.read_text()
    assert text.startswith("# other results\n") and text.count("<!-- bench/serve.py -->") == 1
