"""Kill -9 torture of durable graph and swarm runs made of nested runs.

For every kill point of an uninterrupted run (before and after each tool's side effect, and
between a node's completion and the graph's write), a child process runs the graph and is
SIGKILLed at that point; a fresh process resumes it. The final output must equal the
uninterrupted run's, no finished model call or node is redone, and a re-run in-doubt tool
call carries the same idempotency key, and the graph run's metrics are its node runs' usage,
counted once.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from tether.durable import SQLiteStore

from .test_graph_executions import FIGURES, children_total

ROOT = Path(__file__).resolve().parents[2]


def run_worker(kind: str, db: Path, run_id: str, directory: Path, kill_at: int) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tests.multiagent.graph_worker", kind, str(db), run_id, str(directory), str(kill_at)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def keys(directory: Path, run_id: str) -> list[str]:
    """Idempotency keys of the side effects, without the graph run's id (it differs per run)."""
    return [line.split(" ", 1)[1].removeprefix(run_id) for line in lines(directory / "effects")]


def stored_messages(db: Path) -> dict[str, int]:
    """How many messages each nested run of the store had recorded (after a kill)."""
    store = SQLiteStore(db)
    try:
        out = {}
        for summary in store.list_runs():
            loaded = store.load(summary.run_id) if summary.run_id != "g" else None
            if loaded is not None:
                out[summary.run_id] = len(loaded.messages)
        return out
    finally:
        store.close()


def rolled_up(db: Path, run_id: str) -> tuple[dict[str, int], dict[str, int]]:
    """The graph run's own figures and the sum of its nested runs' (equal when every node run's
    usage was rolled up exactly once)."""
    store = SQLiteStore(db)
    try:
        own = store.head(run_id)["metrics"]  # type: ignore[index]
        return {**{key: own[key] for key in FIGURES}, "total_tokens": own["usage"]["total_tokens"]}, children_total(store, run_id)
    finally:
        store.close()


def in_flight(line: str, stored: dict[str, int]) -> bool:
    """True when model call ``line`` (``model <agent> <message count>``) had no stored response at
    the kill: a nested run of that agent had recorded no more messages than the call was given."""
    _, name, count = line.split()
    return any(run_id.split(".", 1)[1].startswith(f"{name}:") and length <= int(count) for run_id, length in stored.items())


@pytest.mark.parametrize("kind", ["graph", "swarm"])
def test_kill_anywhere_then_resume_redoes_no_finished_work(tmp_path: Path, kind: str) -> None:
    ref_dir = tmp_path / "ref"
    ref_dir.mkdir()
    reference = run_worker(kind, tmp_path / "ref.db", "ref", ref_dir, 0)
    assert reference.returncode == 0, reference.stderr
    expected = json.loads(reference.stdout)
    assert expected["status"] == "completed"
    expected_keys = sorted(keys(ref_dir, "ref"))
    expected_models = sorted(lines(ref_dir / "models"))
    own, children = rolled_up(tmp_path / "ref.db", "ref")
    assert own == children and own["model_call_count"] > 0
    total = len(lines(ref_dir / "points"))
    assert total >= 8
    in_doubt_reruns = 0
    for kill_at in range(1, total + 1):
        directory = tmp_path / f"k{kill_at}"
        directory.mkdir()
        db = directory / "runs.db"
        killed = run_worker(kind, db, "g", directory, kill_at)
        assert killed.returncode == -9, f"kill point {kill_at}: {killed.stderr}"
        stored = stored_messages(db)
        resumed = run_worker(kind, db, "g", directory, 0)
        assert resumed.returncode == 0, f"kill point {kill_at}: {resumed.stderr}"
        outcome = json.loads(resumed.stdout)
        # Parallel branches may complete in either order; everything else is exact.
        assert (outcome["status"], outcome["answer"]) == (expected["status"], expected["answer"]), f"kill point {kill_at}"
        assert sorted(outcome["order"]) == sorted(expected["order"]), f"kill point {kill_at}"
        assert (outcome["order"][0], outcome["order"][-1]) == (expected["order"][0], expected["order"][-1])
        # No finished model call is made again: the model log is the reference's, except for a
        # call in flight at the kill (logged when made; its response never stored), at most one
        # per parallel branch.
        models = Counter(lines(directory / "models"))
        assert set(models) == set(expected_models), f"kill point {kill_at}"
        redone = {line: n - expected_models.count(line) for line, n in models.items() if n != expected_models.count(line)}
        assert all(extra == 1 and in_flight(line, stored) for line, extra in redone.items()), f"kill point {kill_at}: {redone} {stored}"
        assert len(redone) <= 2, f"kill point {kill_at}: {redone}"
        effects = Counter(keys(directory, "g"))
        assert sorted(effects) == expected_keys, f"kill point {kill_at}"
        repeated = [k for k, n in effects.items() if n > 1]
        # Only calls in flight at the kill (in doubt; at most one per parallel branch) run again,
        # with the same key.
        assert len(repeated) <= 2 and all(effects[k] == 2 for k in repeated), f"kill point {kill_at}: {effects}"
        in_doubt_reruns += len(repeated)
        # the node runs' usage is in the graph run's metrics exactly once, whatever was redone
        own, children = rolled_up(db, "g")
        assert own == children, f"kill point {kill_at}: {own} != {children}"
        runs = {r.run_id: r for r in SQLiteStore(db).list_runs()}
        assert runs["g"].status == "finished"
        assert all(r.parent_run_id == "g" for rid, r in runs.items() if rid != "g")
    assert in_doubt_reruns > 0  # the torture did hit in-doubt calls
