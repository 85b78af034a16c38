"""The verdict of a resume: the run's manifest and pending calls against the agent now.

Deploy simulations without a store: a run paused on an interrupt (answered in place, or through a
snapshot loaded by a new agent) or at a checkpoint, resumed by changed code. The durable ones are
tests/durable/test_verdict.py."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tether import Checkpoint, IncompatibleResumeError
from tether.errors import ShapeError
from tether.manifest import Migrations, judge
from tether.manifest.record import check_manifest

from .deploys import answer, build

EXPECTED = {
    "same": ("same", []),
    "optional": ("compatible", ["optional_added:send"]),
    "prompt": ("compatible", ["prompt_changed"]),
    "removed": ("incompatible", ["tool_removed:send"]),
    "required": ("incompatible", ["required_added:send"]),
    "weakened": ("incompatible", ["effect_weakened:send"]),
}
PENDING = [{"toolUseId": "c1", "name": "send", "input": {"to": "bob"}}]


def manifests(change: str) -> tuple[dict[str, Any], dict[str, Any]]:
    return build("same", []).manifest(), build(change, []).manifest()


@pytest.mark.parametrize("change", list(EXPECTED))
def test_verdict_of_each_change_with_a_pending_call(change: str) -> None:
    old, new = manifests(change)
    verdict = judge(old, new, PENDING)  # type: ignore[arg-type]
    kind, names = EXPECTED[change]
    assert verdict.verdict == kind
    assert set(names) <= {d.name for d in verdict.differences}
    assert [d.name for d in verdict.blocking] == (names if kind == "incompatible" else [])


@pytest.mark.parametrize("change", ["removed", "required", "weakened", "prompt", "optional"])
def test_nothing_pending_makes_every_change_compatible(change: str) -> None:
    old, new = manifests(change)
    verdict = judge(old, new, [])
    assert verdict.verdict == "compatible" and not verdict.blocking


def test_rename_is_migratable_only_with_its_migration() -> None:
    old, new = manifests("renamed")
    assert judge(old, new, PENDING).verdict == "incompatible"  # type: ignore[arg-type]
    verdict = judge(old, new, PENDING, Migrations().rename_tool("send", "deliver"))  # type: ignore[arg-type]
    assert verdict.verdict == "migratable"
    assert verdict.migrated == {"c1": ("deliver", {"to": "bob"})}
    wrong = judge(old, new, PENDING, Migrations().rename_tool("send", "nowhere"))  # type: ignore[arg-type]
    assert [d.name for d in wrong.blocking] == ["tool_removed:send"] and "nowhere" in wrong.blocking[0].detail


def test_input_migration_must_supply_the_new_required_parameters() -> None:
    old, new = manifests("required")
    good = judge(old, new, PENDING, Migrations().tool_input("send", lambda i: {**i, "cc": "x"}))  # type: ignore[arg-type]
    assert good.verdict == "migratable" and good.migrated == {"c1": ("send", {"to": "bob", "cc": "x"})}
    bad = judge(old, new, PENDING, Migrations().tool_input("send", lambda i: i))  # type: ignore[arg-type]
    assert [d.name for d in bad.blocking] == ["input_invalid:send"]

    def broken(_: dict[str, Any]) -> dict[str, Any]:
        raise KeyError("boom")

    failed = judge(old, new, PENDING, Migrations().tool_input("send", broken))  # type: ignore[arg-type]
    assert [d.name for d in failed.blocking] == ["input_invalid:send"] and "KeyError" in failed.blocking[0].detail


def test_allow_by_name_or_code() -> None:
    old, new = manifests("removed")
    assert judge(old, new, PENDING, allow=["tool_removed:send"]).blocking == []  # type: ignore[arg-type]
    assert judge(old, new, PENDING, allow=["tool_removed"]).blocking == []  # type: ignore[arg-type]
    assert judge(old, new, PENDING, allow=["tool_removed:other"]).blocking != []  # type: ignore[arg-type]


def test_a_run_without_a_manifest_checks_its_pending_calls_only() -> None:
    _, new = manifests("same")
    assert judge(None, new, PENDING).verdict == "compatible"  # type: ignore[arg-type]
    _, gone = manifests("removed")
    assert [d.name for d in judge(None, gone, PENDING).blocking] == ["tool_removed:send"]  # type: ignore[arg-type]
    _, cc = manifests("required")
    assert [d.name for d in judge(None, cc, PENDING).blocking] == ["required_added:send"]  # type: ignore[arg-type]


def test_a_damaged_manifest_is_a_named_difference_never_trusted() -> None:
    old, new = manifests("same")
    damaged = copy.deepcopy(old)
    damaged["tools"]["send"]["required"] = "to"
    verdict = judge(damaged, new, PENDING)  # type: ignore[arg-type]
    assert [d.name for d in verdict.blocking] == ["manifest_unreadable"] and "required" in verdict.blocking[0].detail
    with pytest.raises(ShapeError, match=r"manifest\.version"):
        check_manifest({**old, "version": 99}, "manifest")


def test_the_manifest_names_effect_contracts() -> None:
    assert build("same", []).manifest()["tools"]["send"]["effect"] == "idempotent"
    assert build("weakened", []).manifest()["tools"]["send"]["effect"] == "at_most_once"
    reconciled = build("weakened", [], reconcile=lambda call: "ok").manifest()
    assert reconciled["tools"]["send"]["effect"] == "reconcilable"
    assert judge(build("same", []).manifest(), reconciled, PENDING).verdict == "incompatible"  # type: ignore[arg-type]


def test_a_transactional_tool_is_named_so_and_ranks_strongest() -> None:
    agent = build("weakened", [])
    send = agent.tool_registry.get("send")
    assert send is not None
    send.transactional = True  # type: ignore[attr-defined]  # the outbox's flag (issue 32 C)
    outbox = agent.manifest()
    assert outbox["tools"]["send"]["effect"] == "transactional"  # not at_most_once: its in-doubt calls run again
    assert judge(outbox, build("same", []).manifest(), PENDING).verdict == "incompatible"  # type: ignore[arg-type]
    assert judge(build("same", []).manifest(), outbox, PENDING).verdict == "compatible"  # type: ignore[arg-type]


# -- deploy simulations without a store ---------------------------------------------------------


@pytest.mark.parametrize("change", list(EXPECTED))
def test_interrupted_snapshot_loaded_by_changed_code(change: str) -> None:
    log: list[str] = []
    old = build("same", log)
    first = old("go")
    assert first.stop_reason == "interrupt"
    snapshot = old.take_snapshot(preset="session").to_dict()
    assert snapshot["data"]["interrupt_state"]["manifest"]["digest"] == old.manifest()["digest"]
    agent = build(change, log)
    kind, names = EXPECTED[change]
    if kind == "incompatible":
        before = agent.take_snapshot(preset="all").to_dict()["data"]
        with pytest.raises(IncompatibleResumeError) as caught:
            agent.load_snapshot(snapshot)
        assert [d.name for d in caught.value.differences] == names
        assert agent.take_snapshot(preset="all").to_dict()["data"] == before  # the agent is unchanged
        agent.load_snapshot(snapshot, allow=names)  # accepted by name
        return
    agent.load_snapshot(snapshot)
    assert str(agent(answer(first))) == "done"
    assert log == [f"send bob yes{' priority=0' if change == 'optional' else ''}"]


def test_renamed_tool_through_a_snapshot_is_called_once() -> None:
    log: list[str] = []
    old = build("same", log)
    first = old("go")
    agent = build("renamed", log)
    with pytest.raises(IncompatibleResumeError):
        agent.load_snapshot(old.take_snapshot(preset="session"))
    agent.migrations.rename_tool("send", "deliver")
    agent.load_snapshot(old.take_snapshot(preset="session"))
    assert str(agent(answer(first))) == "done"
    assert log == ["deliver bob yes"]


def test_interrupt_answered_after_the_agent_changed_in_place() -> None:
    log: list[str] = []
    agent = build("same", log)
    first = agent("go")
    agent.tool_registry.get("send").idempotent = False  # type: ignore[union-attr]  # the code changed under the pending call
    with pytest.raises(IncompatibleResumeError, match="effect_weakened:send"):
        agent(answer(first))
    assert log == [] and agent.run_state.interrupt_state.get("activated")  # still waiting
    assert str(agent(answer(first), allow=["effect_weakened"])) == "done"


@pytest.mark.parametrize("change", ["same", "renamed", "optional", "prompt", "removed", "required", "weakened"])
def test_checkpoint_resumed_by_changed_code(change: str) -> None:
    log: list[str] = []
    paused = build("same", log, checkpointing=["after_model"])("go")
    assert paused.stop_reason == "checkpoint" and paused.checkpoint is not None
    data = Checkpoint.from_json(paused.checkpoint.to_json()).to_dict()  # it travels as JSON
    assert data["manifest"]["digest"] == build("same", []).manifest()["digest"]
    agent = build(change, log, checkpointing=["after_model"])
    resume = [{"checkpointResume": {"checkpoint": data}}]
    if change == "renamed":
        agent.migrations.rename_tool("send", "deliver")
    kind, names = EXPECTED.get(change, ("migratable", []))
    if kind == "incompatible":
        with pytest.raises(IncompatibleResumeError) as caught:
            agent(resume)
        assert [d.name for d in caught.value.differences] == names
        assert agent.messages == [] and log == []
        return
    assert str(agent(resume)) == "done"
    name = "deliver" if change == "renamed" else "send"
    assert log == [f"{name} bob{' priority=0' if change == 'optional' else ''}"]


def test_a_checkpoint_without_a_manifest_still_checks_its_pending_calls() -> None:
    paused = build("same", [], checkpointing=["after_model"])("go")
    assert paused.checkpoint is not None
    data = paused.checkpoint.to_dict()
    del data["manifest"]  # what Strands (or an older Tether) writes
    with pytest.raises(IncompatibleResumeError, match="tool_removed:send"):
        build("removed", [], checkpointing=["after_model"])([{"checkpointResume": {"checkpoint": data}}])
    assert str(build("same", [], checkpointing=["after_model"])([{"checkpointResume": {"checkpoint": data}}])) == "done"


def recall(undo: Any) -> None:
    """A compensation of ``send`` (named in the manifest; never called here)."""


def unsend(undo: Any) -> None:
    """Another compensation of ``send``."""


def test_a_tools_compensation_is_part_of_its_contract_digest_and_verdict() -> None:
    versions = {}
    for label, compensate in (("none", None), ("recall", recall), ("unsend", unsend)):
        agent = build("same", [])
        send = agent.tool_registry.get("send")
        assert send is not None
        send.compensate = compensate
        versions[label] = agent.manifest()
    assert "compensate" not in versions["none"]["tools"]["send"]
    assert versions["recall"]["tools"]["send"]["compensate"] == f"{__name__}:recall"
    digests = {label: manifest["digest"] for label, manifest in versions.items()}
    assert len(set(digests.values())) == 3  # adding, then changing, the compensation changes the digest
    for old, new in (("none", "recall"), ("recall", "unsend"), ("recall", "none")):
        verdict = judge(versions[old], versions[new], PENDING)  # type: ignore[arg-type]
        assert [d.name for d in verdict.differences] == ["compensation_changed:send"], (old, new)
        assert verdict.verdict == "compatible" and not verdict.blocking  # the calls' own contract is unchanged
    assert judge(versions["recall"], copy.deepcopy(versions["recall"]), PENDING).verdict == "same"  # type: ignore[arg-type]
