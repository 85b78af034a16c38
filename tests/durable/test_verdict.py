"""Deploy simulations on durable runs: a run paused on an interrupt, or killed mid-tool, then
resumed by changed code; the verdict each time, and an incompatible one changes nothing stored."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.manifest.deploys import Killed, answer, build
from tether import IncompatibleResumeError
from tether.durable import RunStore, SQLiteStore
from tether.models import ScriptedModel

EXPECTED = {
    "same": ("same", []),
    "renamed": ("migratable", ["tool_renamed:send"]),
    "optional": ("compatible", ["optional_added:send"]),
    "prompt": ("compatible", ["prompt_changed"]),
    "removed": ("incompatible", ["tool_removed:send"]),
    "required": ("incompatible", ["required_added:send"]),
    "weakened": ("incompatible", ["effect_weakened:send"]),
}


def stored(store: RunStore, run_id: str) -> Any:
    """Everything the store holds of the run: head, every step, live messages and results."""
    run = store.load(run_id)
    assert run is not None
    return store.head(run_id), [step.to_dict() for step in store.history(run_id)], run.messages, run.results, store.size(run_id).tables


def verdicts(store: RunStore, run_id: str) -> list[dict[str, Any]]:
    return [step.verdict for step in store.history(run_id) if step.position == "verdict" and step.verdict is not None]


def interrupted(store: RunStore, log: list[str]) -> Any:
    result = build("same", log, store=store)("go", run_id="r")
    assert result.stop_reason == "interrupt" and log == []
    return result


@pytest.fixture
def sqlite(tmp_path: Path) -> RunStore:
    return SQLiteStore(tmp_path / "runs.db")


@pytest.mark.parametrize("change", ["same", "renamed", "optional", "prompt"])
def test_interrupted_run_resumed_by_changed_code_finishes(sqlite: RunStore, change: str) -> None:
    log: list[str] = []
    first = interrupted(sqlite, log)
    agent = build(change, log, store=sqlite)
    if change == "renamed":
        agent.migrations.rename_tool("send", "deliver")
    result = agent.resume("r", answer(first))
    assert str(result) == "done"
    name = "deliver" if change == "renamed" else "send"
    extra = " priority=0" if change == "optional" else ""
    assert log == [f"{name} bob yes{extra}"]  # the (renamed) tool ran once
    kind, names = EXPECTED[change]
    recorded = verdicts(sqlite, "r")
    if kind == "same":
        assert recorded == []  # nothing to record
    else:
        (verdict,) = recorded
        assert verdict["verdict"] == kind and [d["name"] for d in verdict["differences"] if d["name"] in names] == names
    assert sqlite.head("r")["manifest"]["digest"] == agent.manifest()["digest"]  # type: ignore[index]


@pytest.mark.parametrize("change", ["removed", "required", "weakened", "renamed"])
def test_incompatible_resume_is_refused_and_changes_nothing_stored(store: RunStore, change: str) -> None:
    log: list[str] = []
    first = interrupted(store, log)
    before = stored(store, "r")
    agent = build(change, log, store=store)  # "renamed" without its migration: the tool is gone
    with pytest.raises(IncompatibleResumeError) as caught:
        agent.resume("r", answer(first))
    expected = ["tool_removed:send"] if change == "renamed" else EXPECTED[change][1]
    assert [d.name for d in caught.value.differences] == expected
    for name in expected:
        assert name in str(caught.value)
    assert stored(store, "r") == before and log == []
    # the old code still resumes it
    assert str(build("same", log, store=store).resume("r", answer(first))) == "done"


def test_allowed_incompatible_difference_resumes_and_is_recorded(sqlite: RunStore) -> None:
    log: list[str] = []
    first = interrupted(sqlite, log)
    agent = build("required", log, store=sqlite)
    with pytest.raises(IncompatibleResumeError):
        agent.resume("r", answer(first), allow=["tool_removed:send"])  # not the difference found
    result = agent.resume("r", answer(first), allow=["required_added:send"])
    assert result.stop_reason == "end_turn"  # the call failed on its input; the model went on
    (verdict,) = verdicts(sqlite, "r")
    assert verdict["verdict"] == "incompatible" and verdict["allowed"] == ["required_added:send"]


def test_required_parameter_with_an_input_migration_is_migratable(sqlite: RunStore) -> None:
    log: list[str] = []
    first = interrupted(sqlite, log)
    agent = build("required", log, store=sqlite)
    agent.migrations.tool_input("send", lambda old: {**old, "cc": "audit"})
    assert str(agent.resume("r", answer(first))) == "done"
    assert log == ["send bob yes cc=audit"]
    (verdict,) = verdicts(sqlite, "r")
    assert verdict["verdict"] == "migratable" and "input_migrated:send" in [d["name"] for d in verdict["differences"]]
    # the migrated call is what the store holds: a new process reads it back
    messages = sqlite.load("r").messages  # type: ignore[union-attr]
    uses = [b["toolUse"] for m in messages for b in m["content"] if "toolUse" in b]
    assert uses[-1]["input"] == {"to": "bob", "cc": "audit"}


def killed(store: RunStore, log: list[str]) -> None:
    with pytest.raises(Killed):
        build("same", log, store=store, crash=True)("go", run_id="k")
    assert log == ["send bob started"]


def test_killed_mid_tool_renamed_with_migration_reruns_the_renamed_tool_once(sqlite: RunStore) -> None:
    log: list[str] = []
    killed(sqlite, log)
    agent = build("renamed", log, store=sqlite, no_interrupt=True)
    agent.migrations.rename_tool("send", "deliver")
    assert str(agent.resume("k")) == "done"
    assert log == ["send bob started", "deliver bob"]
    (verdict,) = verdicts(sqlite, "k")
    assert verdict["verdict"] == "migratable"
    steps = [step.position for step in sqlite.history("k")]
    assert steps.index("verdict") < steps.index("resumed")  # judged before the in-doubt call was settled


@pytest.mark.parametrize("change", ["removed", "weakened", "required"])
def test_killed_mid_tool_incompatible_changes_nothing_stored(sqlite: RunStore, change: str) -> None:
    log: list[str] = []
    killed(sqlite, log)
    before = stored(sqlite, "k")
    with pytest.raises(IncompatibleResumeError) as caught:
        build(change, log, store=sqlite, no_interrupt=True).resume("k")
    assert [d.name for d in caught.value.differences] == EXPECTED[change][1]
    assert stored(sqlite, "k") == before and log == ["send bob started"]


def test_definition_changed_between_turns_records_a_new_manifest(sqlite: RunStore) -> None:
    log: list[str] = []
    agent = build("same", log, store=sqlite, no_interrupt=True)
    assert str(agent("go", run_id="t")) == "done"
    first = sqlite.head("t")["manifest"]  # type: ignore[index]
    assert set(first["tools"]) == {"send"} and first["tools"]["send"]["effect"] == "idempotent"
    count = len(sqlite.history("t"))
    agent.system_prompt = "Something new."
    agent.tool_registry.add(build("removed", log).tool_registry.get("other"))  # type: ignore[arg-type]
    agent.model = ScriptedModel(["ok"])
    agent("again", run_id="t")
    steps = sqlite.history("t")[count:]
    assert steps[0].position == "verdict"
    assert steps[0].verdict is not None and steps[0].verdict["verdict"] == "compatible"
    assert {d["name"] for d in steps[0].verdict["differences"]} == {"tool_added:other", "prompt_changed"}
    assert sqlite.head("t")["manifest"]["digest"] != first["digest"]  # type: ignore[index]
    size = len(sqlite.history("t"))
    agent.model = ScriptedModel(["ok"])
    agent("once more", run_id="t")
    assert all(step.position != "verdict" for step in sqlite.history("t")[size:])  # same code: nothing recorded


def prompts_seen(agent: Any) -> list[Any]:
    return [request["system_prompt"] for request in agent.model.calls]


def test_a_resumed_run_calls_the_model_with_the_deployed_prompt(store: RunStore) -> None:
    log: list[str] = []
    first = interrupted(store, log)
    assert store.head("r")["system_prompt"] == [{"text": "You send messages."}]  # type: ignore[index]
    agent = build("prompt", log, store=store)
    agent.model.record_requests = True  # type: ignore[attr-defined]
    assert str(agent.resume("r", answer(first))) == "done" and log == ["send bob yes"]
    assert prompts_seen(agent) == [[{"text": "You send messages (v2)."}]]  # pending work, then the new prompt
    head = store.head("r")
    assert head is not None and head["system_prompt"] == [{"text": "You send messages (v2)."}]  # the prompt in use
    assert head["manifest"]["digest"] == agent.manifest()["digest"]
    (verdict,) = verdicts(store, "r")
    assert verdict["verdict"] == "compatible" and "prompt_changed" in [d["name"] for d in verdict["differences"]]


def test_a_new_turn_after_a_deploy_uses_the_new_prompt(sqlite: RunStore) -> None:
    log: list[str] = []
    assert str(build("same", log, store=sqlite, no_interrupt=True)("go", run_id="t")) == "done"
    agent = build("prompt", log, store=sqlite, no_interrupt=True)
    agent.model = ScriptedModel(["ok"])
    agent.model.record_requests = True
    assert str(agent("again", run_id="t")) == "ok"
    assert prompts_seen(agent) == [[{"text": "You send messages (v2)."}]]
    assert agent.system_prompt == "You send messages (v2)."
    # the old code again (a rollback): its prompt applies, and the verdict says so
    old = build("same", log, store=sqlite, no_interrupt=True)
    old.model = ScriptedModel(["back"])
    old.model.record_requests = True
    assert str(old("and again", run_id="t")) == "back"
    assert prompts_seen(old) == [[{"text": "You send messages."}]]
    assert [v["verdict"] for v in verdicts(sqlite, "t")] == ["compatible", "compatible"]


def test_a_refused_resume_keeps_the_runs_prompt(sqlite: RunStore) -> None:
    log: list[str] = []
    first = interrupted(sqlite, log)
    agent = build("removed", log, store=sqlite)
    agent.system_prompt = "Another prompt."
    with pytest.raises(IncompatibleResumeError):
        agent.resume("r", answer(first))
    assert sqlite.head("r")["system_prompt"] == [{"text": "You send messages."}]  # type: ignore[index]
