"""Kill -9 a real Strands program at every model call and inside every tool call, then start the
same program again: it prints what the uninterrupted program (without the provider) prints, no
tool whose result was recorded runs again, and the calls cut off are flagged in doubt and run again
with the same idempotency key. Both of Strands' executors, SQLite and PostgreSQL."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from .conftest import answered, kill_at, log_of, open_store, pg_url, program_env, run_program

RUN_ID = "strands.trip-1.default"
POINTS = ["model:0", "tool:lookup", "tool:weather", "model:1", "tool:book", "model:2"]


@pytest.fixture(params=["sqlite", "postgres"])
def store_spec(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "postgres":
        return pg_url(request.getfixturevalue("pg_conninfo"))
    return str(tmp_path / "runs.db")


@pytest.mark.parametrize("executor", ["concurrent", "sequential"])
def test_kill_anywhere_then_the_same_program_finishes_the_turn(store_spec: str, executor: str, tmp_path: Path) -> None:
    plain_log = tmp_path / "plain.jsonl"
    expected = run_program("trip.py", "unused", executor, "--plain", env=program_env(TRIP_LOG=str(plain_log)))
    assert [entry["tool"] for entry in log_of(plain_log)].count("book") == 1
    for index, point in enumerate(POINTS):
        spec = store_spec
        if not spec.startswith("postgresql://"):
            spec = str(tmp_path / f"runs-{index}.db")
        else:
            store = open_store(spec)
            if store.head(RUN_ID) is not None:
                store.delete_run(RUN_ID)
            store.close()
        log = tmp_path / f"effects-{index}.jsonl"
        env = program_env(TRIP_LOG=str(log), TETHER_HOME=str(tmp_path / "home"))
        kill_at(point, ["trip.py", spec, executor], env, tmp_path / f"ready-{index}")
        store = open_store(spec)
        stored = store.load(RUN_ID)
        recorded = set() if stored is None else set(stored.results) | answered(stored.messages)
        started = set() if stored is None else set(stored.head["cursor"].get("started") or [])
        store.close()
        before = Counter(entry["key"] for entry in log_of(log))

        assert run_program("trip.py", spec, executor, env=env) == expected, point

        after = Counter(entry["key"] for entry in log_of(log))
        assert set(after) == {f"{RUN_ID}/tu-{n}" for n in (1, 2, 3)}, point
        for key, count in after.items():
            ident = key.rsplit("/", 1)[1]
            if ident in recorded or before[key] == 0:
                assert count == before[key] + (0 if ident in recorded else 1), (point, key, "a recorded call ran again")
            else:
                assert count == 2, (point, key)  # cut off inside the call: run once more, same key
        store = open_store(spec)
        steps = store.history(RUN_ID)
        flagged = {marker["toolUseId"] for step in steps if step.position == "resumed" for marker in step.in_doubt}
        store.close()
        assert flagged == started - recorded, point
        if point.startswith("tool:"):
            assert flagged, point
