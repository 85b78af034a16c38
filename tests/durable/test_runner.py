"""Agent integration of durable runs: turns, resume, crash at each step boundary."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tether import Agent, tool
from tether.durable import MemoryStore, RunStore, SQLiteStore
from tether.errors import PromptError, RunNotFoundError, StoreError
from tether.models import ScriptedModel

from .helpers import Crash, Plan, make_agent


def reference_messages() -> list[Any]:
    plan = Plan()
    agent = make_agent(MemoryStore(), plan)
    result = agent("go", run_id="ref")
    assert result.stop_reason == "end_turn"
    return agent.messages


def test_turns_of_a_run_accumulate(store: RunStore) -> None:
    agent = Agent(model=ScriptedModel(["one", "two"], stateful=True), store=store)
    assert str(agent("first", run_id="chat")) == "one"
    assert str(agent("second", run_id="chat")) == "two"
    fresh = Agent(model=ScriptedModel(["one", "two", "three"], stateful=True), store=store)
    assert str(fresh("third", run_id="chat")) == "three"
    assert [m["role"] for m in fresh.messages] == ["user", "assistant"] * 3
    assert fresh.run_state.metrics["model_call_count"] == 3


def test_uninterrupted_run_records_everything(store: RunStore) -> None:
    plan = Plan()
    agent = make_agent(store, plan)
    agent("go", run_id="r")
    loaded = store.load("r")
    assert loaded is not None
    assert loaded.messages == agent.messages == reference_messages()
    assert plan.log == [f"r/{k}" for k in ("tooluse_1_0", "a", "b")]


@pytest.mark.parametrize(
    ("point", "skip", "reruns"),
    [
        ("model", 0, []),  # crash in the first model call: the prompt is kept, the call repeats
        ("model", 1, []),  # crash in the second model call: the first cycle is not redone
        ("tool_before_effect", 0, []),  # started, no effect, no result: in doubt, re-run
        ("tool_after_effect", 0, ["r/tooluse_1_0"]),  # effect done, result lost: re-run same key
        ("tool_after_effect", 1, ["r/a"]),  # crash in the second tool of a cycle: "a" re-runs
        ("tool_after_effect", 2, ["r/b"]),  # "a" finished before the crash, so only "b" re-runs
        ("model", 2, []),  # crash in the last model call
    ],
)
def test_resume_after_crash_at_each_boundary(store: RunStore, point: str, skip: int, reruns: list[str]) -> None:
    plan = Plan(**{point: skip})
    agent = make_agent(store, plan)
    with pytest.raises(Crash):
        agent("go", run_id="r")
    with pytest.raises(PromptError, match="resume"):
        make_agent(store, plan)("another prompt", run_id="r")
    resumed = make_agent(store, plan)  # a new agent, as in a new process
    result = resumed.resume("r")
    assert result.stop_reason == "end_turn" and str(result) == "done"
    assert resumed.messages == reference_messages()
    once = [f"r/{k}" for k in ("tooluse_1_0", "a", "b")]
    assert sorted(plan.log) == sorted(once + reruns)
    assert resumed.run_state.metrics["model_call_count"] == 3 + 0  # a crashed call recorded nothing


def test_resume_in_the_same_agent_after_a_crash(store: RunStore) -> None:
    plan = Plan(tool_after_effect=1)
    agent = make_agent(store, plan)
    with pytest.raises(Crash):
        agent("go", run_id="r")
    assert str(agent.resume("r")) == "done"
    assert agent.messages == reference_messages()


def test_resume_of_finished_run_does_nothing(store: RunStore) -> None:
    agent = make_agent(store, Plan())
    agent("go", run_id="r")
    fresh = make_agent(store, Plan())
    result = fresh.resume("r")
    assert result.stop_reason == "end_turn" and str(result) == "done"
    assert fresh.model.index == 0  # type: ignore[attr-defined]  # no model call
    assert result.metrics.cycle_count == 3 and result.metrics.tool_call_count == 3


def test_resume_unknown_run(store: RunStore) -> None:
    with pytest.raises(RunNotFoundError, match="ghost"):
        make_agent(store, Plan()).resume("ghost")


def test_bad_run_id_refused(store: RunStore) -> None:
    with pytest.raises(StoreError, match="run_id"):
        make_agent(store, Plan())("go", run_id="../../etc/passwd")


def test_default_store_lives_under_tether_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TETHER_HOME", str(tmp_path / "home"))
    agent = Agent(model=ScriptedModel(["hi"]))
    agent("hello", run_id="x")
    assert isinstance(agent.store, SQLiteStore)
    assert agent.store.path == (tmp_path / "home" / "runs.db").resolve()
    loaded = SQLiteStore(tmp_path / "home" / "runs.db").load("x")
    assert loaded is not None and len(loaded.messages) == 2


def test_trimming_is_recorded_without_rewriting(store: RunStore) -> None:
    from tether.conversation import SlidingWindowConversationManager

    replies = [f"r{i}" for i in range(8)]
    agent = Agent(model=ScriptedModel(replies, stateful=True), store=store, conversation_manager=SlidingWindowConversationManager(4))
    for i in range(8):
        agent(f"q{i}", run_id="w")
    loaded = store.load("w")
    assert loaded is not None
    assert loaded.messages == agent.messages and len(agent.messages) == 4
    assert loaded.head["next_seq"] == 16  # every message written once
    assert loaded.head["conversation_manager_state"]["removed_message_count"] == 12


def test_summary_rewrite_starts_new_segment(store: RunStore) -> None:
    agent = Agent(model=ScriptedModel(["a", "b"], stateful=True), store=store)
    agent("one", run_id="s")
    agent.run_state.messages[:2] = [{"role": "user", "content": [{"text": "summary"}]}]
    agent("two", run_id="s")
    loaded = store.load("s")
    assert loaded is not None and loaded.messages == agent.messages
    assert [m["content"][0]["text"] for m in loaded.messages] == ["summary", "two", "b"]  # type: ignore[typeddict-item]


async def test_stream_async_runs_a_durable_turn(store: RunStore) -> None:
    agent = make_agent(store, Plan())
    kinds = [event["type"] async for event in agent.stream_async("go", run_id="s")]
    assert kinds[-1] == "result" and "tool_result" in kinds
    loaded = store.load("s")
    assert loaded is not None and loaded.messages == agent.messages == reference_messages()


def test_each_agent_owns_its_binding_and_new_runs_start_from_its_own_base(store: RunStore) -> None:
    a = Agent(model=ScriptedModel(["a1", "a2"], stateful=True), store=store, system_prompt="You are A.", state={"who": "a"})
    b = Agent(model=ScriptedModel(["b1", "b2"], stateful=True), store=store, system_prompt="You are B.")
    a("hi", run_id="run-a")
    b("hi", run_id="run-b")
    a("again", run_id="run-a-2")  # a new run of A starts from A's base, not from run-a's conversation
    loaded_a, loaded_b, loaded_a2 = store.load("run-a"), store.load("run-b"), store.load("run-a-2")
    assert loaded_a is not None and loaded_b is not None and loaded_a2 is not None
    assert loaded_a.head["system_prompt"] == loaded_a2.head["system_prompt"] == [{"text": "You are A."}]
    assert loaded_b.head["system_prompt"] == [{"text": "You are B."}] and loaded_b.head["state"] == {}
    assert len(loaded_a2.messages) == 2 and loaded_a2.head["state"] == {"who": "a"}
    assert "_durable" not in vars(a) and a.run_state is not b.run_state


def test_default_stores_are_owned_per_agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TETHER_HOME", str(tmp_path))
    first, second = Agent(model=ScriptedModel(["1"])), Agent(model=ScriptedModel(["2"]))
    first("x", run_id="one")
    second("y", run_id="two")
    assert first.store is not second.store  # no module-level cache shared between agents
    assert isinstance(first.store, SQLiteStore) and first.store.path == second.store.path  # type: ignore[union-attr]
    assert [s.run_id for s in first.store.list_runs()] == ["one", "two"]


def test_a_lone_surrogate_in_a_prompt_is_refused_before_anything_is_stored(store: RunStore) -> None:
    agent = Agent(model=ScriptedModel(["ok", "fine"], stateful=True), store=store)
    with pytest.raises(PromptError, match=r"^prompt holds a lone surrogate"):
        agent("hi \ud800", run_id="sur-1")  # valid JSON text ("\\ud800"), but no store can hold it
    assert store.head("sur-1") is None
    agent("hi", run_id="sur-1")
    before = store.head("sur-1")
    with pytest.raises(PromptError, match=r"^prompt\[0\]\.text holds a lone surrogate"):
        agent([{"text": "\udc00"}], run_id="sur-1")
    assert store.head("sur-1") == before


def test_a_lone_surrogate_from_the_model_or_a_tool_is_stored_as_it_came(store: RunStore) -> None:
    """Output is kept, not refused: a model's text or a tool's result holding a lone surrogate (a
    stream split inside a surrogate pair) is stored escaped and reads back as the same ``str``;
    before, SQLite raised a raw UnicodeEncodeError and PostgreSQL hung at the lease's end."""

    @tool
    def broken() -> str:
        """Returns text with a lone surrogate."""
        return "half \udc00 a pair"

    script: list[Any] = [
        {"role": "assistant", "content": [{"text": "calling \ud83d"}, {"toolUse": {"toolUseId": "t1", "name": "broken", "input": {}}}]},
        "done \ud800",
    ]
    agent = Agent(model=ScriptedModel(script, stateful=True), tools=[broken], store=store)
    result = agent("go", run_id="sur-out")
    assert result.stop_reason == "end_turn" and str(result) == "done \ud800"
    loaded = store.load("sur-out")
    assert loaded is not None and loaded.messages == agent.messages
    assert loaded.messages[1]["content"][0] == {"text": "calling \ud83d"}
    assert loaded.messages[2]["content"][0]["toolResult"]["content"] == [{"text": "half \udc00 a pair"}]
    assert loaded.messages[-1]["content"] == [{"text": "done \ud800"}]
