"""The resume contract on the project's own examples: ``examples/crashtest_agent.py`` (a booking
and a non-idempotent confirmation with ``reconcile``) and ``examples/checkpoints_interrupts.py`` (a
refund that asks a person, with checkpointing), and ``examples/compensation.py`` (a trip booking
whose three tools declare compensations: its unwinding killed at every save point), locally on SQLite and on PostgreSQL, served, and
on Temporal (all six). Every property holds or is not applicable with its reason.

The examples found two defects, both fixed: the contract's children stopped at a checkpoint pause
as if the run had ended (every property of a checkpointing agent was wrong), and a served run
paused at a checkpoint was a dead end (``POST /runs/{id}/retry`` refused ``paused``)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.temporal.fixtures import dev_server  # noqa: F401  (the Temporal dev server)
from tests.temporal.server import DevServer
from tether.testing import PROPERTIES, ContractReport, resume_contract
from tether.testing.contract_report import CONSUME, EFFECT, HOLDS, NOT_APPLICABLE, PREFIX

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CASES = {"crashtest_agent:make_agent": None, "checkpoints_interrupts:new_agent": {"approve_refund": "yes"}}


@pytest.fixture(autouse=True)
def examples_importable(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.syspath_prepend(str(EXAMPLES))
    monkeypatch.chdir(EXAMPLES)  # the contract's children import the factory from the current directory
    before = sorted(EXAMPLES.rglob("*"))
    yield
    assert [p for p in sorted(EXAMPLES.rglob("*")) if "__pycache__" not in p.parts] == [
        p for p in before if "__pycache__" not in p.parts
    ]  # the agents' effects went to the check's scratch directories, not where it was started
    for name in ("crashtest_agent", "checkpoints_interrupts", "compensation"):
        sys.modules.pop(name, None)


def _sound(report: ContractReport, *, asks: bool) -> None:
    for name in PROPERTIES:
        verdict = report.result(name).verdict
        expected = HOLDS if name != CONSUME or asks else NOT_APPLICABLE
        assert verdict in (expected, NOT_APPLICABLE) if report.runtime != "local" else verdict == expected, report.summary()


@pytest.mark.parametrize("factory", sorted(CASES))
def test_the_examples_keep_the_contract_on_sqlite(factory: str, tmp_path: Path) -> None:
    answers = CASES[factory]
    report = resume_contract(factory, "go", answers=answers, points=4, forks=2, recoveries=1, k=4, workdir=tmp_path)
    _sound(report, asks=answers is not None)


def test_the_compensation_example_keeps_the_contract_with_its_unwinding_on_sqlite(tmp_path: Path) -> None:
    report = resume_contract(
        "compensation:contract_agent", "Book me three nights in Lisbon", points=6, forks=1, recoveries=1, k=4, workdir=tmp_path
    )
    assert [r.verdict for r in report.results] == [HOLDS] * len(PROPERTIES), report.summary()  # consume-once: the compensation race
    assert "unwinding: 6 kills, each undo once, newest call first" in report.result(EFFECT).detail
    assert "unwinding: 4 processes compensated one run at once: 1 unwound it" in report.result(CONSUME).detail


def test_the_compensation_example_keeps_its_unwinding_on_postgresql(pg_url: str, tmp_path: Path) -> None:
    report = resume_contract(
        "compensation:contract_agent", "go", store=pg_url, properties=[PREFIX, EFFECT, CONSUME], points=4, k=4, workdir=tmp_path
    )
    assert [r.verdict for r in report.results] == [HOLDS] * 3, report.summary()
    assert "unwinding: 4 kills resumed in a fresh process, the recorded steps kept, ended compensated" in report.result(PREFIX).detail


def test_the_asking_example_keeps_the_contract_on_postgresql(pg_url: str, tmp_path: Path) -> None:
    answers = CASES["checkpoints_interrupts:new_agent"]
    report = resume_contract(
        "checkpoints_interrupts:new_agent", "go", store=pg_url, answers=answers, points=3, forks=1, recoveries=1, k=8, workdir=tmp_path
    )
    _sound(report, asks=True)


def test_the_asking_example_keeps_the_contract_when_served(tmp_path: Path) -> None:
    answers = CASES["checkpoints_interrupts:new_agent"]
    report = resume_contract("checkpoints_interrupts:new_agent", "go", answers=answers, points=3, k=4, workdir=tmp_path, runtime="serve")
    _sound(report, asks=True)
    assert report.result(CONSUME).verdict == HOLDS and report.result("effect exactly-once").verdict == HOLDS


def test_the_asking_example_keeps_the_contract_on_temporal(dev_server: DevServer, tmp_path: Path) -> None:  # noqa: F811
    answers = CASES["checkpoints_interrupts:new_agent"]
    report = resume_contract(
        "checkpoints_interrupts:new_agent",
        "go",
        answers=answers,
        k=8,
        points=3,
        forks=2,
        workdir=tmp_path,
        runtime="temporal",
        temporal=dev_server.address,
    )
    _sound(report, asks=True)
    for name in PROPERTIES:  # all six, fork determinism by TetherClient.fork
        assert report.result(name).verdict == HOLDS, report.summary()
