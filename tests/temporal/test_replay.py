"""Versioning: every stored history replays against the current workflow code.

``histories/`` holds the histories of the scenarios of ``record_histories.py`` as recorded by
each release (``r0-``: before in-doubt settling and error results for failed tools, ``r1-``:
before agent tools' calls ran as child workflows, ``r2-``: this one). A change to the loop
core or the workflow that changes the command sequence of a run in flight (an activity more
or less, a different order, a new timer) makes a replay fail here; such a change must go
behind ``workflow.patched`` (see the README's upgrade procedure).
"""

from __future__ import annotations

from temporalio.worker import Replayer

from tether.temporal.worker import workflow_runner
from tether.temporal.workflow import WORKFLOW_NAME, AgentWorkflow

from .fixtures import scheduled_activities
from .replays import HISTORIES, assert_reordering_breaks_replay, load_histories, replay


def test_the_corpus_covers_the_scenarios_of_both_releases() -> None:
    names = {path.name.split(".")[0] for path in HISTORIES.glob("*.json")}
    for scenario in ("two_tools", "hooked", "counter", "interrupt_update", "interrupt_signal", "continue_as_new"):
        assert {f"r0-{scenario}", f"r1-{scenario}"} <= names
    assert {"r0-exhausted_tool", "r1-exhausted_tool", "r1-claim_checked_state", "r1-in_doubt_reconciled", "r1-in_doubt_answered"} <= names
    assert len(list(HISTORIES.glob("*continue_as_new.*.json"))) >= 4  # several executions per chain
    assert {"r1-agent_tool", "r2-agent_tool"} <= names
    assert len(list(HISTORIES.glob("r2-agent_tool.*.json"))) == 2  # the parent's and its child workflow's


async def test_a_compensated_run_replays_with_its_undo_activities() -> None:
    (history,) = load_histories("r2-compensated.*.json")
    assert scheduled_activities(history)[-4:] == ["tether.compensation_plan", "tether.undo", "tether.undo", "tether.undo"]
    assert any(event.HasField("workflow_execution_failed_event_attributes") for event in history.events)  # after the undos
    await replay([history], AgentWorkflow)


async def test_an_agent_tool_run_recorded_before_child_workflows_replays_in_its_tool_activity() -> None:
    # r1: the child ran inside the parent's tool activity. The current code starts a child
    # workflow instead; workflow.patched keeps the old branch for this history.
    (history,) = load_histories("r1-agent_tool.*.json")
    assert "tether.run_tool" in scheduled_activities(history)
    assert not any(e.HasField("start_child_workflow_execution_initiated_event_attributes") for e in history.events)
    await replay([history], AgentWorkflow)


async def test_every_stored_history_replays_against_the_current_workflow() -> None:
    histories = load_histories()
    replayer = Replayer(workflows=[AgentWorkflow], workflow_runner=workflow_runner())
    failures: dict[str, str] = {}
    for history in histories:
        result = await replayer.replay_workflow(history, raise_on_replay_failure=False)
        if result.replay_failure is not None:
            failures[history.workflow_id] = repr(result.replay_failure)
    assert failures == {}
    assert len(histories) >= 25


async def test_a_run_failed_by_an_exhausted_tool_before_the_patch_still_replays() -> None:
    # Recorded before the tool-failures patch: the tool activity failed and so did the run. The
    # current code would give the model an error result instead; workflow.patched keeps the
    # old branch for this history, so it replays exactly as it ran.
    (history,) = load_histories("r0-exhausted_tool.*.json")
    assert any(event.HasField("workflow_execution_failed_event_attributes") for event in history.events)
    await replay([history], AgentWorkflow)


async def test_the_replay_test_catches_a_change_that_would_break_runs_in_flight() -> None:
    (history,) = load_histories("r1-two_tools.*.json")
    await assert_reordering_breaks_replay(AgentWorkflow, WORKFLOW_NAME, history)
