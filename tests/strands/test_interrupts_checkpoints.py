"""Strands interrupts and ``checkpointing=True`` with the provider, killed and started again.

Killed inside the tool whose interrupt was just answered, the same program gets the interrupt
again from its first call, answers it, and prints what the uninterrupted program prints; the call
cut off runs again with the same idempotency key. With ``checkpointing=True`` a program that resumes
every checkpoint it is handed finishes the cut-off turn with the uninterrupted result."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from .conftest import answered, kill_at, log_of, open_store, program_env, run_program


def test_killed_inside_the_answered_interrupt_tool(tmp_path: Path) -> None:
    expected = run_program("approve.py", "unused", "--plain", env=program_env(TRIP_LOG=str(tmp_path / "plain.jsonl")))
    store = str(tmp_path / "runs.db")
    log = tmp_path / "effects.jsonl"
    env = program_env(TRIP_LOG=str(log))
    kill_at("tool:transfer", ["approve.py", store], env, tmp_path / "ready")
    stored = open_store(store).load("strands.pay-1.default")
    assert stored is not None and stored.head["strands"]["turn"]["open"]

    assert run_program("approve.py", store, env=env) == expected

    assert Counter(entry["key"] for entry in log_of(log)) == {"strands.pay-1.default/tu-1": 2}  # cut off once, run once more
    steps = open_store(store).history("strands.pay-1.default")
    assert [m["toolUseId"] for step in steps if step.position == "resumed" for m in step.in_doubt] == ["tu-1"]


def test_killed_after_the_answered_interrupt_tool_was_recorded(tmp_path: Path) -> None:
    """Killed at the model call after the answered tool's result was recorded: the restarted
    program's first call gets the recorded interrupt back (same id), its answer finishes the turn
    from the record, and the tool does not run again. (The first call finished the turn instead:
    ``result.interrupts`` was None for a program written to answer once.)"""
    expected = run_program("approve.py", "unused", "--plain", env=program_env(TRIP_LOG=str(tmp_path / "plain.jsonl")))
    store = str(tmp_path / "runs.db")
    log = tmp_path / "effects.jsonl"
    env = program_env(TRIP_LOG=str(log))
    kill_at("model:1", ["approve.py", store], env, tmp_path / "ready")
    stored = open_store(store).load("strands.pay-1.default")
    assert stored is not None and stored.head["strands"]["turn"]["open"] and "tu-1" in answered(stored.messages)

    assert run_program("approve.py", store, env=env) == expected

    assert Counter(entry["key"] for entry in log_of(log)) == {"strands.pay-1.default/tu-1": 1}  # recorded: not run again
    stored = open_store(store).load("strands.pay-1.default")
    assert stored is not None and not stored.head["strands"]["turn"]["open"]


@pytest.mark.parametrize("point", ["model:0", "tool:weather", "model:1", "tool:book", "model:2"])
def test_checkpointing_with_the_session_manager_survives_a_kill(point: str, tmp_path: Path) -> None:
    expected = run_program("checkpoints.py", "unused", "sequential", "--plain", env=program_env(TRIP_LOG=str(tmp_path / "plain.jsonl")))
    store = str(tmp_path / "runs.db")
    log = tmp_path / "effects.jsonl"
    env = program_env(TRIP_LOG=str(log))
    kill_at(point, ["checkpoints.py", store, "sequential"], env, tmp_path / "ready")

    assert run_program("checkpoints.py", store, "sequential", env=env) == expected

    counts = Counter(entry["tool"] for entry in log_of(log))
    assert set(counts) == {"lookup", "weather", "book"}
    cut = point.removeprefix("tool:")
    assert all(count == (2 if tool == cut else 1) for tool, count in counts.items()), counts


@pytest.mark.parametrize("mode", ["reconcile", "interrupt"])
def test_an_in_doubt_non_idempotent_call_is_reconciled_not_rerun(mode: str, tmp_path: Path) -> None:
    expected = run_program("charge.py", "unused", mode, "--plain", env=program_env(TRIP_LOG=str(tmp_path / "plain.jsonl")))
    store = str(tmp_path / "runs.db")
    log = tmp_path / "effects.jsonl"
    env = program_env(TRIP_LOG=str(log))
    kill_at("tool:charge", ["charge.py", store, mode], env, tmp_path / "ready")

    assert run_program("charge.py", store, mode, env=env) == expected

    assert Counter(entry["key"] for entry in log_of(log)) == {"strands.shop-1.default/tu-1": 1}  # never charged twice
    steps = open_store(store).history("strands.shop-1.default")
    actions = [m["action"] for step in steps if step.position == "resumed" for m in step.in_doubt]
    assert actions == (["reconciled"] if mode == "reconcile" else ["interrupt", "answered"])
