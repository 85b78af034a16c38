"""The resume contract on served runs (``runtime="serve"``): two real ``tether serve`` processes on
one store, a server SIGKILLed inside each tool call, ``k`` processes racing one keyed request and
one interrupt answer. A sound agent holds on SQLite and PostgreSQL; a tool that is not idempotent is
caught with its counterexample."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tether.errors import TetherError
from tether.testing import resume_contract
from tether.testing.contract_report import CONSUME, EFFECT, FORK, HOLDS, PREFIX, RECOVERY, VALIDITY, VIOLATED

AGENTS = "tests.testing.contract_agents"


pytestmark = pytest.mark.usefixtures("clean_cwd")

APPROVE = {"approve": "yes"}


def test_a_sound_agent_holds_when_served(tmp_path: Path) -> None:
    report = resume_contract(
        f"{AGENTS}:booking", "book it", answers=APPROVE, points=2, recoveries=1, forks=3, k=4, workdir=tmp_path, runtime="serve"
    )
    assert [report.result(name).verdict for name in (PREFIX, EFFECT, CONSUME)] == [HOLDS] * 3, report.summary()
    assert "2 server kills inside a tool call (before and after its body)" in report.result(PREFIX).detail
    consume = report.result(CONSUME).detail
    assert "4 copies of one keyed request on two servers: one run, one turn" in consume
    assert "4 processes answering one interrupt on two servers: 1 accepted, 3 refused" in consume
    assert report.result(FORK).verdict == HOLDS, report.summary()
    assert "3 steps of the served run forked twice over POST /runs/{id}/fork" in report.result(FORK).detail
    assert report.result(VALIDITY).verdict == HOLDS, report.summary()
    assert "each a 4xx JSON refusal, nothing stored changed" in report.result(VALIDITY).detail
    assert report.result(RECOVERY).verdict == HOLDS, report.summary()
    assert "copied twice byte for byte and taken over by a fresh server: the same run" in report.result(RECOVERY).detail
    assert "sqlite, served" in report.summary()


def test_a_served_tool_that_is_not_idempotent_breaks_effect_exactly_once(tmp_path: Path) -> None:
    report = resume_contract(f"{AGENTS}:charging", "charge", properties=[EFFECT], workdir=tmp_path, runtime="serve")
    result = report.result(EFFECT)
    assert result.verdict == VIOLATED, report.summary()
    first = "server killed inside tool call 1 of 2 (after its body): tool call c0-charge, re-run in doubt with the same key"
    assert result.detail.startswith(first)
    assert "not idempotent" in result.detail and all(Path(f).exists() for f in result.files)


def test_a_served_tool_that_changes_state_outside_the_run_breaks_fork_determinism(tmp_path: Path) -> None:
    report = resume_contract(f"{AGENTS}:ticketing", "tickets", properties=[FORK], workdir=tmp_path, runtime="serve")
    result = report.result(FORK)
    assert result.verdict == VIOLATED, report.summary()
    assert result.detail.startswith("step 1: its two forks (served) differ at messages"), result.detail
    first, second = (json.loads(Path(f).read_text()) for f in result.files)
    assert first["messages"] != second["messages"] and first["status"] == second["status"] == "finished"


def test_eight_processes_racing_one_request_and_one_answer_on_postgresql(pg_url: str, tmp_path: Path) -> None:
    report = resume_contract(
        f"{AGENTS}:booking", "book it", store=pg_url, answers=APPROVE, properties=[CONSUME], k=8, workdir=tmp_path, runtime="serve"
    )
    assert report.result(CONSUME).verdict == HOLDS, report.summary()
    assert "8 processes answering one interrupt on two servers: 1 accepted, 7 refused" in report.result(CONSUME).detail


def test_an_unknown_runtime_is_refused(tmp_path: Path) -> None:
    with pytest.raises(TetherError, match="runtime='lambda': choose from local, serve, temporal"):
        resume_contract(f"{AGENTS}:booking", "book it", workdir=tmp_path, runtime="lambda")


def test_served_copies_that_recover_differently_break_recovery_determinism(tmp_path: Path) -> None:
    """``diverging`` claims an idempotent quote but prices it at random: two copies of the store
    crashed inside the quote, each taken over by a fresh server, end with two prices."""
    report = resume_contract(f"{AGENTS}:diverging", "quote", properties=[RECOVERY], recoveries=4, workdir=tmp_path, runtime="serve")
    result = report.result(RECOVERY)
    assert result.verdict == VIOLATED, report.summary()
    assert "two copies recovered differently at messages" in result.detail and all(Path(f).exists() for f in result.files)
