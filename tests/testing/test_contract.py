"""The resume contract on a sound agent (all six properties hold, on SQLite and PostgreSQL) and
on an agent broken for each property (the contract catches it with a counterexample)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tether.errors import ContractViolationError, TetherError
from tether.testing import PROPERTIES, ContractReport, resume_contract
from tether.testing.contract_report import CONSUME, EFFECT, FORK, HOLDS, NOT_APPLICABLE, PREFIX, RECOVERY, VALIDITY, VIOLATED

AGENTS = "tests.testing.contract_agents"
APPROVE = {"approve": "yes"}


def _violated(report: ContractReport, name: str) -> str:
    result = report.result(name)
    assert result.verdict == VIOLATED, report.summary()
    assert result.files and all(Path(f).exists() for f in result.files)
    return result.detail


def test_every_property_holds_for_a_sound_agent_that_asks(tmp_path: Path) -> None:
    report = resume_contract(f"{AGENTS}:booking", "book it", answers=APPROVE, points=8, forks=4, recoveries=2, k=4, workdir=tmp_path)
    assert [r.name for r in report.results] == list(PROPERTIES)
    assert [r.verdict for r in report.results] == [HOLDS] * 6, report.summary()
    assert report.raise_for_violations() is report
    assert "4 processes answered one interrupt at once: 1 proceeded, 3 refused" in report.result(CONSUME).detail
    assert report.result(EFFECT).cases == 8 + 2  # crash points + racing resumes
    assert report.result(EFFECT).detail.endswith("; unwinding: no tool declares a compensation (compensate=), nothing to undo")


def test_consume_once_is_not_applicable_to_a_run_that_asks_nothing(tmp_path: Path) -> None:
    report = resume_contract("tests.testing.agents:sound", "go", properties=[CONSUME], workdir=tmp_path)
    assert report.ok and report.result(CONSUME).verdict == NOT_APPLICABLE
    assert "asked nothing" in report.result(CONSUME).detail


def test_a_tool_that_is_not_idempotent_breaks_effect_exactly_once(tmp_path: Path) -> None:
    report = resume_contract(f"{AGENTS}:charging", "charge", properties=[EFFECT], points=4, workdir=tmp_path)
    detail = _violated(report, EFFECT)
    assert "tool `charge` returned a different result when re-run in doubt" in detail
    assert detail.startswith(("before write", "after write"))  # the smallest counterexample: its crash point
    with pytest.raises(ContractViolationError, match="effect exactly-once"):
        report.raise_for_violations()


def test_a_tool_that_changes_state_outside_the_run_breaks_fork_determinism(tmp_path: Path) -> None:
    report = resume_contract(f"{AGENTS}:ticketing", "tickets", properties=[FORK], workdir=tmp_path)
    detail = _violated(report, FORK)
    assert detail.startswith("step 1: its two forks differ at messages")
    first, second = (json.loads(Path(f).read_text()) for f in report.result(FORK).files)
    assert first["messages"] != second["messages"]


def test_two_copies_of_a_crashed_store_that_recover_differently_break_recovery_determinism(tmp_path: Path) -> None:
    report = resume_contract(f"{AGENTS}:diverging", "quote", properties=[RECOVERY], recoveries=4, workdir=tmp_path)
    detail = _violated(report, RECOVERY)
    assert "two byte-identical copies of the crashed store recovered differently at messages" in detail


def test_a_state_that_takes_anything_breaks_checkpoint_validity(tmp_path: Path) -> None:
    report = resume_contract(f"{AGENTS}:loose_state", "book it", answers=APPROVE, properties=[VALIDITY], workdir=tmp_path)
    assert "state value an object was accepted" in _violated(report, VALIDITY)


def test_a_run_lock_that_lets_everyone_in_breaks_consume_once(tmp_path: Path) -> None:
    report = resume_contract(f"{AGENTS}:unlocked_booking", "book it", answers=APPROVE, properties=[CONSUME], k=4, workdir=tmp_path)
    detail = _violated(report, CONSUME)
    assert "4 processes answered one interrupt" in detail
    assert "proceeded (must be 1)" in detail or "a tool started" in detail


def test_a_store_that_forgets_what_it_stored_breaks_prefix_continuation(tmp_path: Path) -> None:
    report = resume_contract(f"{AGENTS}:rewriting", "go", properties=[PREFIX], points=4, workdir=tmp_path)
    detail = _violated(report, PREFIX)
    assert detail.startswith(("before write", "after write"))  # the crash point
    assert "differs from the reference at messages" in detail or "the run state is inconsistent" in detail


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"properties": ["speed"]}, "choose from prefix continuation"),
        ({"k": 1}, "k=1 must be an int >= 2"),
        ({"store": "mysql://x"}, "must be 'sqlite' or a postgresql:// URL"),
    ],
)
def test_bad_arguments_are_refused_before_any_run(tmp_path: Path, options: dict[str, object], match: str) -> None:
    with pytest.raises(TetherError, match=match):
        resume_contract(f"{AGENTS}:booking", "book it", workdir=tmp_path, **options)  # type: ignore[arg-type]
    assert list(tmp_path.iterdir()) == []


def test_a_reference_run_that_asks_without_answers_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(TetherError, match="pass answers= for its interrupts"):
        resume_contract(f"{AGENTS}:booking", "book it", properties=[FORK], workdir=tmp_path)


@pytest.mark.parametrize("k", [2, 8, 32])
def test_consume_once_on_postgresql_with_k_processes(pg_url: str, tmp_path: Path, k: int) -> None:
    """The paper's concurrent case: k processes resuming one parked interrupt fire its effect once."""
    report = resume_contract(f"{AGENTS}:booking", "book it", store=pg_url, answers=APPROVE, properties=[CONSUME], k=k, workdir=tmp_path)
    assert report.result(CONSUME).verdict == HOLDS, report.summary()
    assert f"{k} processes answered one interrupt at once: 1 proceeded, {k - 1} refused" in report.result(CONSUME).detail


def test_every_property_holds_on_postgresql(pg_url: str, tmp_path: Path) -> None:
    report = resume_contract(
        f"{AGENTS}:booking", "book it", store=pg_url, answers=APPROVE, points=4, forks=2, recoveries=1, k=3, workdir=tmp_path
    )
    assert [r.verdict for r in report.results] == [HOLDS] * 6, report.summary()


def test_the_cli_prints_each_property_and_fails_on_a_violation(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "tether", "contract", f"{AGENTS}:ticketing", "tickets", "--properties", "fork determinism"]
    done = subprocess.run([*command, "--workdir", str(tmp_path), "--json"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stderr
    data = json.loads(done.stdout)
    assert data["ok"] is False and data["results"][0]["verdict"] == VIOLATED
    sound = [
        sys.executable,
        "-m",
        "tether",
        "contract",
        "tests.testing.agents:sound",
        "go",
        "--properties",
        "consume-once,fork determinism",
    ]
    done = subprocess.run([*sound, "--forks", "2", "--workdir", str(tmp_path / "sound")], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "fork determinism" in done.stdout and "holds" in done.stdout and "not applicable" in done.stdout
