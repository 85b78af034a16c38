"""The resume contract on Temporal (``runtime="temporal"``), on a real Temporal dev server: k updates
and k signals delivering one interrupt answer at the same instant (one update taken, the others
refused, each effect once); a worker process SIGKILLed inside tool calls, a new worker finishing
the run as the uninterrupted one (each call once, the cut-off one at most twice); the histories
replayed twice; prompts no store can keep refused before any workflow exists (checkpoint validity);
steps of a finished run forked twice with TetherClient.fork, both forks ending the same (fork
determinism), a tool that changes state outside the run caught."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.temporal.fixtures import dev_server  # noqa: F401  (the Temporal dev server)
from tests.temporal.replays import load_histories, reordered
from tests.temporal.server import DevServer
from tether.errors import TetherError
from tether.temporal.workflow import WORKFLOW_NAME, AgentWorkflow
from tether.testing import PROPERTIES, resume_contract
from tether.testing.contract_report import CONSUME, EFFECT, FORK, HOLDS, PREFIX, RECOVERY, VALIDITY, VIOLATED
from tether.testing.contract_temporal_crash import replay_twice

AGENTS = "tests.testing.contract_agents"


pytestmark = pytest.mark.usefixtures("clean_cwd")


@pytest.mark.parametrize("k", [2, 8])
def test_k_deliveries_of_one_answer_on_temporal_take_one(dev_server: DevServer, tmp_path: Path, k: int) -> None:  # noqa: F811
    report = resume_contract(
        f"{AGENTS}:booking",
        "book it",
        answers={"approve": "yes"},
        k=k,
        properties=[CONSUME],
        workdir=tmp_path,
        runtime="temporal",
        temporal=dev_server.address,
    )
    consume = report.result(CONSUME)
    assert consume.verdict == HOLDS, report.summary()
    assert f"{k} updates and {k} signals delivering one answer at once: 1 update taken, {k - 1} refused, each effect once" in consume.detail
    assert "sqlite, temporal" in report.summary()


def test_all_six_hold_for_the_sound_agent_on_temporal(dev_server: DevServer, tmp_path: Path) -> None:  # noqa: F811
    report = resume_contract(
        f"{AGENTS}:booking",
        "book it",
        answers={"approve": "yes"},
        k=2,
        points=3,
        forks=3,
        workdir=tmp_path,
        runtime="temporal",
        temporal=dev_server.address,
    )
    for name in (CONSUME, PREFIX, EFFECT, RECOVERY, FORK):
        assert report.result(name).verdict == HOLDS, report.summary()
    # booking's calls: lookup, book (asks), book (answered), record; 3 of its 8 kill points spread over them
    assert report.result(PREFIX).detail.startswith("3 worker kills inside a tool call (before and after its body)"), report.summary()
    assert report.result(EFFECT).detail.endswith("each call started once, the cut-off one at most twice with its key")
    assert "the histories of 4 runs (3 with a worker killed in a tool call) each replayed twice" in report.result(RECOVERY).detail
    # booking's steps: turn start; then after the model and after the tools of lookup, book (asks),
    # record; book's round once more when answered; the final answer
    fork = report.result(FORK).detail
    assert fork == (
        "3 of the 9 steps of the Temporal run forked twice with TetherClient.fork (new workflows beside it): every pair ended the same"
    ), report.summary()
    assert report.result(VALIDITY).verdict == HOLDS, report.summary()
    assert "each refused by TetherClient.start with a TetherError, no workflow started" in report.result(VALIDITY).detail
    assert set(PROPERTIES) == {r.name for r in report.results}
    # the kills were real: each killed run's cut-off call started twice, by two worker processes
    starts = [json.loads(line) for line in (tmp_path / "temporal" / "starts.log").read_text().splitlines()]
    killed = [s for s in starts if "-crash-" in s["key"] and "reference" not in s["key"] and not s.get("interrupted")]
    by_key: dict[str, set[int]] = {}
    for start in killed:
        by_key.setdefault(start["key"], set()).add(start["pid"])
    assert sum(1 for pids in by_key.values() if len(pids) == 2) == 3


def test_a_tool_that_changes_state_outside_the_run_breaks_fork_determinism_on_temporal(
    dev_server: DevServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    report = resume_contract(
        f"{AGENTS}:ticketing", "tickets", properties=[FORK], forks=2, workdir=tmp_path, runtime="temporal", temporal=dev_server.address
    )
    result = report.result(FORK)
    assert result.verdict == VIOLATED, report.summary()
    # step 1 (the turn's start): fork a takes ticket 2, fork b ticket 3 (the finished run took 1)
    assert result.detail == (
        "step 1 (turn_start): its two forks differ at messages[4].content[0].toolResult.content[0].text "
        "('ticket 2 for step 1' in fork a, 'ticket 3 for step 1' in fork b)"
    ), result.detail
    (export,) = result.files
    ends = json.loads(Path(export).read_text())
    assert ends["a"]["stop_reason"] == ends["b"]["stop_reason"] == "end_turn"
    assert report.workdir  # kept, with the two ends, for the user to read


def test_a_charge_run_again_after_the_worker_died_is_caught(dev_server: DevServer, tmp_path: Path) -> None:  # noqa: F811
    report = resume_contract(
        f"{AGENTS}:charging",
        "charge it",
        properties=[EFFECT, PREFIX],  # every kill point: charge and lookup, before and after their bodies
        workdir=tmp_path,
        runtime="temporal",
        temporal=dev_server.address,
    )
    effect = report.result(EFFECT)
    assert effect.verdict == VIOLATED, report.summary()
    assert "worker killed inside tool call 1 of 2 (after its body): tool call c0-charge, run again with the same key" in effect.detail
    assert "changed the run at messages[2].content[0].toolResult.content[0].text ('charged 0, receipt #1' uninterrupted," in effect.detail
    assert "'charged 0, receipt #2' after the kill): not idempotent (declare idempotent=False with a reconcile callback)" in effect.detail
    assert any(path.endswith(".json") for path in effect.files)
    assert report.result(PREFIX).verdict == HOLDS, report.summary()


def test_prompts_no_store_can_keep_are_refused_before_any_workflow_exists(dev_server: DevServer, tmp_path: Path) -> None:  # noqa: F811
    report = resume_contract(
        f"{AGENTS}:booking", "book it", properties=[VALIDITY], workdir=tmp_path, runtime="temporal", temporal=dev_server.address
    )
    result = report.result(VALIDITY)
    assert result.verdict == HOLDS, report.summary()
    assert result.detail.startswith("4 prompts no store can keep (a lone surrogate in the prompt text, ")
    assert "NaN in a content block, infinity in a content block)" in result.detail


def test_a_client_that_lets_an_invalid_prompt_through_breaks_checkpoint_validity(
    dev_server: DevServer,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tether.temporal.client import TetherClient

    def unchecked(self: TetherClient, prompt: Any) -> tuple[dict[str, Any], None]:  # a client that checks nothing
        content = [{"text": prompt}] if isinstance(prompt, str) else prompt
        return {"kind": "messages", "messages": [{"role": "user", "content": content}], "responses": []}, None

    monkeypatch.setattr(TetherClient, "_prompt", unchecked)
    report = resume_contract(
        f"{AGENTS}:booking", "book it", properties=[VALIDITY], workdir=tmp_path, runtime="temporal", temporal=dev_server.address
    )
    result = report.result(VALIDITY)
    assert result.verdict == VIOLATED, report.summary()
    assert result.detail.startswith("a lone surrogate in the prompt text: accepted by TetherClient.start: workflow 'contract-")
    assert result.detail.endswith("-validity-0' started")


def test_temporal_and_its_runtime_go_together(tmp_path: Path) -> None:
    with pytest.raises(TetherError, match="temporal='HOST:PORT' goes with runtime='temporal'"):
        resume_contract(f"{AGENTS}:booking", "book it", workdir=tmp_path, runtime="temporal")
    with pytest.raises(TetherError, match="temporal='HOST:PORT' goes with runtime='temporal'"):
        resume_contract(f"{AGENTS}:booking", "book it", workdir=tmp_path, temporal="127.0.0.1:7233")
    with pytest.raises(TetherError, match="forks=0 must be 'all' or a positive int"):  # refused before the server is asked
        resume_contract(f"{AGENTS}:booking", "book it", forks=0, workdir=tmp_path, runtime="temporal", temporal="127.0.0.1:1")


async def test_the_replay_check_catches_a_changed_workflow_and_a_changed_result() -> None:
    # The contract replays histories its own runs just recorded (the sound agent's hold above);
    # here, histories recorded by older code: a reordered workflow fails the replay, and the
    # current code's result differs from the one recorded before model latencies were rounded.
    (history,) = load_histories("r1-two_tools.*.json")
    failure = await replay_twice(history, [reordered(AgentWorkflow, WORKFLOW_NAME)])
    assert failure is not None and failure.startswith("replay 1 of its history failed") and "ondeterminism" in failure
    failure = await replay_twice(history)
    assert failure is not None and failure.startswith("replay 1 of its history returned [{")
    assert '"model_latency_ms": 0.182,' in failure and '"model_latency_ms": 0.18242899932374712,' in failure
