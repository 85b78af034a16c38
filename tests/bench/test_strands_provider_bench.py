"""bench/strands_provider.py at a tiny size, in its own process (it meters the provider by wrapping
its classes): the four setups side by side, the targets, and its section of a results file
replaced in place, the other sections kept. Never asserts on timing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench" / "strands_provider.py"


def run(results: Path) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    args = ["--cycles", "2", "--sizes", "4,8", "--repeats", "1", "--results", str(results)]
    done = subprocess.run([sys.executable, str(BENCH), *args], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_four_setups_side_by_side_and_the_section_replaced(tmp_path: Path) -> None:
    results = tmp_path / "results.md"
    results.write_text("# Results\n\n<!-- bench/other.py -->\nother\n<!-- /bench/other.py -->\n")
    out = run(results)
    for size in (4, 8):
        for setup in ("none", "tether", "file", "snapshot"):
            assert f"| {size} | {setup} |" in out
    assert out.count(" -> met") + out.count(" -> NOT met") == 3
    run(results)
    text = results.read_text()
    assert text.count("<!-- bench/strands_provider.py -->") == 1 and text.count("<!-- /bench/strands_provider.py -->") == 1
    assert "<!-- bench/other.py -->\nother\n<!-- /bench/other.py -->" in text
    assert "| 8 | snapshot |" in text and "Targets (issue 43):" in text
