"""Checkpoints: pausing at cycle boundaries, the Checkpoint data shape, and resuming from it."""

from __future__ import annotations

import json
from typing import Any

import pydantic
import pytest

import tether
import tether.checkpoint as checkpoint_module
from tether import Agent, Checkpoint, CheckpointError, ConfigurationError, PromptError, ScriptedModel, TetherError, tool
from tether.checkpoint import CHECKPOINT_SCHEMA_VERSION
from tether.models.scripted import tool_call, tool_calls
from tether.tools.base import Tool

from ._json_paths import json_paths


def adder(log: list[tuple[int, int]]) -> Tool:
    """``add(a, b)`` that records every call in ``log``."""

    @tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        log.append((a, b))
        return a + b

    return add


def counting_script(cycles: int) -> list[Any]:
    """``cycles`` cycles each calling ``add(i, i)``, then a final answer."""
    return [tool_call("add", {"a": i, "b": i}) for i in range(cycles)] + ["done"]


def resume_fresh(data: dict[str, Any], script: list[Any], log: list[tuple[int, int]], **kwargs: Any) -> tuple[Agent, tether.AgentResult]:
    """A brand-new agent (fresh model, fresh tools) resuming ``data`` after a JSON round trip."""
    agent = Agent(model=ScriptedModel(script, stateful=True), tools=[adder(log)], checkpointing=kwargs.pop("checkpointing", True))
    payload = json.loads(json.dumps(data))
    return agent, agent({"checkpointResume": {"checkpoint": payload}}, **kwargs)


# -- the public surface -------------------------------------------------------------------


def test_checkpoint_and_error_are_reexported() -> None:
    assert tether.Checkpoint is Checkpoint
    assert tether.CheckpointError is CheckpointError
    assert issubclass(CheckpointError, TetherError)
    assert issubclass(CheckpointError, ValueError)


def test_first_call_pauses_after_model_with_a_self_contained_checkpoint() -> None:
    log: list[tuple[int, int]] = []
    agent = Agent(model=ScriptedModel(counting_script(1), stateful=True), tools=[adder(log)], checkpointing=True, system_prompt="Be brief.")
    result = agent("add things")
    assert result.stop_reason == "checkpoint"
    cp = result.checkpoint
    assert isinstance(cp, Checkpoint)
    assert (cp.position, cp.cycle_index, cp.schema_version) == ("after_model", 0, CHECKPOINT_SCHEMA_VERSION)
    assert log == []  # the tools have not run
    data = cp.snapshot["data"]
    assert set(data) == {"messages", "state", "conversation_manager_state", "interrupt_state", "system_prompt", "model_state"}
    assert data["system_prompt"] == [{"text": "Be brief."}]
    assert data["model_state"] == {"scripted_index": 1}
    assert data["messages"][-1]["content"][0]["toolUse"]["name"] == "add"
    assert result.message == data["messages"][-1]
    d = cp.to_dict()
    assert json.loads(json.dumps(d)) == d
    assert set(d) == {"schema_version", "position", "cycle_index", "snapshot", "app_data", "metrics", "output_tool", "manifest"}


def test_turn_without_tools_ends_normally_without_checkpoint() -> None:
    agent = Agent(model=ScriptedModel(["hello"]), checkpointing=True)
    result = agent("hi")
    assert result.stop_reason == "end_turn"
    assert result.checkpoint is None
    assert result.text == "hello"


def test_full_run_pauses_twice_per_cycle_and_matches_the_uninterrupted_run() -> None:
    script = counting_script(3)
    plain_log: list[tuple[int, int]] = []
    plain = Agent(model=ScriptedModel(script), tools=[adder(plain_log)])
    assert plain("go").stop_reason == "end_turn"

    log: list[tuple[int, int]] = []
    agent = Agent(model=ScriptedModel(script, stateful=True), tools=[adder(log)], checkpointing=True)
    result = agent("go")
    seen: list[tuple[str, int]] = []
    while result.stop_reason == "checkpoint":
        assert result.checkpoint is not None
        seen.append((result.checkpoint.position, result.checkpoint.cycle_index))
        agent, result = resume_fresh(result.checkpoint.to_dict(), script, log)
    assert result.stop_reason == "end_turn"
    assert seen == [(p, c) for c in range(3) for p in ("after_model", "after_tools")]
    assert log == plain_log == [(0, 0), (1, 1), (2, 2)]
    assert agent.messages == plain.messages


def test_resume_after_model_runs_pending_tools_without_calling_the_model() -> None:
    log: list[tuple[int, int]] = []
    model = ScriptedModel(counting_script(1), stateful=True)
    model.record_requests = True
    agent = Agent(model=model, tools=[adder(log)], checkpointing=True)
    cp = agent("go").checkpoint
    assert cp is not None and len(model.calls) == 1

    fresh_model = ScriptedModel(counting_script(1), stateful=True)
    fresh_model.record_requests = True
    fresh = Agent(model=fresh_model, tools=[adder(log)], checkpointing=True)
    result = fresh({"checkpointResume": {"checkpoint": cp.to_dict()}})
    assert result.stop_reason == "checkpoint"
    assert result.checkpoint is not None and result.checkpoint.position == "after_tools"
    assert fresh_model.calls == []  # tools ran, the model was not asked again
    assert log == [(0, 0)]


def test_resume_after_tools_calls_the_model_next() -> None:
    log: list[tuple[int, int]] = []
    agent = Agent(model=ScriptedModel(counting_script(1), stateful=True), tools=[adder(log)], checkpointing=["after_tools"])
    first = agent("go")
    assert first.checkpoint is not None and first.checkpoint.position == "after_tools"
    model = ScriptedModel(counting_script(1), stateful=True)
    model.record_requests = True
    fresh = Agent(model=model, tools=[adder(log)], checkpointing=["after_tools"])
    result = fresh([{"checkpointResume": {"checkpoint": first.checkpoint.to_dict()}}])  # the list form
    assert result.stop_reason == "end_turn"
    assert result.text == "done"
    assert len(model.calls) == 1
    assert log == [(0, 0)]  # the tool is not re-run


def test_result_message_at_after_tools_is_the_assistant_message_whose_tools_ran() -> None:
    log: list[tuple[int, int]] = []
    agent = Agent(model=ScriptedModel([tool_calls([("add", {"a": 1, "b": 2}), ("add", {"a": 3, "b": 4})]), "ok"]), tools=[adder(log)])
    agent.checkpointing = frozenset({"after_tools"})
    result = agent("go")
    assert result.stop_reason == "checkpoint"
    assert result.message is not None and result.message["role"] == "assistant"
    ids = [block["toolUse"]["toolUseId"] for block in result.message["content"] if "toolUse" in block]
    last = result.checkpoint.snapshot["data"]["messages"][-1] if result.checkpoint else None
    assert last is not None and last["role"] == "user"
    assert [block["toolResult"]["toolUseId"] for block in last["content"]] == ids
    assert [block["toolResult"]["content"] for block in last["content"]] == [[{"json": 3}], [{"json": 7}]]


@pytest.mark.parametrize(
    ("checkpointing", "expected"),
    [
        (["after_tools"], [("after_tools", 0), ("after_tools", 1)]),
        ("after_model", [("after_model", 0), ("after_model", 1)]),
        (True, [("after_model", 0), ("after_tools", 0), ("after_model", 1), ("after_tools", 1)]),
    ],
)
def test_checkpointing_can_name_the_positions(checkpointing: Any, expected: list[tuple[str, int]]) -> None:
    log: list[tuple[int, int]] = []
    script = counting_script(2)
    agent = Agent(model=ScriptedModel(script, stateful=True), tools=[adder(log)], checkpointing=checkpointing)
    result = agent("go")
    seen = []
    while result.checkpoint is not None:
        seen.append((result.checkpoint.position, result.checkpoint.cycle_index))
        agent, result = resume_fresh(result.checkpoint.to_dict(), script, log, checkpointing=checkpointing)
    assert seen == expected
    assert result.stop_reason == "end_turn"
    assert log == [(0, 0), (1, 1)]


def test_unknown_checkpoint_position_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="after_lunch"):
        Agent(checkpointing=["after_lunch"])


def test_metrics_accumulate_across_resumes() -> None:
    log: list[tuple[int, int]] = []
    script = counting_script(2)
    agent = Agent(model=ScriptedModel(script, stateful=True), tools=[adder(log)], checkpointing=["after_tools"])
    first = agent("go")
    assert (first.metrics.cycle_count, first.metrics.tool_call_count, first.metrics.usage["total_tokens"]) == (1, 1, 15)
    assert first.checkpoint is not None
    _, second = resume_fresh(first.checkpoint.to_dict(), script, log, checkpointing=["after_tools"])
    assert (second.metrics.cycle_count, second.metrics.tool_call_count, second.metrics.usage["total_tokens"]) == (2, 2, 30)
    invocation = second.metrics.invocation
    assert (invocation.cycle_count, invocation.tool_call_count, invocation.usage["total_tokens"]) == (1, 1, 15)
    assert second.checkpoint is not None
    _, last = resume_fresh(second.checkpoint.to_dict(), script, log, checkpointing=["after_tools"])
    assert last.stop_reason == "end_turn"
    assert (last.metrics.cycle_count, last.metrics.tool_call_count, last.metrics.model_call_count) == (3, 2, 3)
    assert last.metrics.usage == {"input_tokens": 30, "output_tokens": 15, "total_tokens": 45}
    assert last.metrics.tool_metrics["add"]["calls"] == 2
    assert (last.metrics.invocation.cycle_count, last.metrics.invocation.tool_call_count) == (1, 0)


def test_model_state_travels_so_a_fresh_stateful_model_continues_its_script() -> None:
    script = [tool_call("add", {"a": 1, "b": 1}), "first answer", "second answer"]
    log: list[tuple[int, int]] = []
    agent = Agent(model=ScriptedModel(script, stateful=True), tools=[adder(log)], checkpointing=["after_tools"])
    cp = agent("go").checkpoint
    assert cp is not None and cp.snapshot["data"]["model_state"] == {"scripted_index": 1}
    _, result = resume_fresh(cp.to_dict(), script, log, checkpointing=["after_tools"])
    assert result.text == "first answer"  # not the script's first item again


def test_fifty_cycles_driven_by_json_round_trips_equal_the_plain_run() -> None:
    script = counting_script(50)
    plain_log: list[tuple[int, int]] = []
    plain = Agent(model=ScriptedModel(script), tools=[adder(plain_log)])
    plain_result = plain("count")
    assert plain_result.stop_reason == "end_turn"

    log: list[tuple[int, int]] = []
    agent = Agent(model=ScriptedModel(script, stateful=True), tools=[adder(log)], checkpointing=True)
    result = agent("count")
    rounds = 0
    while result.stop_reason == "checkpoint":
        assert result.checkpoint is not None
        text = json.dumps(result.checkpoint.to_dict())
        agent, result = resume_fresh(json.loads(text), script, log)
        rounds += 1
    assert rounds == 100
    assert result.stop_reason == "end_turn"
    assert agent.messages == plain.messages
    assert log == plain_log
    assert result.metrics.cycle_count == plain_result.metrics.cycle_count == 51
    assert result.metrics.tool_call_count == 50
    assert result.metrics.usage == plain_result.metrics.usage


# -- resume errors ------------------------------------------------------------------------


def test_resume_on_an_agent_without_checkpointing_is_refused() -> None:
    log: list[tuple[int, int]] = []
    cp = Agent(model=ScriptedModel(counting_script(1), stateful=True), tools=[adder(log)], checkpointing=True)("go").checkpoint
    assert cp is not None
    target = Agent(model=ScriptedModel(counting_script(1), stateful=True), tools=[adder(log)])
    with pytest.raises(CheckpointError, match="checkpointing=False"):
        target({"checkpointResume": {"checkpoint": cp.to_dict()}})
    assert target.messages == []


def test_resume_block_without_checkpoint_is_refused() -> None:
    agent = Agent(model=ScriptedModel(["x"]), checkpointing=True)
    with pytest.raises(CheckpointError, match="checkpoint"):
        agent({"checkpointResume": {}})
    with pytest.raises(PromptError, match="only block"):
        agent([{"checkpointResume": {"checkpoint": {}}}, {"text": "and more"}])


def test_a_bad_checkpoint_leaves_the_agent_unchanged() -> None:
    log: list[tuple[int, int]] = []
    agent = Agent(model=ScriptedModel(counting_script(2), stateful=True), tools=[adder(log)], checkpointing=True)
    cp = agent("go").checkpoint
    assert cp is not None
    before = json.dumps(agent.take_snapshot(preset="all").data)
    broken = cp.to_dict()
    broken["position"] = "sideways"
    with pytest.raises(CheckpointError, match="position"):
        agent({"checkpointResume": {"checkpoint": broken}})
    assert json.dumps(agent.take_snapshot(preset="all").data) == before


# -- Checkpoint.from_dict validation ------------------------------------------------------


@pytest.fixture
def checkpoint_dict() -> dict[str, Any]:
    log: list[tuple[int, int]] = []
    agent = Agent(model=ScriptedModel(counting_script(1), stateful=True), tools=[adder(log)], checkpointing=True)
    cp = agent("go").checkpoint
    assert cp is not None
    return cp.to_dict()


def test_round_trip_through_dict_and_json(checkpoint_dict: dict[str, Any]) -> None:
    cp = Checkpoint.from_dict(checkpoint_dict)
    assert cp.to_dict() == checkpoint_dict
    again = Checkpoint.from_json(json.dumps(checkpoint_dict))
    assert again.to_dict() == checkpoint_dict
    assert again.messages == checkpoint_dict["snapshot"]["data"]["messages"]
    # from_dict copies: mutating the input does not reach the checkpoint
    checkpoint_dict["snapshot"]["data"]["messages"].clear()
    checkpoint_dict["metrics"]["cycle_count"] = 99
    assert len(cp.messages) == 2 and cp.metrics["cycle_count"] == 1


@pytest.mark.parametrize(
    ("mutate", "match"),
    [
        (lambda d: d.update(schema_version="2.0"), "newer than this Tether supports"),
        (lambda d: d.update(schema_version=0), "Unsupported checkpoint schema version: 0"),
        (lambda d: d.update(schema_version="0.0"), "Unsupported checkpoint schema version: '0.0'"),
        (lambda d: d.pop("schema_version"), r"checkpoint\.schema_version must be a version string"),
        (lambda d: d.update(schema_version="1"), "Unsupported checkpoint schema version: '1'"),
        (lambda d: d.update(position="after_lunch"), r"checkpoint\.position must be one of"),
        (lambda d: d.update(cycle_index=-1), r"checkpoint\.cycle_index"),
        (lambda d: d.update(cycle_index=True), r"checkpoint\.cycle_index"),
        (lambda d: d.pop("snapshot"), r"checkpoint\.snapshot is missing"),
        (lambda d: d.update(snapshot=[]), r"checkpoint\.snapshot must be an object"),
        (lambda d: d["snapshot"]["data"].pop("messages"), r"checkpoint\.snapshot\.data\.messages is missing"),
        (lambda d: d["snapshot"]["data"]["messages"][0].update(role="robot"), r"checkpoint\.snapshot\.data\.messages\[0\]"),
        (lambda d: d["snapshot"].update(schema_version=99), "Unsupported checkpoint.snapshot schema version: 99"),
        (lambda d: d["snapshot"].update(scope="unknown"), r"checkpoint\.snapshot\.scope must be one of"),
        (lambda d: d["snapshot"]["data"]["messages"].pop(), "must end with an assistant message calling tools"),
        (lambda d: d.update(position="after_tools"), "must end with a user message of tool results"),
        (lambda d: d.update(app_data=[1]), r"checkpoint\.app_data must be an object"),
        (lambda d: d.update(metrics="lots"), r"checkpoint\.metrics must be an object"),
        (lambda d: d["metrics"].update(cycle_count=-2), r"checkpoint\.metrics\.cycle_count"),
        (lambda d: d["metrics"]["usage"].update(total_tokens="many"), r"checkpoint\.metrics\.usage\.total_tokens"),
        (lambda d: d["metrics"].update(model_latency_ms=float("nan")), r"checkpoint\.metrics\.model_latency_ms"),
        (lambda d: d["metrics"].update(tools={"add": {"calls": -1}}), r"checkpoint\.metrics\.tools\.add"),
        (lambda d: d.update(output_tool=7), r"checkpoint\.output_tool"),
    ],
)
def test_malformed_checkpoints_raise_checkpoint_error_naming_the_problem(checkpoint_dict: dict[str, Any], mutate: Any, match: str) -> None:
    """What a resume validates (``parse``): the header and the snapshot inside, in full."""
    mutate(checkpoint_dict)
    with pytest.raises(CheckpointError, match=match):
        checkpoint_module.parse(checkpoint_dict)


def test_from_dict_checks_the_header_and_keeps_the_snapshot_opaque_until_resume(checkpoint_dict: dict[str, Any]) -> None:
    """Strands' behaviour 6: the snapshot is opaque until resume (a bad one fails there)."""
    checkpoint_dict["snapshot"]["schema_version"] = 99
    cp = Checkpoint.from_dict(checkpoint_dict)
    assert cp.snapshot["schema_version"] == 99
    with pytest.raises(CheckpointError, match="position must be one of"):
        Checkpoint.from_dict({**checkpoint_dict, "position": "after_lunch"})
    with pytest.raises(CheckpointError, match="snapshot must be an object"):
        Checkpoint.from_dict({**checkpoint_dict, "snapshot": [1]})
    agent = Agent(model=ScriptedModel(counting_script(1), stateful=True), tools=[adder([])], checkpointing=True)
    with pytest.raises(CheckpointError, match=r"Unsupported checkpoint\.snapshot schema version: 99"):
        agent({"checkpointResume": {"checkpoint": cp.to_dict()}})
    assert agent.messages == [], "a refused resume changes nothing"


def test_not_an_object_and_not_json_are_checkpoint_errors() -> None:
    with pytest.raises(CheckpointError, match="must be an object, got list"):
        Checkpoint.from_dict([])
    with pytest.raises(CheckpointError, match="not valid JSON"):
        Checkpoint.from_json("{nope")


def test_missing_optional_parts_get_defaults(checkpoint_dict: dict[str, Any]) -> None:
    for key in ("app_data", "metrics", "output_tool"):
        checkpoint_dict.pop(key)
    cp = Checkpoint.from_dict(checkpoint_dict)
    assert cp.app_data == {} and cp.output_tool is None
    assert cp.metrics["cycle_count"] == 0 and cp.metrics["usage"]["total_tokens"] == 0


def test_app_data_is_kept_verbatim(checkpoint_dict: dict[str, Any]) -> None:
    checkpoint_dict["app_data"] = {"ticket": "T-1", "tags": ["a", None, 1.5]}
    assert Checkpoint.from_dict(checkpoint_dict).to_dict()["app_data"] == {"ticket": "T-1", "tags": ["a", None, 1.5]}


# -- structured output --------------------------------------------------------------------


class Answer(pydantic.BaseModel):
    """The final answer."""

    value: int


def test_structured_output_survives_checkpoints_and_needs_the_same_output_model() -> None:
    script = [tool_call("add", {"a": 1, "b": 2}), tool_call("Answer", {"value": 3})]
    log: list[tuple[int, int]] = []
    agent = Agent(model=ScriptedModel(script, stateful=True), tools=[adder(log)], checkpointing=True)
    result = agent("what is 1 + 2?", output_model=Answer)
    positions = []
    while result.stop_reason == "checkpoint":
        assert result.checkpoint is not None
        positions.append((result.checkpoint.position, result.checkpoint.cycle_index, result.checkpoint.output_tool))
        data = result.checkpoint.to_dict()
        if result.checkpoint.cycle_index == 1:
            fresh = Agent(model=ScriptedModel(script, stateful=True), tools=[adder(log)], checkpointing=True)
            with pytest.raises(CheckpointError, match="output_model=Answer"):
                fresh({"checkpointResume": {"checkpoint": data}})
            assert fresh.messages == []
        agent, result = resume_fresh(data, script, log, output_model=Answer)
    # the structured-output call ends the turn: no after_tools checkpoint for it
    assert positions == [("after_model", 0, "Answer"), ("after_tools", 0, "Answer"), ("after_model", 1, "Answer")]
    assert result.stop_reason == "end_turn"
    assert result.structured_output == Answer(value=3)
    assert log == [(1, 2)]


def test_a_new_prompt_while_tools_are_pending_is_refused() -> None:
    log: list[tuple[int, int]] = []
    agent = Agent(model=ScriptedModel(counting_script(1), stateful=True), tools=[adder(log)], checkpointing=True)
    assert agent("go").checkpoint is not None
    with pytest.raises(PromptError, match="tool calls pending"):
        agent("something else")
    assert agent(None).checkpoint is not None  # None runs the pending tools
    assert log == [(0, 0)]


def test_snapshot_dict_is_live_and_to_dict_reflects_changes(checkpoint_dict: dict[str, Any]) -> None:
    cp = Checkpoint.from_dict(checkpoint_dict)
    cp.snapshot["data"]["state"]["note"] = "edited"
    assert cp.to_dict()["snapshot"]["data"]["state"] == {"note": "edited"}
    cp.snapshot = json.loads(json.dumps(checkpoint_dict["snapshot"]))
    assert cp.to_dict()["snapshot"]["data"]["state"] == {}
    assert cp.to_dict() == checkpoint_dict


def test_equality_repr_and_snapshot_object(checkpoint_dict: dict[str, Any]) -> None:
    first, second = Checkpoint.from_dict(checkpoint_dict), Checkpoint.from_dict(checkpoint_dict)
    assert first == second
    second.app_data["x"] = 1
    assert first != second
    assert repr(first) == "Checkpoint(position='after_model', cycle_index=0, schema_version='1.0')"
    snapshot = first.snapshot_object()
    assert snapshot.data["messages"] == checkpoint_dict["snapshot"]["data"]["messages"]
    inspector = Agent()
    inspector.load_snapshot(snapshot)  # a checkpoint's snapshot is an ordinary snapshot
    assert inspector.messages == checkpoint_dict["snapshot"]["data"]["messages"]
    first.snapshot["data"]["messages"] = "broken"
    with pytest.raises(CheckpointError, match=r"checkpoint\.snapshot\.data\.messages"):
        first.snapshot_object()


def test_a_changed_checkpoint_object_is_validated_on_resume(checkpoint_dict: dict[str, Any]) -> None:
    cp = Checkpoint.from_dict(checkpoint_dict)
    cp.position = "after_tools"
    agent = Agent(model=ScriptedModel(counting_script(1), stateful=True), tools=[adder([])], checkpointing=True)
    with pytest.raises(CheckpointError, match="must end with a user message of tool results"):
        agent({"checkpointResume": {"checkpoint": cp}})


def _nested(depth: int, as_object: bool) -> Any:
    value: Any = "1.0"
    for _ in range(depth):
        value = {"k": value} if as_object else [value]
    return value


def test_a_value_nested_1000_deep_anywhere_is_a_checkpoint_error_naming_the_field(checkpoint_dict: dict[str, Any]) -> None:
    """At every place of a real checkpoint, a value nested 1,000 deep is accepted (where a
    checkpoint ignores what it holds) or a CheckpointError naming the field, by every reader
    (``parse``, ``from_dict`` and a checkpointResume prompt), never a RecursionError."""
    log: list[tuple[int, int]] = []
    refused = 0
    for location in json_paths(checkpoint_dict)[1:]:
        for as_object in (False, True):
            deep = json.loads(json.dumps(checkpoint_dict))
            parent: Any = deep
            for part in location[:-1]:
                parent = parent[part]
            parent[location[-1]] = _nested(1_000, as_object)
            agent = Agent(model=ScriptedModel(counting_script(1), stateful=True), tools=[adder(log)], checkpointing=True)
            readers = [
                lambda value: checkpoint_module.parse(value),
                lambda value: Checkpoint.from_dict(value),
                lambda value, agent=agent: agent({"checkpointResume": {"checkpoint": value}}),
            ]
            for read in readers:
                try:
                    read(deep)
                except CheckpointError as exc:
                    refused += 1
                    assert f"checkpoint.{location[0]}" in str(exc), (location, str(exc)[:200])
    assert refused > len(json_paths(checkpoint_dict))  # most places refuse it
    text = json.dumps({**checkpoint_dict, "schema_version": "[]"}).replace('"[]"', "[" * 1_000 + "]" * 1_000)
    with pytest.raises(CheckpointError, match=r"checkpoint is not valid JSON: .*nested more than 512 levels deep"):
        Checkpoint.from_json(text)
