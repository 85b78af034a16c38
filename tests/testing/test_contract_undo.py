"""The resume contract on compensation: a run's unwinding killed at every save point and raced by
``k`` processes, on a sound agent (each undo once, newest first) and on two broken ones (a store
that forgets recorded undos, a compensation not idempotent by its undo key), caught with a
counterexample a user can read."""

from __future__ import annotations

from pathlib import Path

from tether.testing import ContractReport, resume_contract
from tether.testing.contract_report import CONSUME, EFFECT, HOLDS, PREFIX, VIOLATED

AGENTS = "tests.testing.contract_agents"


def _violated(report: ContractReport, name: str) -> str:
    result = report.result(name)
    assert result.verdict == VIOLATED, report.summary()
    assert result.files and all(Path(f).exists() for f in result.files)
    return result.detail


def test_the_unwinding_of_a_sound_agent_keeps_the_contract(tmp_path: Path) -> None:
    report = resume_contract(f"{AGENTS}:reserving", "go", properties=[PREFIX, EFFECT, CONSUME], points=4, k=4, workdir=tmp_path)
    assert [r.verdict for r in report.results] == [HOLDS] * 3, report.summary()
    assert "unwinding: 4 kills, each undo once, newest call first" in report.result(EFFECT).detail
    assert "unwinding: 4 kills resumed in a fresh process, the recorded steps kept, ended compensated" in report.result(PREFIX).detail
    consume = report.result(CONSUME).detail
    assert "the run asked nothing" in consume  # no interrupt of its own: the compensation race is what holds
    assert "unwinding: 4 processes compensated one run at once: 1 unwound it" in consume and "each undo once" in consume
    released = sorted(p.name for p in tmp_path.glob("unwind-race/scratch/*.undone"))
    assert released == ["contract_c0-reserve_undo.undone", "contract_c2-reserve_undo.undone"]  # the world: each released once


def test_a_store_that_forgets_recorded_undos_breaks_the_unwinding(tmp_path: Path) -> None:
    report = resume_contract(f"{AGENTS}:forgetful_undo", "go", properties=[EFFECT, PREFIX], points=4, workdir=tmp_path)
    detail = _violated(report, EFFECT)
    assert detail.startswith("unwinding killed after write 4: the undo of `reserve` (contract/c2-reserve/undo), recorded undone at step")
    assert detail.endswith("before the kill, ran again when the unwinding resumed (2 undos in all)")
    assert "the resumed unwinding recorded ['unwind', 'undo c2-reserve undone', 'undo c2-reserve undone'" in _violated(report, PREFIX)


def test_a_compensation_not_idempotent_by_its_undo_key_breaks_the_unwinding(tmp_path: Path) -> None:
    report = resume_contract(f"{AGENTS}:double_refund", "go", properties=[EFFECT], points=6, workdir=tmp_path)
    detail = _violated(report, EFFECT)
    assert detail == (
        "unwinding killed before write 3: the undo of `reserve` (contract/c1-reserve/undo) returned 'refund #1 for seat 1', "
        "then 'refund #2 for seat 1' when re-run in doubt with the same undo key: the compensation is not idempotent by its key"
    )


def test_a_compensation_that_raises_ends_compensation_failed_as_designed(tmp_path: Path) -> None:
    report = resume_contract(f"{AGENTS}:failing_release", "go", properties=[PREFIX], points=3, workdir=tmp_path)
    assert report.result(PREFIX).verdict == HOLDS, report.summary()
    assert "ended compensation_failed as designed (reserve_stuck (RuntimeError: the seat 0 can no longer be released) reported)" in (
        report.result(PREFIX).detail
    )
