"""The snapshot shapes (Strands') of manager and interrupt state, and the run's (Tether's)."""

from __future__ import annotations

import copy
from typing import Any

from tether.snapshot.shapes import (
    interrupt_state_in,
    interrupt_state_out,
    legacy_manager_state,
    manager_state_in,
    manager_state_out,
)

RECORD = {"id": "i1", "name": "approve", "reason": {"n": 1}, "source": "tool", "tool_use_id": "tu_1"}


def test_an_empty_run_state_is_strands_empty_state_and_back() -> None:
    assert interrupt_state_out({}) == {"interrupts": {}, "context": {}, "activated": False}
    assert interrupt_state_in(interrupt_state_out({})) == {}


def test_an_interrupted_run_round_trips_with_its_tether_fields_where_strands_ignores_them() -> None:
    run: dict[str, Any] = {
        "interrupts": {"i1": dict(RECORD), "i2": {**RECORD, "id": "i2", "response": None}, "i3": {**RECORD, "id": "i3", "response": "ok"}},
        "activated": True,
        "context": {"phase": "tools", "cycle_index": 0},
        "output_tool": "Weather",
        "metrics": {"cycle_count": 1},
    }
    before = copy.deepcopy(run)
    wire = interrupt_state_out(run)
    assert run == before, "the run's state is not changed"
    assert wire["interrupts"]["i1"] == {"id": "i1", "name": "approve", "reason": {"n": 1}, "response": None}
    assert set(wire["interrupts"]["i3"]) == {"id", "name", "reason", "response"}, "records in Strands' shape only"
    assert wire["tether_interrupts"]["i2"] == {"source": "tool", "tool_use_id": "tu_1", "answered": True}
    assert "answered" not in wire["tether_interrupts"]["i1"]
    assert interrupt_state_in(wire) == before


def test_old_tether_records_keep_their_meaning() -> None:
    old = {"interrupts": {"i1": dict(RECORD), "i2": {**RECORD, "id": "i2", "response": None}}, "activated": True}
    assert interrupt_state_in(old)["interrupts"] == old["interrupts"], "a response key means answered, even None"


def test_strands_records_answered_when_their_response_is_set() -> None:
    wire = {
        "interrupts": {
            "a": {"id": "a", "name": "n", "reason": None, "response": None},
            "b": {"id": "b", "name": "n", "reason": None, "response": 2},
        }
    }
    records = interrupt_state_in(wire)["interrupts"]
    assert "response" not in records["a"] and records["b"]["response"] == 2
    assert interrupt_state_out(interrupt_state_in({**wire, "context": {}, "activated": False})) == {
        **wire,
        "context": {},
        "activated": False,
    }


def test_manager_states() -> None:
    assert manager_state_out("sliding_window", "SlidingWindowConversationManager", {"removed_message_count": 1}) == {
        "__name__": "SlidingWindowConversationManager",
        "removed_message_count": 1,
        "model_call_count": 0,
    }
    assert manager_state_out("null", "NullConversationManager", {}) == {"__name__": "NullConversationManager", "removed_message_count": 0}
    assert manager_state_in({"__name__": "SummarizingConversationManager", "removed_message_count": 1, "summary_message": None}) == {
        "removed_message_count": 1
    }
    assert legacy_manager_state({"kind": "null", "removed_message_count": 2}) == {
        "__name__": "NullConversationManager",
        "removed_message_count": 2,
    }
    assert legacy_manager_state({"kind": "custom"}) == {"kind": "custom"}
