"""The nine behaviours where Tether followed Strands' own tests of snapshots and checkpoints
(issue 15), one test each, named by its number in the issue."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from tether import (
    Agent,
    AgentResult,
    Checkpoint,
    CheckpointError,
    CheckpointResumeError,
    PromptError,
    PromptShapeError,
    ScriptedModel,
    Snapshot,
    SnapshotError,
    SnapshotException,
    tool,
)
from tether.checkpoint import CHECKPOINT_SCHEMA_VERSION
from tether.models.scripted import tool_call
from tether.snapshot import PRESETS

MESSAGES = [{"role": "user", "content": [{"text": "hi"}]}, {"role": "assistant", "content": [{"text": "hello"}]}]


@tool(run_in_thread=False)
def add(a: int, b: int) -> int:
    """Add.

    Args:
        a: One.
        b: Other.
    """
    return a + b


def paused_checkpoint() -> dict[str, Any]:
    agent = Agent(model=ScriptedModel([tool_call("add", {"a": 1, "b": 2}, tool_use_id="t1"), "3"]), tools=[add], checkpointing=True)
    result = agent("add")
    assert result.checkpoint is not None
    return result.checkpoint.to_dict()


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"scope": "unknown"}, "Invalid snapshot scope: 'unknown'"),
        ({"schema_version": 99}, "Unsupported snapshot schema version: 99"),
        ({"schema_version": "2.0"}, "Unsupported snapshot schema version: '2.0'"),
        ({"scope": "multiAgent"}, "Expected snapshot scope 'agent'"),
    ],
)
def test_1_load_snapshot_validates_a_snapshot_object_first(change: dict[str, Any], match: str) -> None:
    agent = Agent(messages=MESSAGES, state={"k": 1})  # type: ignore[arg-type]
    snap = Snapshot({"messages": [], "state": {}}, **change)
    with pytest.raises(SnapshotException, match=match):
        agent.load_snapshot(snap)
    assert agent.messages == MESSAGES and agent.state.get() == {"k": 1}, "nothing was applied"


def test_2_cancel_before_an_invocation_cancels_the_next_one_without_a_checkpoint() -> None:
    model = ScriptedModel([tool_call("add", {"a": 1, "b": 2}, tool_use_id="t1"), "3"])
    agent = Agent(model=model, tools=[add], checkpointing=True)
    agent.cancel()
    result = agent("add")
    assert result.stop_reason == "cancelled" and result.checkpoint is None
    assert model.index == 0
    later = agent("add")  # the cancel applied to one invocation only
    assert later.stop_reason == "checkpoint"


def test_3_unknown_checkpoint_keys_are_ignored_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    data = paused_checkpoint()
    data["unknown_future_field"] = "something"
    with caplog.at_level(logging.WARNING, logger="tether.checkpoint"):
        checkpoint = Checkpoint.from_dict(data)
    assert checkpoint.position == "after_model"
    assert "unknown_future_field" in caplog.text
    agent = Agent(model=ScriptedModel(["3"]), tools=[add], checkpointing=["after_model"])
    assert agent({"checkpointResume": {"checkpoint": data}}).stop_reason == "end_turn"


def test_4_agent_result_round_trips_through_a_dict_with_its_checkpoint() -> None:
    agent = Agent(model=ScriptedModel([tool_call("add", {"a": 1, "b": 2}, tool_use_id="t1")]), tools=[add], checkpointing=True)
    result = agent("add")
    data = json.loads(json.dumps(result.to_dict()))
    assert data["type"] == "agent_result" and data["checkpoint"]["position"] == "after_model"
    again = AgentResult.from_dict(data)
    assert again.stop_reason == "checkpoint" and again.message == result.message
    assert again.checkpoint is not None and again.checkpoint.to_dict() == result.checkpoint.to_dict()  # type: ignore[union-attr]
    resumed = Agent(model=ScriptedModel(["3"]), tools=[add], checkpointing=["after_model"])
    assert resumed({"checkpointResume": {"checkpoint": again.checkpoint.to_dict()}}).text == "3"


def test_5_a_plain_string_system_prompt_in_snapshot_data_is_accepted() -> None:
    agent = Agent(system_prompt="old")
    agent.load_snapshot(
        Snapshot.from_dict({"schema_version": "1.0", "created_at": "2026-01-01T00:00:00Z", "data": {"system_prompt": "new"}})
    )
    assert agent.system_prompt == "new" and agent.system_prompt_content == [{"text": "new"}]
    agent.load_snapshot(Snapshot({"system_prompt": "newer"}))
    assert agent.system_prompt == "newer"


def test_6_checkpoint_defaults_and_round_trip() -> None:
    checkpoint = Checkpoint(position="after_model")
    assert (checkpoint.cycle_index, checkpoint.snapshot, checkpoint.app_data) == (0, {}, {})
    assert checkpoint.schema_version == CHECKPOINT_SCHEMA_VERSION == "1.0"
    full = Checkpoint(position="after_model", cycle_index=1, snapshot={"messages": []}, app_data={"workflow_id": "wf-123"})
    restored = Checkpoint.from_dict(full.to_dict())
    assert (restored.position, restored.cycle_index, restored.snapshot, restored.app_data) == (
        "after_model",
        1,
        {"messages": []},
        {"workflow_id": "wf-123"},
    )


@pytest.mark.parametrize(
    "kwargs", [{}, {"exclude": ["messages"]}, {"include": []}, {"preset": "session", "exclude": list(PRESETS["session"])}]
)
def test_7_take_snapshot_with_no_field_resolved_raises(kwargs: dict[str, Any]) -> None:
    with pytest.raises(SnapshotError, match="No snapshot fields resolved"):
        Agent().take_snapshot(**kwargs)
    assert list(Agent().take_snapshot(preset="session").data) == [
        "messages",
        "state",
        "conversation_manager_state",
        "interrupt_state",
        "model_state",
    ]


def test_8_from_dict_defaults_the_scope_and_validate_is_public() -> None:
    snap = Snapshot.from_dict({"schema_version": "1.0", "created_at": "2026-01-01T00:00:00Z", "data": {"messages": []}})
    assert snap.scope == "agent"
    snap.validate()
    snap.schema_version = "0.1"
    with pytest.raises(SnapshotError, match="Unsupported snapshot schema version"):
        snap.validate()
    snap.schema_version, snap.scope = "1.0", "elsewhere"
    with pytest.raises(SnapshotError, match="Invalid snapshot scope"):
        snap.validate()


@pytest.mark.parametrize(
    ("prompt", "strands_type", "tether_type"),
    [
        ([{"checkpointResume": {"checkpoint": {}}}, {"text": "and this"}], TypeError, PromptError),
        ([{"checkpointResume": {"checkpoint": {}}}, {"checkpointResume": {"checkpoint": {}}}], TypeError, PromptError),
        ([{"interruptResponse": {"interruptId": "i", "response": 1}}, {"text": "x"}], TypeError, PromptError),
        ({"checkpointResume": {}}, KeyError, CheckpointError),
        ([{"checkpointResume": {"cp": 1}}], KeyError, CheckpointError),
        ({"checkpointResume": "not a dict"}, KeyError, CheckpointError),
    ],
)
def test_9_malformed_resume_prompts_raise_what_strands_raises(prompt: Any, strands_type: type, tether_type: type) -> None:
    agent = Agent(model=ScriptedModel([]), checkpointing=True)
    with pytest.raises(strands_type) as info:
        agent(prompt)
    assert isinstance(info.value, tether_type)
    assert isinstance(info.value, PromptShapeError if strands_type is TypeError else CheckpointResumeError)
    assert "checkpointResume" in str(info.value) or "interruptResponse" in str(info.value)
    assert not str(info.value).startswith("'"), "a readable message, not KeyError's quoted repr"
