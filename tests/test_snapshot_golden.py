"""Golden snapshot files of every released schema version load forever, with exact content.

``tests/golden/snapshot_v1.json`` (Tether's legacy integer version) and ``snapshot_v1.0.json``
(Strands' version string, the shapes Strands reads) were produced by :func:`build_v1` (real
code: a scripted run with a tool returning an image) by the Tether of their time. Never
regenerate a released version's file; add a new file for a new version. To write a file for the
current version: ``python -m tests.test_snapshot_golden``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tether import Agent, ScriptedModel, SlidingWindowConversationManager, Snapshot, tool
from tether.models.scripted import tool_call
from tether.snapshot import SNAPSHOT_SCHEMA_VERSION
from tether.snapshot.migrations import SNAPSHOT_VERSIONS

GOLDEN = Path(__file__).parent / "golden"
PNG = bytes(range(0, 256, 15)) + b"\x89PNG\x00\xff"


def build_v1() -> dict[str, Any]:
    """Run a small conversation for real and snapshot it (used once to write the golden file)."""

    @tool(run_in_thread=False)
    def chart(city: str) -> dict[str, Any]:
        """Draw the forecast chart of a city.

        Args:
            city: The city.
        """
        return {"status": "success", "content": [{"text": f"chart for {city}"}, {"image": {"format": "png", "source": {"bytes": PNG}}}]}

    agent = Agent(
        model=ScriptedModel([tool_call("chart", {"city": "Lyon"}, tool_use_id="tu_1", text="Drawing."), "Sunny all week."], stateful=True),
        tools=[chart],
        system_prompt=[{"text": "You are a weather bot."}, {"cachePoint": {"type": "default"}}],
        conversation_manager=SlidingWindowConversationManager(window_size=40),
        state={"user": {"id": 7, "units": "metric"}},
    )
    agent.run_state.conversation_manager_state = {"removed_message_count": 2}
    agent("Weather in Lyon?")
    snap = agent.take_snapshot(preset="all", app_data={"ticket": "T-42", "tags": ["golden", 1, None, 2.5, True]})
    d = snap.to_dict()
    d["created_at"] = "2026-01-01T00:00:00.000000Z"
    return d


EXPECTED_V1_MESSAGES = [
    {"role": "user", "content": [{"text": "Weather in Lyon?"}]},
    {
        "role": "assistant",
        "content": [{"text": "Drawing."}, {"toolUse": {"toolUseId": "tu_1", "name": "chart", "input": {"city": "Lyon"}}}],
    },
    {
        "role": "user",
        "content": [
            {
                "toolResult": {
                    "toolUseId": "tu_1",
                    "status": "success",
                    "content": [{"text": "chart for Lyon"}, {"image": {"format": "png", "source": {"bytes": PNG}}}],
                }
            }
        ],
    },
    {"role": "assistant", "content": [{"text": "Sunny all week."}]},
]


def load_golden(version: int | str) -> dict[str, Any]:
    result: dict[str, Any] = json.loads((GOLDEN / f"snapshot_v{version}.json").read_text(encoding="utf-8"))
    return result


def test_every_released_version_has_a_golden_file() -> None:
    assert SNAPSHOT_VERSIONS[-1] == SNAPSHOT_SCHEMA_VERSION
    for version in SNAPSHOT_VERSIONS:
        assert (GOLDEN / f"snapshot_v{version}.json").is_file(), f"add tests/golden/snapshot_v{version}.json"


@pytest.mark.parametrize("version", SNAPSHOT_VERSIONS)
def test_every_golden_file_loads_with_exact_content(version: int | str) -> None:
    raw = load_golden(version)
    assert raw["schema_version"] == version
    snap = Snapshot.from_dict(raw)
    assert snap.schema_version == SNAPSHOT_SCHEMA_VERSION
    agent = Agent(conversation_manager=SlidingWindowConversationManager(window_size=40))
    agent.load_snapshot(snap)
    assert agent.messages == EXPECTED_V1_MESSAGES
    assert agent.run_state.conversation_manager_state == {"removed_message_count": 2}
    assert agent.run_state.interrupt_state == {}


def test_the_current_golden_file_is_in_strands_shapes() -> None:
    data = load_golden(SNAPSHOT_SCHEMA_VERSION)["data"]
    assert data["conversation_manager_state"] == {
        "__name__": "SlidingWindowConversationManager",
        "removed_message_count": 2,
        "model_call_count": 0,
    }
    assert data["interrupt_state"] == {"interrupts": {}, "context": {}, "activated": False}


def test_legacy_v1_migrates_to_exactly_the_current_golden_file() -> None:
    """The legacy file and the current one were built by the same run: migrating one gives the other."""
    assert Snapshot.from_dict(load_golden(1)).to_dict() == load_golden(SNAPSHOT_SCHEMA_VERSION)


def test_golden_v1_loads_with_exact_content() -> None:
    raw = load_golden(1)
    assert raw["schema_version"] == 1
    snap = Snapshot.from_dict(raw)
    assert snap.created_at == "2026-01-01T00:00:00.000000Z"
    assert snap.app_data == {"ticket": "T-42", "tags": ["golden", 1, None, 2.5, True]}
    agent = Agent(conversation_manager=SlidingWindowConversationManager(window_size=40))
    agent.load_snapshot(snap)
    assert agent.messages == EXPECTED_V1_MESSAGES
    assert agent.system_prompt_content == [{"text": "You are a weather bot."}, {"cachePoint": {"type": "default"}}]
    assert agent.state.get() == {"user": {"id": 7, "units": "metric"}}
    assert agent.run_state.conversation_manager_state == {"removed_message_count": 2}
    assert agent.run_state.model_state == {"scripted_index": 2}
    assert agent.run_state.interrupt_state == {}


def test_golden_current_reserializes_to_the_same_json() -> None:
    raw = load_golden(SNAPSHOT_SCHEMA_VERSION)
    assert Snapshot.from_dict(raw).to_dict() == raw
    assert json.loads(Snapshot.from_json(json.dumps(raw)).to_json()) == raw


def test_golden_v1_agent_continues() -> None:
    """The restored model_state (scripted_index 2) makes a stateful script resume at its third reply."""
    agent = Agent(
        model=ScriptedModel(["used before", "used before", "Rain tomorrow."], stateful=True),
        conversation_manager=SlidingWindowConversationManager(),
    )
    agent.load_snapshot(Snapshot.from_dict(load_golden(1)))
    result = agent("And tomorrow?")
    assert result.stop_reason == "end_turn"
    assert agent.messages[-1] == {"role": "assistant", "content": [{"text": "Rain tomorrow."}]}


if __name__ == "__main__":
    path = GOLDEN / f"snapshot_v{SNAPSHOT_SCHEMA_VERSION}.json"
    if path.exists():
        raise SystemExit(f"{path} exists; golden files of released versions are never regenerated")
    path.write_text(json.dumps(build_v1(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {path}")
