"""`tether._capture`: run state -> snapshot data -> run state, with copies both ways."""

from __future__ import annotations

from typing import Any

import pytest

from tether._capture import apply, capture, load, take
from tether.conversation import NullConversationManager, SlidingWindowConversationManager
from tether.errors import SnapshotError
from tether.loop.state import Cursor, RunState
from tether.snapshot import FIELDS, Snapshot

IMAGE_RESULT: dict[str, Any] = {
    "toolUseId": "t1",
    "status": "success",
    "content": [{"image": {"format": "png", "source": {"bytes": b"\x00img"}}}],
}


def run_state() -> RunState:
    return RunState(
        messages=[{"role": "user", "content": [{"text": "hi"}, {"image": {"format": "png", "source": {"bytes": b"\x01\x02"}}}]}],
        state={"k": [1, 2]},
        conversation_manager_state={"removed_message_count": 1},
        interrupt_state={
            "interrupts": {"i1": {"id": "i1", "name": "approve", "reason": {"why": "x"}, "source": "tool", "tool_use_id": "t2"}},
            "activated": True,
            "context": Cursor(phase="tools", cycle_index=4, results={"t1": IMAGE_RESULT}, started=["t1", "t2"]).to_dict(),
        },
        system_prompt=[{"text": "sys"}],
        model_state={"id": "r1"},
    )


def test_capture_is_pure_json_and_shares_nothing() -> None:
    run = run_state()
    data = capture(run, SlidingWindowConversationManager(), list(FIELDS))
    assert data["messages"][0]["content"][1]["image"]["source"]["bytes"] == {"$b64": "AQI="}
    assert data["interrupt_state"]["context"]["results"]["t1"]["content"][0]["image"]["source"]["bytes"] == {"$b64": "AGltZw=="}
    expected = {"__name__": "SlidingWindowConversationManager", "removed_message_count": 1, "model_call_count": 0}
    assert data["conversation_manager_state"] == expected  # Strands' shape
    data["state"]["k"].append(3)
    data["system_prompt"][0]["text"] = "changed"
    assert run.state == {"k": [1, 2]} and run.system_prompt == [{"text": "sys"}]


def test_capture_only_the_selected_fields() -> None:
    assert list(capture(run_state(), NullConversationManager(), ["state", "model_state"])) == ["state", "model_state"]
    with pytest.raises(SnapshotError, match="unknown snapshot field 'bogus'"):
        capture(run_state(), NullConversationManager(), ["bogus"])


def test_apply_restores_bytes_cursor_and_interrupts() -> None:
    source = run_state()
    data = capture(source, SlidingWindowConversationManager(), list(FIELDS))
    target = RunState()
    apply(target, SlidingWindowConversationManager(), data)
    assert target.messages == source.messages
    assert target.interrupt_state == source.interrupt_state
    assert target.interrupt_state["context"]["results"]["t1"]["content"][0]["image"]["source"]["bytes"] == b"\x00img"
    assert target.cursor.phase == "tools" and target.cursor.cycle_index == 4 and target.cursor.started == ["t1", "t2"]
    assert target.conversation_manager_state == {"removed_message_count": 1}
    assert (target.state, target.model_state, target.system_prompt) == (source.state, source.model_state, source.system_prompt)
    target.state["k"].append(9)
    assert data["state"] == {"k": [1, 2]}, "apply copies its input"


def test_apply_without_an_activated_interrupt_resets_the_cursor_with_messages_only() -> None:
    target = RunState(cursor=Cursor(phase="model", cycle_index=3))
    apply(target, NullConversationManager(), {"state": {"a": 1}})
    assert target.cursor.phase == "model" and target.cursor.cycle_index == 3
    apply(target, NullConversationManager(), {"messages": []})
    assert target.cursor == Cursor()


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        ({"bogus": 1}, "snapshot.data.bogus is not a snapshot field"),
        ({"messages": {}}, "snapshot.data.messages must be a list"),
        ({"system_prompt": 3}, "snapshot.data.system_prompt must be a list of blocks, a string or null"),
        ({"state": []}, "snapshot.data.state must be an object"),
        ({"interrupt_state": {"activated": True, "context": {"phase": "tools"}}}, "interrupt_state.context is malformed"),
        ({"messages": [{"role": "user", "content": [{"image": {"source": {"bytes": {"$b64": "?"}}}}]}]}, "messages[0].content[0].image"),
        (
            {"interrupt_state": {"context": {"results": {"t": {"content": [{"image": {"source": {"bytes": {"$b64": "="}}}}]}}}}},
            "snapshot.data.interrupt_state.context.results.t.content[0].image.source.bytes",
        ),
    ],
)
def test_apply_refuses_bad_data_and_changes_nothing(data: dict[str, Any], needle: str) -> None:
    target = run_state()
    before = capture(target, SlidingWindowConversationManager(), list(FIELDS))
    with pytest.raises(SnapshotError) as info:
        apply(target, SlidingWindowConversationManager(), data)
    assert needle in str(info.value)
    assert capture(target, SlidingWindowConversationManager(), list(FIELDS)) == before


def test_apply_refuses_another_managers_state_before_changing_anything() -> None:
    target = RunState(messages=[{"role": "user", "content": [{"text": "mine"}]}])
    data = capture(run_state(), SlidingWindowConversationManager(), list(FIELDS))
    with pytest.raises(SnapshotError, match="'SlidingWindowConversationManager' manager but this agent uses 'NullConversationManager'"):
        apply(target, NullConversationManager(), data)
    assert target.messages == [{"role": "user", "content": [{"text": "mine"}]}]


def test_take_and_load() -> None:
    source = run_state()
    snap = take(source, SlidingWindowConversationManager(), ["messages", "state"], {"app": True})
    assert snap.app_data == {"app": True} and list(snap.data) == ["messages", "state"]
    target = RunState()
    load(target, SlidingWindowConversationManager(), snap)
    assert target.messages == source.messages and target.state == source.state
    with pytest.raises(SnapshotError, match="app_data must be a dict"):
        take(source, NullConversationManager(), ["state"], "x")
    with pytest.raises(SnapshotError, match=r"app_data\.x is not JSON \(bytes\)"):
        take(source, NullConversationManager(), ["state"], {"x": b"raw"})


def test_load_validates_snapshots_built_by_hand() -> None:
    target = RunState()
    with pytest.raises(SnapshotError, match=r"snapshot\.data\.messages\[0\]\.role"):
        load(target, NullConversationManager(), Snapshot(data={"messages": [{"role": "x", "content": []}]}))
    assert target.messages == []


# -- writing JSON straight from the run: what is not JSON ---------------------------------


def _run_with(message: dict[str, Any]) -> RunState:
    return RunState(messages=[{"role": "user", "content": [{"text": "hi"}]}, message])


def _tool_use(value: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t", "name": "n", "input": {"v": value}}}]}


@pytest.mark.parametrize(
    ("value", "where"),
    [
        ({1, 2}, "data.messages[1].content[0].toolUse.input.v is not JSON (set)"),
        (float("nan"), "data.messages[1].content[0].toolUse.input.v is not JSON (non-finite float)"),
        ([float("-inf")], "data.messages[1].content[0].toolUse.input.v[0] is not JSON (non-finite float)"),
        (object(), "data.messages[1].content[0].toolUse.input.v is not JSON (object)"),
        (Cursor(), "data.messages[1].content[0].toolUse.input.v is not JSON (Cursor)"),
    ],
)
def test_non_json_in_messages_is_a_snapshot_error_naming_the_path(value: Any, where: str) -> None:
    with pytest.raises(SnapshotError) as info:
        take(_run_with(_tool_use(value)), NullConversationManager(), ["messages"])
    assert where in str(info.value)


def test_what_json_itself_accepts_in_messages_is_captured_as_json_does() -> None:
    """Tuples become lists, str subclasses plain strings, bytes anywhere an envelope (as before)."""

    class Label(str):
        pass

    run = _run_with(_tool_use({"pair": (1, 2), "label": Label("x"), "raw": b"\x00"}))
    run.messages[0]["content"][0]["text"] = Label("hi")
    data = capture(run, NullConversationManager(), ["messages"])
    assert data["messages"][1]["content"][0]["toolUse"]["input"] == {"v": {"pair": [1, 2], "label": "x", "raw": {"$b64": "AA=="}}}
    assert type(data["messages"][0]["content"][0]["text"]) is str
    target = RunState()
    load(target, NullConversationManager(), take(run, NullConversationManager(), ["messages"]))
    assert target.messages[1]["content"][0]["toolUse"]["input"]["v"]["raw"] == {"$b64": "AA=="}, "not a bytes position"


def test_circular_messages_are_a_snapshot_error() -> None:
    message: dict[str, Any] = {"role": "user", "content": []}
    message["content"].append({"toolResult": {"toolUseId": "t", "status": "success", "content": [{"json": message}]}})
    with pytest.raises(SnapshotError, match=r"data\.messages\[1\].*circular reference"):
        take(_run_with(message), NullConversationManager(), ["messages"])


def test_messages_held_as_a_tuple_are_captured_as_a_list() -> None:
    run = RunState()
    run.messages = ({"role": "user", "content": [{"text": "hi"}]},)  # type: ignore[assignment]
    assert capture(run, NullConversationManager(), ["messages"]) == {"messages": [{"role": "user", "content": [{"text": "hi"}]}]}


def test_take_and_load_decode_bytes_in_messages_and_interrupt_results() -> None:
    source = run_state()
    snap = take(source, SlidingWindowConversationManager(), list(FIELDS))
    for _ in range(2):  # the second load reads the stored JSON again
        target = RunState()
        load(target, SlidingWindowConversationManager(), snap)
        assert target.messages == source.messages
        assert target.interrupt_state["context"]["results"]["t1"]["content"][0]["image"]["source"]["bytes"] == b"\x00img"
    plain = RunState(messages=[{"role": "user", "content": [{"text": "$b64 is just text here"}]}])
    target = RunState()
    load(target, NullConversationManager(), take(plain, NullConversationManager(), ["messages"]))
    assert target.messages == plain.messages
