"""Property tests: random valid snapshots round-trip exactly; garbage raises only SnapshotError."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tether import Agent, SlidingWindowConversationManager, Snapshot, SnapshotError
from tether.errors import IncompatibleResumeError

from ._json_paths import json_paths

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

text = st.text(max_size=12)
json_scalar = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False), text)
json_value = st.recursive(
    json_scalar,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(text, inner, max_size=4)),
    max_leaves=12,
)
json_object = st.dictionaries(text, json_value, max_size=4)
raw_bytes = st.binary(max_size=24)


def source(kind: str) -> st.SearchStrategy[dict[str, Any]]:
    if kind == "image":
        return st.fixed_dictionaries({"format": st.sampled_from(["png", "jpeg"]), "source": st.fixed_dictionaries({"bytes": raw_bytes})})
    return st.fixed_dictionaries(
        {"format": st.sampled_from(["pdf", "txt"]), "name": text, "source": st.fixed_dictionaries({"bytes": raw_bytes})}
    )


tool_result = st.fixed_dictionaries(
    {
        "toolUseId": text,
        "status": st.sampled_from(["success", "error"]),
        "content": st.lists(
            st.one_of(
                st.builds(lambda t: {"text": t}, text),
                st.builds(lambda j: {"json": j}, json_value),
                st.builds(lambda s: {"image": s}, source("image")),
                st.builds(lambda s: {"document": s}, source("document")),
            ),
            max_size=3,
        ),
    }
)
reasoning = st.one_of(
    st.builds(lambda t: {"reasoningText": {"text": t}}, text),
    st.builds(lambda t, s: {"reasoningText": {"text": t, "signature": s}}, text, text),
    st.builds(lambda b: {"redactedContent": b}, raw_bytes),
)
block = st.one_of(
    st.builds(lambda t: {"text": t}, text),
    st.builds(lambda i, n, j: {"toolUse": {"toolUseId": i, "name": n, "input": j}}, text, text, json_value),
    st.builds(lambda r: {"toolResult": r}, tool_result),
    st.builds(lambda s: {"image": s}, source("image")),
    st.builds(lambda s: {"document": s}, source("document")),
    st.builds(lambda r: {"reasoningContent": r}, reasoning),
    st.just({"cachePoint": {"type": "default"}}),
)
message = st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant"]), "content": st.lists(block, max_size=4)})
system_prompt = st.one_of(
    st.none(),
    st.lists(st.one_of(st.builds(lambda t: {"text": t}, text), st.just({"cachePoint": {"type": "default"}})), max_size=3),
)


@st.composite
def interrupt_states(draw: st.DrawFn) -> dict[str, Any]:
    if draw(st.booleans()):
        return {}
    ids = draw(st.lists(text, max_size=3, unique=True))
    table = {
        ident: {"id": ident, "name": draw(text), "reason": draw(json_value), "source": "tool", "tool_use_id": draw(text)} for ident in ids
    }
    context = {
        "phase": "tools",
        "cycle_index": draw(st.integers(0, 50)),
        "invocation_cycles": draw(st.integers(0, 5)),
        "invocation_tokens": draw(st.integers(0, 500)),
        "results": draw(st.dictionaries(text, tool_result, max_size=2)),
        "started": draw(st.lists(text, max_size=2)),
        "pending_pause": None,
        "structured_output": draw(json_value),
        "corrective_turn_used": draw(st.booleans()),
        "stop_reason": None,
    }
    return {"interrupts": table, "activated": draw(st.booleans()), "context": context}


@st.composite
def agents(draw: st.DrawFn) -> Agent:
    agent = Agent(
        messages=draw(st.lists(message, max_size=6)),
        state=draw(json_object),
        system_prompt=draw(system_prompt),
        conversation_manager=SlidingWindowConversationManager(),
    )
    agent.run_state.model_state = draw(json_object)
    agent.run_state.conversation_manager_state = {"removed_message_count": draw(st.integers(0, 100))}
    agent.run_state.interrupt_state = draw(interrupt_states())
    return agent


field_selection = st.one_of(
    st.just({"preset": "all"}),
    st.just({"preset": "session"}),
    st.builds(
        lambda names: {"include": names}, st.lists(st.sampled_from(["messages", "state", "system_prompt", "interrupt_state"]), min_size=1)
    ),
)


@SETTINGS
@given(agents(), json_object, field_selection)
def test_random_snapshots_round_trip_exactly(agent: Agent, app_data: dict[str, Any], selection: dict[str, Any]) -> None:
    original_messages = agent.messages
    snap = agent.take_snapshot(app_data=app_data, **selection)
    d = snap.to_dict()
    text_form = json.dumps(d, allow_nan=False)
    again = Snapshot.from_dict(json.loads(text_form))
    assert again.to_dict() == d
    assert json.dumps(again.to_dict(), allow_nan=False) == text_form

    # The agents here have no tools, and a random conversation may end in calls of tools: the
    # resume verdict would refuse those pending calls (tether.manifest); this test is about the data.
    allow = ["tool_removed"]
    target = Agent(conversation_manager=SlidingWindowConversationManager())
    target.load_snapshot(again, allow=allow)
    assert target.take_snapshot(**selection).data == snap.data
    if "messages" in snap.data:
        assert target.messages == original_messages
        assert target.messages is not original_messages

    parsed = Snapshot.from_json(snap.to_json())  # the JSON API gives the same document and agent
    assert json.loads(snap.to_json()) == d
    for _ in range(2):  # the first load takes the parsed data, the second a copy
        other = Agent(conversation_manager=SlidingWindowConversationManager())
        other.load_snapshot(parsed, allow=allow)
        assert other.take_snapshot(**selection).to_dict()["data"] == d["data"]
        if "messages" in snap.data:
            assert other.messages == original_messages
    assert parsed.to_dict() == d


def nested(depth: int, as_object: bool) -> Any:
    """A value nested ``depth`` arrays (or objects) deep: deeper than Tether reads or the
    interpreter's stack allows, from 600 levels up."""
    value: Any = "1.0"
    for _ in range(depth):
        value = {"k": value} if as_object else [value]
    return value


deep_value = st.builds(nested, st.sampled_from([600, 1_000, 10_000]), st.booleans())
garbage_scalar = st.one_of(
    json_scalar,
    deep_value,
    st.floats(),
    raw_bytes,
    st.tuples(st.integers()),
    st.sets(st.integers(), max_size=2),
    st.just(object()),
    st.just(bytearray(b"x")),
)
garbage = st.recursive(
    garbage_scalar,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.one_of(text, st.integers(), st.sampled_from(["$b64", "role", "content", "text", "data"])), inner, max_size=3),
    ),
    max_leaves=8,
)


REFUSALS = (SnapshotError, IncompatibleResumeError)
"""What loading damaged input may raise: a SnapshotError naming the field, or, for a snapshot
that parses (say one whose scope was dropped, so it resumes a pending call), the resume verdict's
refusal of a call to a tool this tool-less agent lacks (issue 32: nothing is changed)."""


def _only_snapshot_errors(value: Any) -> None:
    try:
        text = json.dumps(value)
    except (TypeError, ValueError, RecursionError):
        pass
    else:
        _only_snapshot_errors_from_json(text)
    try:
        snap = Snapshot.from_dict(value)
    except SnapshotError:
        return
    json.dumps(snap.to_dict(), allow_nan=False)  # accepted input must be fully valid
    target = Agent(conversation_manager=SlidingWindowConversationManager())
    try:
        target.load_snapshot(snap)
    except REFUSALS:
        return


def _only_snapshot_errors_from_json(text: str) -> None:
    try:
        snap = Snapshot.from_json(text)
    except SnapshotError:
        return
    json.loads(snap.to_json())  # accepted input must be fully valid
    json.dumps(snap.to_dict(), allow_nan=False)
    try:
        Agent(conversation_manager=SlidingWindowConversationManager()).load_snapshot(snap)
    except REFUSALS:
        return


@SETTINGS
@given(garbage)
def test_garbage_raises_only_snapshot_error(value: Any) -> None:
    _only_snapshot_errors(value)
    try:
        Agent().load_snapshot(value)
    except REFUSALS:
        pass


@SETTINGS
@given(st.dictionaries(st.sampled_from(["schema_version", "scope", "created_at", "data", "app_data", "x"]), garbage, max_size=5))
def test_garbage_with_snapshot_keys_raises_only_snapshot_error(value: dict[str, Any]) -> None:
    _only_snapshot_errors(value)


@SETTINGS
@given(agents(), st.data())
def test_garbage_nested_in_a_valid_snapshot_raises_only_snapshot_error(agent: Agent, data: st.DataObject) -> None:
    d = agent.take_snapshot(preset="all", app_data={"a": [1]}).to_dict()
    location = data.draw(st.sampled_from(json_paths(d)[1:]))
    parent: Any = d
    for part in location[:-1]:
        parent = parent[part]
    if data.draw(st.booleans()) and isinstance(parent, dict):
        del parent[location[-1]]
    else:
        parent[location[-1]] = data.draw(garbage)
    _only_snapshot_errors(d)


def _planted(document: dict[str, Any], location: tuple[Any, ...], value: Any) -> dict[str, Any]:
    """A copy of ``document`` with ``value`` at ``location``."""
    copied: dict[str, Any] = json.loads(json.dumps(document))
    parent: Any = copied
    for part in location[:-1]:
        parent = parent[part]
    parent[location[-1]] = value
    return copied


def test_a_value_nested_1000_deep_anywhere_raises_only_snapshot_error() -> None:
    """Deterministic sweep (hypothesis rarely draws these): at every place of a real snapshot,
    a value nested 1,000 deep is a SnapshotError naming the field, by every loading path."""
    agent = Agent(messages=[{"role": "user", "content": [{"text": "q"}]}], state={"k": [1, {"a": 2}]})
    d = agent.take_snapshot(preset="all", app_data={"a": [1]}).to_dict()
    for location in json_paths(d)[1:]:
        for as_object in (False, True):
            deep = _planted(d, location, nested(1_000, as_object))
            field = ".".join(str(part) for part in ("snapshot", *location[: 2 if location[0] == "data" else 1]))
            with pytest.raises(SnapshotError) as caught:
                Agent().load_snapshot(deep)
            assert field in str(caught.value), (location, str(caught.value)[:200])
            _only_snapshot_errors(deep)
    text = '{"schema_version": "1.0", "scope": "agent", "data": {"state": {"deep": ' + "[" * 1_000 + "]" * 1_000 + "}}}"
    with pytest.raises(SnapshotError, match=r"snapshot is not valid JSON: .*nested more than 512 levels deep"):
        Snapshot.from_json(text)


def test_state_deeper_than_the_text_bound_is_captured_and_loaded_but_refused_as_json_text() -> None:
    """The 512-level bound is on JSON text Tether reads, not on what an agent holds: a 600-deep
    state is snapshotted and loaded as before; only its JSON text is refused, by name."""
    deep = nested(600, False)
    snap = Agent(state={"deep": deep}).take_snapshot(preset="all")
    target = Agent()
    target.load_snapshot(snap)
    assert target.state.get("deep") == deep and snap.to_dict()["data"]["state"] == {"deep": deep}
    with pytest.raises(SnapshotError, match=r"snapshot is not valid JSON: nested more than 512 levels deep"):
        Snapshot.from_json(snap.to_json())


def test_a_deep_value_beside_raw_bytes_raises_only_snapshot_error() -> None:
    """A snapshot holding raw bytes in its messages (as Strands keeps them in memory) is loaded
    through the envelope path; a deep value elsewhere in it (deeper than the recursion limit
    allows a recursive walk, shallower than the copy's bound) is a SnapshotError there too."""
    image = {"image": {"format": "png", "source": {"bytes": b"\x89PNG"}}}
    for depth in (300, 450, 600, 1_000):
        for as_object in (False, True):
            d = {
                "schema_version": "1.0",
                "scope": "agent",
                "data": {"messages": [{"role": "user", "content": [{"text": "q"}, image, {"odd": nested(depth, as_object)}]}]},
            }
            _only_snapshot_errors(d)
