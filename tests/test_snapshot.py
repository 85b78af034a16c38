"""Snapshots: field selection, round trips, independence, selective restore and errors."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from typing import Any

import pytest

from tether import (
    Agent,
    NullConversationManager,
    ScriptedModel,
    SlidingWindowConversationManager,
    Snapshot,
    SnapshotError,
    SnapshotException,
    SummarizingConversationManager,
    TetherError,
    tool,
)
from tether.models.scripted import tool_call
from tether.snapshot import FIELDS, PRESETS, SNAPSHOT_SCHEMA_VERSION, resolve_fields

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\x00"
PDF = b"%PDF-1.4\n\x00\x01\x02"
SECRET = b"\x00redacted\xffreasoning"


def rich_messages() -> list[dict[str, Any]]:
    """Messages with every block kind, bytes in every allowed position."""
    return [
        {
            "role": "user",
            "content": [
                {"text": "Look at these"},
                {"image": {"format": "png", "source": {"bytes": PNG}}},
                {"document": {"format": "pdf", "name": "report", "source": {"bytes": PDF}}},
                {"cachePoint": {"type": "default"}},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"reasoningContent": {"reasoningText": {"text": "thinking", "signature": "sig"}}},
                {"reasoningContent": {"redactedContent": SECRET}},
                {"text": "Let me check."},
                {"toolUse": {"toolUseId": "t1", "name": "lookup", "input": {"q": "x", "n": [1, 2.5, None, True]}}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "toolResult": {
                        "toolUseId": "t1",
                        "status": "success",
                        "content": [
                            {"text": "found"},
                            {"json": {"a": {"b": [1, 2]}}},
                            {"image": {"format": "jpeg", "source": {"bytes": PNG}}},
                            {"document": {"format": "txt", "name": "notes", "source": {"bytes": PDF}}},
                        ],
                    }
                }
            ],
        },
        {"role": "assistant", "content": [{"text": "Done: ünïcødé ✓"}]},
    ]


def rich_agent(**kwargs: Any) -> Agent:
    agent = Agent(
        messages=rich_messages(),  # type: ignore[arg-type]
        system_prompt=[{"text": "You are helpful."}, {"cachePoint": {"type": "default"}}],
        state={"user": {"name": "ada", "tags": ["a", "b"]}},
        **kwargs,
    )
    agent.run_state.model_state = {"response_id": "resp_1"}
    agent.run_state.conversation_manager_state = {"removed_message_count": 3}
    return agent


# -- field selection ----------------------------------------------------------------------


def test_the_all_preset_captures_every_field() -> None:
    snap = rich_agent().take_snapshot(preset="all")
    assert list(snap.data) == list(FIELDS)


def test_session_preset_is_every_field_but_the_system_prompt() -> None:
    assert PRESETS["session"] == tuple(name for name in FIELDS if name != "system_prompt")
    snap = rich_agent().take_snapshot(preset="session")
    assert set(snap.data) == set(FIELDS) - {"system_prompt"}


@pytest.mark.parametrize(
    ("preset", "include", "exclude", "expected"),
    [
        ("session", ["system_prompt"], None, list(FIELDS)),
        ("session", ["system_prompt"], ["system_prompt"], [f for f in FIELDS if f != "system_prompt"]),
        ("session", None, ["messages", "state"], ["conversation_manager_state", "interrupt_state", "model_state"]),
        (None, ["state", "messages"], None, ["messages", "state"]),
        ("all", None, ["messages"], [f for f in FIELDS if f != "messages"]),
        (None, ["state"], ["messages"], ["state"]),
    ],
)
def test_resolution_order_is_preset_then_include_then_exclude(
    preset: str | None, include: list[str] | None, exclude: list[str] | None, expected: list[str]
) -> None:
    assert resolve_fields(preset, include, exclude) == expected
    snap = rich_agent().take_snapshot(preset=preset, include=include, exclude=exclude)
    assert list(snap.data) == expected


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"preset": "everything"}, "unknown snapshot preset 'everything'"),
        ({"include": ["messagez"]}, "unknown snapshot field 'messagez'"),
        ({"exclude": ["nope"]}, "unknown snapshot field 'nope'"),
        ({"include": ["state"], "exclude": ["state"]}, "No snapshot fields resolved"),
        ({"exclude": list(FIELDS)}, "No snapshot fields resolved"),
        ({}, "No snapshot fields resolved"),
        ({"exclude": ["messages"]}, "No snapshot fields resolved"),
        ({"include": []}, "No snapshot fields resolved"),
        ({"include": "messages"}, "list of field names"),
        ({"include": 3}, "list of field names"),
        ({"exclude": [["messages"]]}, "unknown snapshot field"),
        ({"preset": 1}, "preset must be"),
    ],
)
def test_bad_selection_raises_snapshot_error(kwargs: dict[str, Any], needle: str) -> None:
    with pytest.raises(SnapshotError) as info:
        Agent().take_snapshot(**kwargs)
    assert needle in str(info.value)


# -- shape of a snapshot ------------------------------------------------------------------


def test_snapshot_fields_and_created_at() -> None:
    before = datetime.now().astimezone()
    snap = rich_agent().take_snapshot(preset="all", app_data={"k": [1, {"x": None}]})
    d = snap.to_dict()
    assert set(d) == {"schema_version", "scope", "created_at", "data", "app_data"}
    assert d["schema_version"] == SNAPSHOT_SCHEMA_VERSION == "1.0"  # Strands' version string
    assert d["scope"] == "agent"
    assert d["app_data"] == {"k": [1, {"x": None}]}
    assert d["created_at"].endswith("Z")
    created = datetime.fromisoformat(d["created_at"])
    assert created.utcoffset() is not None and created.utcoffset().total_seconds() == 0  # type: ignore[union-attr]
    assert created >= before.replace(microsecond=0)
    json.dumps(d, allow_nan=False)


def test_created_at_is_filled_when_absent_and_kept_when_given() -> None:
    d = rich_agent().take_snapshot(preset="all").to_dict()
    del d["created_at"]
    assert Snapshot.from_dict(d).created_at.endswith("Z")
    d["created_at"] = "2020-01-02T03:04:05.000006Z"
    assert Snapshot.from_dict(d).created_at == "2020-01-02T03:04:05.000006Z"
    assert Snapshot({"state": {}}).created_at.endswith("Z")


def test_system_prompt_is_stored_as_blocks_with_cache_points() -> None:
    snap = rich_agent().take_snapshot(preset="all")
    assert snap.data["system_prompt"] == [{"text": "You are helpful."}, {"cachePoint": {"type": "default"}}]
    target = Agent(system_prompt="old")
    target.load_snapshot(Snapshot.from_dict(json.loads(json.dumps(snap.to_dict()))))
    assert target.system_prompt_content == [{"text": "You are helpful."}, {"cachePoint": {"type": "default"}}]
    assert target.system_prompt == "You are helpful."


def test_null_system_prompt_clears_and_absent_keeps() -> None:
    empty = Agent().take_snapshot(include=["system_prompt"])
    assert empty.data == {"system_prompt": None}
    target = Agent(system_prompt="keep me?")
    target.load_snapshot(empty)
    assert target.system_prompt_content is None
    target = Agent(system_prompt="keep me")
    target.load_snapshot(Agent(messages=[{"role": "user", "content": [{"text": "hi"}]}]).take_snapshot(preset="session"))
    assert target.system_prompt_content == [{"text": "keep me"}]
    assert target.messages == [{"role": "user", "content": [{"text": "hi"}]}]


def test_bytes_become_envelopes_and_come_back_as_the_same_bytes() -> None:
    d = rich_agent().take_snapshot(preset="all").to_dict()
    text = json.dumps(d)
    assert "\\u0000" not in text and "$b64" in text
    messages = d["data"]["messages"]
    assert messages[0]["content"][1]["image"]["source"]["bytes"] == {"$b64": "iVBORw0KGgoAAAANSUhEUv8A"}
    target = Agent()
    target.load_snapshot(Snapshot.from_dict(json.loads(text)))
    assert target.messages == rich_messages()
    assert target.messages[2]["content"][0]["toolResult"]["content"][2]["image"]["source"]["bytes"] == PNG  # type: ignore[typeddict-item]
    assert target.messages[1]["content"][1]["reasoningContent"]["redactedContent"] == SECRET  # type: ignore[typeddict-item]


def test_envelope_shaped_json_outside_bytes_positions_stays_verbatim() -> None:
    envelope = {"$b64": "AAAA"}
    agent = Agent(
        messages=[
            {"role": "user", "content": [{"text": "x"}]},
            {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t", "name": "n", "input": {"blob": envelope}}}]},
        ],
        state={"raw": envelope},
    )
    target = Agent()
    target.load_snapshot(Snapshot.from_dict(json.loads(json.dumps(agent.take_snapshot(preset="all").to_dict()))))
    assert target.messages[1]["content"][0]["toolUse"]["input"] == {"blob": {"$b64": "AAAA"}}
    assert target.state.get("raw") == {"$b64": "AAAA"}


@pytest.mark.parametrize("bad", ["!!!!", "QQ", "QR==", "Q Q==", "ü"])
def test_invalid_base64_is_a_snapshot_error_naming_the_path(bad: str) -> None:
    d = rich_agent().take_snapshot(preset="all").to_dict()
    d["data"]["messages"][2]["content"][0]["toolResult"]["content"][2]["image"]["source"]["bytes"] = {"$b64": bad}
    with pytest.raises(SnapshotError) as info:
        Snapshot.from_dict(d)
    assert "snapshot.data.messages[2].content[0].toolResult.content[2].image.source.bytes" in str(info.value)


def test_invalid_base64_in_an_unvalidated_snapshot_fails_on_load_naming_the_path() -> None:
    data = {"messages": [{"role": "user", "content": [{"image": {"format": "png", "source": {"bytes": {"$b64": "%%%"}}}}]}]}
    target = Agent(messages=[{"role": "user", "content": [{"text": "untouched"}]}])
    with pytest.raises(SnapshotError) as info:
        target.load_snapshot(Snapshot(data=data))
    assert "snapshot.data.messages[0].content[0].image.source.bytes" in str(info.value)
    assert target.messages == [{"role": "user", "content": [{"text": "untouched"}]}]


# -- independence -------------------------------------------------------------------------


def test_mutating_the_agent_does_not_change_the_snapshot() -> None:
    agent = rich_agent()
    snap = agent.take_snapshot(preset="all", app_data={"a": [1]})
    expected = snap.to_dict()
    agent.messages[0]["content"][0]["text"] = "changed"
    agent.messages.append({"role": "user", "content": [{"text": "more"}]})
    agent.state.set("user", "other")
    agent.run_state.state["new"] = 1
    agent.run_state.model_state["response_id"] = "resp_2"
    agent.run_state.system_prompt[0]["text"] = "changed"  # type: ignore[index]
    assert snap.to_dict() == expected


def test_mutating_the_snapshot_does_not_change_the_agent() -> None:
    agent = rich_agent()
    snap = agent.take_snapshot(preset="all")
    target = Agent()
    target.load_snapshot(snap)

    def both() -> tuple[str, str]:
        return tuple(json.dumps(a.take_snapshot(preset="all").data, default=repr) for a in (target, agent))  # type: ignore[return-value]

    before = both()
    snap.data["messages"][0]["content"][0]["text"] = "changed"
    snap.data["state"]["user"]["name"] = "eve"
    snap.data["system_prompt"].append({"text": "x"})
    after = both()
    assert before == after


def test_loaded_agents_do_not_share_state_with_each_other_or_the_snapshot() -> None:
    snap = rich_agent().take_snapshot(preset="all")
    first, second = Agent(), Agent()
    first.load_snapshot(snap)
    second.load_snapshot(snap)
    first.messages[3]["content"][0]["text"] = "mutated"
    first.state.set("user", 1)
    assert second.messages[3]["content"][0]["text"] == "Done: ünïcødé ✓"
    assert second.state.get("user") == {"name": "ada", "tags": ["a", "b"]}
    assert snap.data["messages"][3]["content"][0]["text"] == "Done: ünïcødé ✓"


def test_to_dict_output_is_independent_of_the_snapshot() -> None:
    snap = rich_agent().take_snapshot(preset="all", app_data={"nested": {"x": 1}})
    first = snap.to_dict()
    first["data"]["messages"].clear()
    first["app_data"]["nested"]["x"] = 2
    first["data"]["state"]["user"] = None
    second = snap.to_dict()
    assert len(second["data"]["messages"]) == 4
    assert second["app_data"] == {"nested": {"x": 1}}
    assert snap.app_data == {"nested": {"x": 1}}
    assert second["data"]["state"]["user"]["name"] == "ada"


def test_from_dict_copies_its_input() -> None:
    d = rich_agent().take_snapshot(preset="all", app_data={"x": [1]}).to_dict()
    snap = Snapshot.from_dict(d)
    d["data"]["messages"][0]["content"][0]["text"] = "changed"
    d["app_data"]["x"].append(2)
    assert snap.data["messages"][0]["content"][0]["text"] == "Look at these"
    assert snap.app_data == {"x": [1]}


def test_mutations_through_data_are_part_of_the_snapshot() -> None:
    snap = rich_agent().take_snapshot(preset="all")
    snap.data["state"]["extra"] = True
    assert snap.to_dict()["data"]["state"]["extra"] is True
    target = Agent()
    target.load_snapshot(snap)
    assert target.state.get("extra") is True


# -- app_data -----------------------------------------------------------------------------


def test_app_data_is_stored_verbatim_and_deep_copied() -> None:
    app = {"ticket": "T-1", "nested": {"list": [1, 2.5, "x", None, True]}, "empty": {}}
    snap = Agent().take_snapshot(preset="all", app_data=app)
    app["nested"]["list"].append("later")  # type: ignore[index]
    assert snap.app_data == {"ticket": "T-1", "nested": {"list": [1, 2.5, "x", None, True]}, "empty": {}}
    assert Snapshot.from_dict(json.loads(json.dumps(snap.to_dict()))).app_data == snap.app_data


@pytest.mark.parametrize(
    ("app_data", "path"),
    [
        ({"a": {"b": [1, {1, 2}]}}, "app_data.a.b[1]"),
        ({"img": b"raw"}, "app_data.img"),
        ({"f": float("nan")}, "app_data.f"),
        ({"t": (1, 2)}, "app_data.t"),
        ({"k": {3: "int key"}}, "app_data.k"),
        ({"o": object()}, "app_data.o"),
    ],
)
def test_non_json_app_data_is_refused_naming_the_path(app_data: dict[str, Any], path: str) -> None:
    with pytest.raises(SnapshotError) as info:
        Agent().take_snapshot(preset="all", app_data=app_data)
    assert path in str(info.value)


def test_app_data_must_be_a_dict() -> None:
    with pytest.raises(SnapshotError, match="app_data must be a dict"):
        Agent().take_snapshot(preset="all", app_data=[1, 2])  # type: ignore[arg-type]


def test_circular_app_data_is_refused() -> None:
    loop: dict[str, Any] = {}
    loop["self"] = loop
    with pytest.raises(SnapshotError, match="circular"):
        Agent().take_snapshot(preset="all", app_data=loop)


# -- non-JSON agent state -----------------------------------------------------------------


def test_non_json_state_is_a_snapshot_error_naming_the_path() -> None:
    agent = Agent()
    agent.run_state.state["bad"] = {"inner": {1, 2}}
    with pytest.raises(SnapshotError, match=r"data\.state\.bad\.inner"):
        agent.take_snapshot(preset="all")
    assert agent.take_snapshot(preset="all", exclude=["state"]).data["messages"] == []


def test_bytes_in_model_state_are_refused() -> None:
    agent = Agent()
    agent.run_state.model_state = {"blob": b"x"}
    with pytest.raises(SnapshotError, match=r"data\.model_state\.blob is not JSON \(bytes\)"):
        agent.take_snapshot(preset="all")


# -- selective restore --------------------------------------------------------------------


def test_restore_is_selective() -> None:
    source = rich_agent()
    target = Agent(
        messages=[{"role": "user", "content": [{"text": "mine"}]}],
        system_prompt="target prompt",
        state={"mine": 1},
    )
    target.run_state.model_state = {"mine": True}
    target.load_snapshot(source.take_snapshot(include=["state"]))
    assert target.state.get() == {"user": {"name": "ada", "tags": ["a", "b"]}}
    assert target.messages == [{"role": "user", "content": [{"text": "mine"}]}]
    assert target.system_prompt == "target prompt"
    assert target.run_state.model_state == {"mine": True}
    target.load_snapshot(source.take_snapshot(include=["messages", "model_state"]))
    assert target.messages == rich_messages()
    assert target.run_state.model_state == {"response_id": "resp_1"}
    assert target.system_prompt == "target prompt"


def test_conversation_manager_state_round_trips() -> None:
    source = rich_agent(conversation_manager=SlidingWindowConversationManager(window_size=10))
    snap = source.take_snapshot(preset="all")
    assert snap.data["conversation_manager_state"] == {
        "__name__": "SlidingWindowConversationManager",
        "removed_message_count": 3,
        "model_call_count": 0,
    }, "Strands' shape"
    target = Agent(conversation_manager=SlidingWindowConversationManager(window_size=10))
    target.load_snapshot(snap)
    assert target.run_state.conversation_manager_state == {"removed_message_count": 3}


@pytest.mark.parametrize("other", [NullConversationManager, SummarizingConversationManager])
def test_restoring_another_managers_state_is_a_clear_error(other: type) -> None:
    snap = rich_agent().take_snapshot(preset="all")
    target = Agent(messages=[{"role": "user", "content": [{"text": "mine"}]}], conversation_manager=other())
    with pytest.raises(SnapshotError) as info:
        target.load_snapshot(snap)
    assert "SlidingWindowConversationManager" in str(info.value) and other.__name__ in str(info.value)
    assert target.messages == [{"role": "user", "content": [{"text": "mine"}]}], "a refused load changes nothing"
    target.load_snapshot(rich_agent().take_snapshot(preset="all", exclude=["conversation_manager_state"]))
    assert target.messages == rich_messages()


def test_load_accepts_a_dict_and_refuses_other_types() -> None:
    target = Agent()
    target.load_snapshot(rich_agent().take_snapshot(preset="all").to_dict())
    assert target.messages == rich_messages()
    with pytest.raises(SnapshotError, match="takes a Snapshot"):
        target.load_snapshot("snapshot")  # type: ignore[arg-type]


def test_loading_messages_resets_the_cursor() -> None:
    target = Agent()
    target.run_state.cursor.phase = "tools"
    target.load_snapshot(rich_agent().take_snapshot(include=["messages"]))
    assert target.run_state.cursor.phase == "idle"


# -- continue after a JSON round trip -----------------------------------------------------


def test_round_trip_into_a_fresh_agent_that_continues_with_tools() -> None:
    calls: list[tuple[int, int]] = []

    @tool(run_in_thread=False)
    def multiply(a: int, b: int) -> int:
        """Multiply two integers.

        Args:
            a: First factor.
            b: Second factor.
        """
        calls.append((a, b))
        return a * b

    first = Agent(
        model=ScriptedModel([tool_call("multiply", {"a": 2, "b": 3}), "It is 6."]),
        tools=[multiply],
        system_prompt="You multiply.",
    )
    assert first("What is 2*3?").stop_reason == "end_turn"
    first.state.set("session", {"turns": 1})
    text = json.dumps(first.take_snapshot(preset="all", app_data={"user": "u"}).to_dict())

    model = ScriptedModel([tool_call("multiply", {"a": 6, "b": 7}), "It is 42."])
    model.record_requests = True
    second = Agent(model=model, tools=[multiply])
    second.load_snapshot(Snapshot.from_dict(json.loads(text)))
    assert second.system_prompt == "You multiply."
    result = second("Now multiply that by 7.")
    assert result.stop_reason == "end_turn"
    assert calls == [(2, 3), (6, 7)]
    assert len(second.messages) == 8
    first_request = model.calls[0]["messages"]
    assert [m["role"] for m in first_request] == ["user", "assistant", "user", "assistant", "user"]
    assert first_request[2]["content"][0]["toolResult"]["content"] == [{"json": 6}]  # type: ignore[typeddict-item]
    assert second.messages[-2]["content"][0]["toolResult"]["content"] == [{"json": 42}]  # type: ignore[typeddict-item]
    assert second.state.get("session") == {"turns": 1}
    assert len(first.messages) == 4, "the source agent is untouched"


def test_load_is_refused_while_running() -> None:
    agent = Agent()
    assert agent._busy.acquire(blocking=False)
    try:
        with pytest.raises(SnapshotError, match="running"):
            agent.load_snapshot(Agent().take_snapshot(preset="all"))
    finally:
        agent._busy.release()


# -- errors -------------------------------------------------------------------------------


def test_snapshot_error_hierarchy() -> None:
    assert issubclass(SnapshotError, TetherError)
    assert SnapshotException is SnapshotError


def valid_dict() -> dict[str, Any]:
    return rich_agent().take_snapshot(preset="all", app_data={"a": 1}).to_dict()


def _set(d: dict[str, Any], path: list[Any], value: Any) -> None:
    target: Any = d
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = value


def _delete(d: dict[str, Any], path: list[Any]) -> None:
    target: Any = d
    for part in path[:-1]:
        target = target[part]
    del target[path[-1]]


@pytest.mark.parametrize(
    ("path", "value", "needle"),
    [
        (["schema_version"], "2.0", "newer than this Tether supports"),
        (["schema_version"], 99, "Unsupported snapshot schema version: 99"),
        (["schema_version"], 0, "Unsupported snapshot schema version: 0"),
        (["schema_version"], "1", "Unsupported snapshot schema version: '1'"),
        (["schema_version"], "0.9", "Unsupported snapshot schema version: '0.9'"),
        (["schema_version"], True, "schema_version must be a version string"),
        (["schema_version"], 1.0, "schema_version must be a version string"),
        (["scope"], "session", "snapshot.scope must be one of 'agent', 'multiAgent'"),
        (["created_at"], 5, "snapshot.created_at"),
        (["created_at"], "yesterday", "snapshot.created_at"),
        (["data"], [], "snapshot.data must be an object"),
        (["app_data"], "x", "snapshot.app_data must be an object"),
        (["app_data", "x"], float("inf"), "snapshot.app_data.x"),
        (["data", "nonsense"], {}, "snapshot.data.nonsense is not a snapshot field"),
        (["data", "messages"], {}, "snapshot.data.messages must be a list"),
        (["data", "messages", 3], "hi", "snapshot.data.messages[3]"),
        (["data", "messages", 3, "role"], "system", "snapshot.data.messages[3].role"),
        (["data", "messages", 3, "content"], "hi", "snapshot.data.messages[3].content"),
        (["data", "messages", 3, "extra"], 1, "snapshot.data.messages[3].extra"),
        (["data", "messages", 3, "content", 0], {"text": 1}, "snapshot.data.messages[3].content[0].text"),
        (["data", "messages", 3, "content", 0], {"bogus": 1}, "snapshot.data.messages[3].content[0]"),
        (["data", "messages", 3, "content", 0], {"text": "a", "image": {}}, "snapshot.data.messages[3].content[0]"),
        (["data", "messages", 3, "content", 0], {"interruptResponse": {}}, "control block"),
        (["data", "messages", 1, "content", 3, "toolUse", "name"], None, "messages[1].content[3].toolUse.name"),
        (["data", "messages", 1, "content", 3, "toolUse", "input"], {"s": {1}}, "messages[1].content[3].toolUse.input.s"),
        (["data", "messages", 1, "content", 0, "reasoningContent"], {}, "messages[1].content[0].reasoningContent"),
        (["data", "messages", 0, "content", 1, "image", "source"], {"bytes": "raw"}, "messages[0].content[1].image.source.bytes"),
        (["data", "messages", 0, "content", 1, "image", "format"], 7, "messages[0].content[1].image.format"),
        (["data", "messages", 0, "content", 2, "document", "name"], None, "messages[0].content[2].document.name"),
        (["data", "messages", 0, "content", 3, "cachePoint"], [], "messages[0].content[3].cachePoint"),
        (["data", "messages", 2, "content", 0, "toolResult", "status"], "ok", "messages[2].content[0].toolResult.status"),
        (["data", "messages", 2, "content", 0, "toolResult", "content", 1], {"xml": "<a/>"}, "toolResult.content[1]"),
        (["data", "messages", 2, "content", 0, "toolResult", "content", 1, "json"], b"x", "toolResult.content[1].json"),
        (["data", "system_prompt"], 3, "snapshot.data.system_prompt"),
        (["data", "system_prompt", 1], {"image": {}}, "snapshot.data.system_prompt[1]"),
        (["data", "system_prompt", 0, "text"], 3, "snapshot.data.system_prompt[0].text"),
        (["data", "state"], [], "snapshot.data.state must be an object"),
        (["data", "state", "user", "tags", 1], (1,), "snapshot.data.state.user.tags[1]"),
        (["data", "model_state"], None, "snapshot.data.model_state must be an object"),
        (["data", "conversation_manager_state", "kind"], 3, "conversation_manager_state.kind"),
        (["data", "conversation_manager_state", "__name__"], 3, "conversation_manager_state.__name__"),
        (["data", "interrupt_state", "tether_interrupts"], [], "interrupt_state.tether_interrupts"),
        (["data", "interrupt_state", "tether_interrupts"], {"i1": {"source": 1}}, "tether_interrupts.i1.source"),
        (["data", "interrupt_state", "context"], 3, "interrupt_state.context: must be an object"),
        (["data", "conversation_manager_state", "removed_message_count"], -1, "removed_message_count"),
        (["data", "conversation_manager_state", "summary_message"], {"role": "x"}, "summary_message.role"),
        (["data", "interrupt_state"], [], "snapshot.data.interrupt_state must be an object"),
        (["data", "interrupt_state", "interrupts"], [], "interrupt_state.interrupts"),
        (["data", "interrupt_state", "interrupts"], {"i1": {"id": "i2", "name": "n"}}, "interrupt_state.interrupts.i1.id"),
        (["data", "interrupt_state", "interrupts"], {"i1": {"id": "i1"}}, "interrupt_state.interrupts.i1.name"),
        (["data", "interrupt_state", "activated"], "yes", "interrupt_state.activated"),
        (["data", "interrupt_state", "context"], {"phase": "x"}, "interrupt_state.context.phase"),
        (["data", "interrupt_state", "context"], {"phase": "tools"}, "interrupt_state.context.cycle_index"),
        (["data", "interrupt_state", "context"], {"phase": "tools", "cycle_index": 0, "results": {"t": {}}}, "context.results.t"),
    ],
)
def test_malformed_snapshots_raise_snapshot_error_naming_the_path(path: list[Any], value: Any, needle: str) -> None:
    d = valid_dict()
    _set(d, path, value)
    with pytest.raises(SnapshotError) as info:
        Snapshot.from_dict(d)
    assert needle in str(info.value)


@pytest.mark.parametrize(
    ("path", "needle"),
    [
        (["schema_version"], "schema_version must be a version string"),
        (["data"], "snapshot.data is missing"),
        (["data", "messages", 1, "content", 3, "toolUse", "input"], "toolUse.input: is missing"),
        (["data", "messages", 0, "content", 1, "image", "source", "bytes"], "image.source.bytes"),
    ],
)
def test_missing_keys_raise_snapshot_error(path: list[Any], needle: str) -> None:
    d = valid_dict()
    _delete(d, path)
    with pytest.raises(SnapshotError) as info:
        Snapshot.from_dict(d)
    assert needle in str(info.value)


@pytest.mark.parametrize("value", [None, [], "snapshot", 1, b"{}"])
def test_non_dict_snapshots_are_refused(value: Any) -> None:
    with pytest.raises(SnapshotError, match="snapshot must be an object"):
        Snapshot.from_dict(value)


def test_checkpoint_style_path_prefix() -> None:
    d = valid_dict()
    d["data"]["messages"][0]["role"] = 1
    with pytest.raises(SnapshotError, match=r"checkpoint\.snapshot\.data\.messages\[0\]\.role"):
        Snapshot.from_dict(d, path="checkpoint.snapshot")


def test_from_json_and_to_json() -> None:
    snap = rich_agent().take_snapshot(preset="all", app_data={"é": "✓"})
    again = Snapshot.from_json(snap.to_json())
    assert again == snap
    assert Snapshot.from_json(snap.to_json().encode()) == snap
    for bad in ("{", "[1]", "\xff", "NaN", "[" * 100_000):
        with pytest.raises(SnapshotError):
            Snapshot.from_json(bad)


def test_hand_built_snapshot_with_garbage_fails_cleanly_on_load_and_to_dict() -> None:
    target = Agent(messages=[{"role": "user", "content": [{"text": "mine"}]}])
    with pytest.raises(SnapshotError, match=r"snapshot\.data\.messages\[0\]"):
        target.load_snapshot(Snapshot(data={"messages": ["not a message"]}))
    with pytest.raises(SnapshotError, match=r"snapshot\.data\.state\.x"):
        Snapshot(data={"state": {"x": {1, 2}}}).to_dict()
    with pytest.raises(SnapshotError, match=r"snapshot\.data must be an object"):
        target.load_snapshot(Snapshot(data=[]))  # type: ignore[arg-type]
    assert target.messages == [{"role": "user", "content": [{"text": "mine"}]}]


def test_hand_built_snapshot_with_raw_bytes_is_encoded() -> None:
    snap = Snapshot(data={"messages": rich_messages()})
    d = snap.to_dict()
    json.dumps(d)
    target = Agent()
    target.load_snapshot(snap)
    assert target.messages == rich_messages()


# -- size report, equality, repr ----------------------------------------------------------


def test_size_report_counts_bytes_per_field_and_the_largest_messages() -> None:
    agent = rich_agent()
    big = "x" * 5000
    agent.messages.append({"role": "user", "content": [{"text": big}]})
    snap = agent.take_snapshot(preset="all", app_data={"k": "v"})
    report = snap.size_report(top=2)
    data = snap.to_dict()["data"]
    for name in FIELDS:
        assert report["fields"][name] == len(json.dumps(data[name], separators=(",", ":"), ensure_ascii=False).encode())
    assert report["fields"]["app_data"] == len(b'{"k":"v"}')
    assert report["total_bytes"] == sum(report["fields"].values())
    assert report["message_count"] == 5
    sizes = [len(json.dumps(m, separators=(",", ":"), ensure_ascii=False).encode()) for m in data["messages"]]
    assert sizes[4] > max(sizes[:4])
    assert [m["index"] for m in report["largest_messages"]] == sorted(range(5), key=lambda i: -sizes[i])[:2]
    assert [m["bytes"] for m in report["largest_messages"]] == sorted(sizes, reverse=True)[:2]
    assert report["largest_messages"][0] == {
        "index": 4,
        "role": "user",
        "bytes": len(json.dumps(data["messages"][4], separators=(",", ":"))),
    }
    json.dumps(report)


def test_size_report_without_messages() -> None:
    report = Agent(state={"a": 1}).take_snapshot(include=["state"]).size_report()
    assert report["message_count"] == 0 and report["largest_messages"] == []
    assert report["fields"] == {"state": 7, "app_data": 2}


def test_equality_and_repr() -> None:
    snap = rich_agent().take_snapshot(preset="all")
    copy = Snapshot.from_dict(snap.to_dict())
    assert copy == snap
    copy.data["state"]["x"] = 1
    assert copy != snap
    assert snap != "snapshot"
    assert "messages=4" in repr(snap)


def test_data_can_be_replaced() -> None:
    snap = rich_agent().take_snapshot(preset="all")
    snap.data = {"state": {"only": True}}
    target = Agent(state={"before": 1})
    target.load_snapshot(snap)
    assert target.state.get() == {"only": True}


# -- the JSON API: to_json / to_json_bytes / from_json ------------------------------------


def test_to_json_is_compact_utf8_and_matches_to_dict() -> None:
    snap = rich_agent().take_snapshot(preset="all", app_data={"é": "✓"})
    raw = snap.to_json_bytes()
    assert isinstance(raw, bytes) and raw.decode("utf-8") == snap.to_json()
    assert json.loads(raw) == snap.to_dict()
    assert b'"schema_version":"1.0","scope":"agent"' in raw and ", " not in snap.to_json()[:80]
    assert "✓" in snap.to_json() and "$b64" in snap.to_json()


def test_from_json_accepts_str_bytes_bytearray_and_memoryview_only() -> None:
    text = rich_agent().take_snapshot(preset="all").to_json()
    for form in (text, text.encode(), bytearray(text.encode()), memoryview(text.encode())):
        target = Agent()
        target.load_snapshot(Snapshot.from_json(form))  # type: ignore[arg-type]
        assert target.messages == rich_messages()
    with pytest.raises(SnapshotError, match="must be str or bytes, got dict"):
        Snapshot.from_json({"schema_version": 1})  # type: ignore[arg-type]


def test_from_json_refuses_numbers_too_large_for_a_float_naming_the_path() -> None:
    d = valid_dict()
    d["created_at"] = "2026-01-01T00:00:00Z"  # a timestamp of now may contain the "2.5" replaced below
    text = json.dumps(d)
    with pytest.raises(SnapshotError, match=r"snapshot\.data\.messages\[1\]\.content\[3\]\.toolUse\.input\.n\[1\] is not JSON"):
        Snapshot.from_json(text.replace("2.5", "2.5e400", 1))
    with pytest.raises(SnapshotError, match=r"snapshot\.app_data\.a is not JSON \(non-finite float\)"):
        Snapshot.from_json(text.replace('"app_data": {"a": 1}', '"app_data": {"a": -1e999}'))
    assert Snapshot.from_json(text.replace("2.5", "2.5e300", 1)).data["messages"][1]["content"][3]["toolUse"]["input"]["n"][1] == 2.5e300


@pytest.mark.parametrize(
    ("path", "value", "needle"),
    [
        (["data", "messages", 3, "role"], "system", "snapshot.data.messages[3].role"),
        (["data", "messages", 0, "content", 1, "image", "source"], {"bytes": "raw"}, "messages[0].content[1].image.source.bytes"),
        (["data", "messages", 2, "content", 0, "toolResult", "status"], "ok", "toolResult.status"),
        (["data", "state"], [], "snapshot.data.state must be an object"),
        (["data", "interrupt_state", "context"], {"phase": "x"}, "interrupt_state.context.phase"),
        (["app_data"], "x", "snapshot.app_data must be an object"),
        (["scope"], "session", "snapshot.scope must be one of 'agent', 'multiAgent'"),
    ],
)
def test_from_json_names_the_path_like_from_dict(path: list[Any], value: Any, needle: str) -> None:
    d = valid_dict()
    _set(d, path, value)
    for build in (lambda: Snapshot.from_json(json.dumps(d)), lambda: Snapshot.from_dict(d)):
        with pytest.raises(SnapshotError) as info:
            build()
        assert needle in str(info.value)


def test_a_parsed_snapshot_and_the_agents_it_loads_share_nothing() -> None:
    snap = Snapshot.from_json(rich_agent().take_snapshot(preset="all", app_data={"k": [1]}).to_json())
    expected = snap.to_dict()
    first, second = Agent(), Agent()
    first.load_snapshot(snap)  # takes the parsed dict itself
    second.load_snapshot(snap)  # gets a fresh copy
    first.messages[3]["content"][0]["text"] = "mutated"
    first.messages.append({"role": "user", "content": [{"text": "more"}]})
    first.state.set("user", 1)
    assert second.messages == rich_messages() and second.messages is not first.messages
    assert second.state.get("user") == {"name": "ada", "tags": ["a", "b"]}
    assert snap.to_dict() == expected
    again = snap.to_dict()
    again["data"]["messages"].clear()
    again["app_data"]["k"].append(2)
    assert snap.to_dict() == expected
    third = Agent()
    third.load_snapshot(snap)
    assert third.messages == rich_messages()
    assert third.messages[0]["content"][1]["image"]["source"]["bytes"] == PNG  # type: ignore[typeddict-item]


def test_to_dict_of_a_parsed_snapshot_can_be_mutated_freely() -> None:
    snap = Snapshot.from_json(rich_agent().take_snapshot(preset="all").to_json())
    first = snap.to_dict()  # hands over the parsed dict
    first["data"]["messages"][0]["content"][0]["text"] = "changed"
    assert snap.to_dict()["data"]["messages"][0]["content"][0]["text"] == "Look at these"
    assert snap.data["messages"][0]["content"][0]["text"] == "Look at these"


def test_data_of_a_parsed_snapshot_is_live_and_checked_again_on_load() -> None:
    snap = Snapshot.from_json(rich_agent().take_snapshot(preset="all").to_json())
    snap.data["state"]["extra"] = True
    assert json.loads(snap.to_json())["data"]["state"]["extra"] is True
    snap.data["messages"][0]["role"] = "robot"
    with pytest.raises(SnapshotError, match=r"snapshot\.data\.messages\[0\]\.role"):
        Agent().load_snapshot(snap)
    snap.data["messages"][0]["role"] = "user"
    snap.data["state"]["bad"] = {1, 2}
    with pytest.raises(SnapshotError, match=r"snapshot\.data\.state\.bad is not JSON \(set\)"):
        snap.to_json()


def test_to_json_of_a_hand_built_snapshot_encodes_bytes_and_names_bad_paths() -> None:
    snap = Snapshot(data={"messages": rich_messages()}, app_data={"a": 1})
    target = Agent()
    target.load_snapshot(Snapshot.from_json(snap.to_json()))
    assert target.messages == rich_messages()
    with pytest.raises(SnapshotError, match=r"snapshot\.app_data\.x is not JSON \(bytes\)"):
        Snapshot(data={}, app_data={"x": b"1"}).to_json()
    with pytest.raises(SnapshotError, match=r"snapshot\.data must be an object"):
        Snapshot(data=[]).to_json()  # type: ignore[arg-type]


def test_concurrent_loads_of_one_parsed_snapshot_never_share_data() -> None:
    snap = Snapshot.from_json(rich_agent().take_snapshot(preset="all").to_json())
    agents = [Agent() for _ in range(8)]
    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(lambda agent: agent.load_snapshot(snap), agents))
    for agent in agents:
        assert agent.messages == rich_messages()
    assert len({id(agent.messages) for agent in agents}) == len(agents)
    agents[0].messages[0]["content"][0]["text"] = "changed"
    assert all(agent.messages[0]["content"][0]["text"] == "Look at these" for agent in agents[1:])
