"""Every example in examples/ runs to completion (so the docs cannot rot), and leaves nothing behind."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = sorted((Path(__file__).resolve().parent.parent / "examples").glob("*.py"))


def test_there_are_examples() -> None:
    assert EXAMPLES, "examples/ should hold at least one runnable example"


def tree(folder: Path) -> set[str]:
    """The files and directories under ``folder`` (bytecode caches aside: Python writes them on import)."""
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if "__pycache__" not in p.parts}


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_runs(path: Path, tmp_path: Path) -> None:
    """It runs, prints what it did, and writes nothing into the directory it is run from (a user
    runs ``python examples/x.py`` from the repository root) nor into examples/: only into the
    system's temporary directory (here a fresh one, through ``TMPDIR``)."""
    cwd, scratch = tmp_path / "cwd", tmp_path / "tmp"
    cwd.mkdir()
    scratch.mkdir()
    before = tree(path.parent)
    env = {**os.environ, "TMPDIR": str(scratch)}
    proc = subprocess.run([sys.executable, str(path)], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip(), "an example should print what it did"
    assert tree(cwd) == set(), f"{path.name} left files in the directory it was run from"
    assert tree(path.parent) == before, f"{path.name} changed examples/: {sorted(tree(path.parent) ^ before)}"


def test_quickstart_answer() -> None:
    sys.path.insert(0, str(EXAMPLES[0].parent))
    try:
        import quickstart

        assert quickstart.main() == "12 * 34 + 5 = 413."
    finally:
        sys.path.pop(0)
