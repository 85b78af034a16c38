"""bench/inspector.py runs at a small size and prints its figures (never asserts on timing)."""

from __future__ import annotations

import pytest

from .._bench import load_bench


def test_inspector_bench_runs_at_a_small_size(capsys: pytest.CaptureFixture[str]) -> None:
    load_bench("inspector").main([40])
    out = capsys.readouterr().out
    assert "render_html" in out and "Chromium load+first render" in out
    assert "     40 msgs" in out and "DOM rows" in out
