"""Every example in examples/ runs to completion (so the docs cannot rot)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = sorted((Path(__file__).resolve().parent.parent / "examples").glob("*.py"))


def test_there_are_examples() -> None:
    assert EXAMPLES, "examples/ should hold at least one runnable example"


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_runs(path: Path, tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, str(path)], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip(), "an example should print what it did"


def test_quickstart_answer() -> None:
    sys.path.insert(0, str(EXAMPLES[0].parent))
    try:
        import quickstart

        assert quickstart.main() == "12 * 34 + 5 = 413."
    finally:
        sys.path.pop(0)
