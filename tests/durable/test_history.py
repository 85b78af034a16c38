"""Step history and run summaries (contract tests over every store)."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tether import Agent, tool
from tether.durable import RunStore, SQLiteStore, StepTail
from tether.durable.codec import encode_step, is_zipped, unzip_step
from tether.durable.crypto import RowPlace, is_envelope
from tether.durable.history import summary_of
from tether.durable.packing import KEYFRAME_EVERY
from tether.durable.sqlite import SPAN
from tether.errors import RunNotFoundError, StoreError
from tether.models import ScriptedModel
from tether.models.scripted import tool_call, tool_calls
from tether.tools.context import ToolContext

from .helpers import Crash, Plan, make_agent


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def broken() -> str:
    """Always fails."""
    raise RuntimeError("boom")


def two_cycle_agent(store: RunStore, replies: list[Any] | None = None, **kwargs: Any) -> Agent:
    script = replies or [tool_calls([("add", {"a": 1, "b": 2}), ("broken", {})]), "three"]
    return Agent(model=ScriptedModel(script, stateful=True, usage=(7, 3)), tools=[add, broken], store=store, **kwargs)


def test_one_step_per_cycle_boundary(store: RunStore) -> None:
    two_cycle_agent(store)("go", run_id="h")
    steps = store.history("h")
    assert [s.position for s in steps] == ["turn_start", "after_model", "after_tools", "after_model", "turn_end"]
    assert [s.step for s in steps] == [1, 2, 3, 4, 5]
    assert [s.cycle_index for s in steps[:4]] == [0, 0, 0, 1]
    assert [s.seq for s in steps] == [1, 2, 3, 4, 4]  # messages stored when the step was taken
    assert [s.status for s in steps] == ["running"] * 4 + ["finished"]
    assert steps[-1].stop_reason == "end_turn"
    for s in steps:
        assert datetime.fromisoformat(s.created_at).utcoffset() == UTC.utcoffset(None)
    model = steps[1].model
    assert model is not None and (model["input_tokens"], model["output_tokens"], model["total_tokens"]) == (7, 3, 10)
    assert model["latency_ms"] >= 0
    assert steps[0].model is None and steps[2].model is None
    tools = steps[2].tools
    assert [(t["name"], t["error"], t["in_doubt"]) for t in tools] == [("add", False, False), ("broken", True, False)]
    assert all(isinstance(t["duration_ms"], float) and t["duration_ms"] >= 0 for t in tools)


def test_history_is_append_only_across_turns(store: RunStore) -> None:
    agent = two_cycle_agent(store, [tool_call("add", {"a": 1, "b": 2}), "three", "again"])
    agent("go", run_id="h")
    first = [s.to_dict() for s in store.history("h")]
    agent("more", run_id="h")
    steps = store.history("h")
    assert [s.to_dict() for s in steps[: len(first)]] == first
    assert [s.position for s in steps[len(first) :]] == ["turn_start", "after_model", "turn_end"]
    assert steps[-1].head["turns"] == 2


def test_step_rows_stay_constant_size(store: RunStore) -> None:
    replies = [f"reply {i:03d}" for i in range(40)]
    agent = Agent(model=ScriptedModel(replies, stateful=True), store=store)
    for i in range(40):
        agent(f"question {i:03d}", run_id="long")
    steps = store.history("long")
    assert len(steps) == 40 * 3
    sizes = [len(encode_step(s.to_dict(), None, None, run_id="r")) for s in steps if s.position == "after_model"]
    # the conversation grows 40x; a step row changes only by the digits of counters and timings
    assert max(sizes) < 1.1 * min(sizes), sizes


def test_each_step_keeps_the_head_as_it_was(store: RunStore) -> None:
    two_cycle_agent(store)("go", run_id="h")
    steps = store.history("h")
    assert [s.head["cursor"]["phase"] for s in steps] == ["model", "tools", "model", "idle", "idle"]
    assert [s.head["metrics"]["model_call_count"] for s in steps] == [0, 1, 1, 2, 2]
    assert [s.head["next_seq"] for s in steps] == [s.seq for s in steps]


def test_statuses_in_list_runs(store: RunStore) -> None:
    two_cycle_agent(store)("go", run_id="done")

    @tool
    def ask(ctx: ToolContext) -> str:
        """Ask a human."""
        return str(ctx.interrupt("approve"))

    Agent(model=ScriptedModel([tool_call("ask")]), tools=[ask], store=store)("q", run_id="waiting")
    Agent(model=ScriptedModel([tool_call("add", {"a": 1, "b": 1})]), tools=[add], store=store, checkpointing=True)("q", run_id="paused")
    with pytest.raises(RuntimeError, match="provider down"):
        Agent(model=ScriptedModel([RuntimeError("provider down")]), store=store)("q", run_id="failed")
    with pytest.raises(KeyboardInterrupt):
        Agent(model=ScriptedModel([KeyboardInterrupt()]), store=store)("q", run_id="ctrl-c")
    with pytest.raises(Crash):
        make_agent(store, Plan(model=1))("q", run_id="killed")  # the process "dies": nothing more is written
    runs = {r.run_id: r for r in store.list_runs()}
    assert {k: v.status for k, v in runs.items()} == {
        "done": "finished",
        "waiting": "interrupted",
        "paused": "paused",
        "failed": "failed",
        "ctrl-c": "stopped",  # cancelled, resumable as it is ("interrupted" is for runs waiting for answers)
        "killed": "stalled",  # its head says running, but no live process holds its lease: resumable now
    }
    done = runs["done"]
    assert (done.turns, done.cycles, done.total_tokens, done.steps) == (1, 2, 20, 5)
    assert done.created_at is not None and done.updated_at is not None and done.created_at <= done.updated_at
    assert store.history("failed")[-1].stop_reason == "RuntimeError: provider down"


def test_resumed_runs_go_back_to_running_then_finished(store: RunStore) -> None:
    with pytest.raises(KeyboardInterrupt):
        Agent(model=ScriptedModel([KeyboardInterrupt(), "fine"]), store=store)("q", run_id="c")
    assert str(Agent(model=ScriptedModel(["fine"]), store=store).resume("c")) == "fine"
    (summary,) = store.list_runs()
    assert summary.status == "finished" and summary.turns == 1
    assert [s.position for s in store.history("c")] == ["turn_start", "turn_end", "after_model", "turn_end"]


def test_in_doubt_calls_are_marked(store: RunStore) -> None:
    plan = Plan(tool_after_effect=0)
    with pytest.raises(Crash):
        make_agent(store, plan)("go", run_id="d")
    make_agent(store, plan).resume("d")
    steps = store.history("d")
    resumed = next(s for s in steps if s.position == "resumed")
    assert resumed.in_doubt == [{"toolUseId": "tooluse_1_0", "name": "work", "action": "rerun"}]
    closing = next(s for s in steps if s.position == "after_tools" and s.step > resumed.step)
    assert [(t["name"], t["in_doubt"]) for t in closing.tools] == [("work", True)]
    later = [s for s in steps if s.position == "after_tools" and s.step > closing.step]
    assert later and all(not t["in_doubt"] for s in later for t in s.tools)


def test_unknown_run_and_missing_step(store: RunStore) -> None:
    with pytest.raises(RunNotFoundError, match="ghost"):
        store.history("ghost")
    with pytest.raises(RunNotFoundError, match="ghost"):
        store.load_at("ghost", 1)
    two_cycle_agent(store)("go", run_id="h")
    with pytest.raises(StoreError, match=r"no step 9: it has steps 1\.\.5"):
        store.load_at("h", 9)
    with pytest.raises(StoreError, match="run_id"):
        store.history("../x")
    with pytest.raises(RunNotFoundError, match="ghost"):
        store.history("ghost", after=2)
    with pytest.raises(RunNotFoundError, match="ghost"):
        store.messages("ghost", 0, 1)
    assert store.history("h", after=9) == []
    count = int(store.head("h")["next_seq"])  # type: ignore[index]
    with pytest.raises(StoreError, match=rf"1 message rows in \[0, {count + 1}\) are missing"):
        store.messages("h", 0, count + 1)


def test_history_after_a_step_and_messages_by_seq(store: RunStore) -> None:
    two_cycle_agent(store)("go", run_id="h")
    steps = store.history("h")
    assert [s.step for s in store.history("h", after=3)] == [4, 5] and store.history("h", after=3) == steps[3:]
    assert store.history("h", after=0) == steps
    messages = store.messages("h", 1, 3)
    assert [m["role"] for m in messages] == ["assistant", "user"] and messages == store.load("h").messages[1:3]  # type: ignore[union-attr]


def test_summary_of_heads_written_before_steps_existed() -> None:
    head: dict[str, Any] = {"cursor": {"phase": "idle"}, "next_seq": 2, "metrics": {"cycle_count": 1, "usage": {"total_tokens": 9}}}
    summary = summary_of("old", head)
    assert (summary.status, summary.cycles, summary.total_tokens, summary.turns, summary.created_at) == ("finished", 1, 9, 0, None)
    assert summary_of("old", {**head, "cursor": {"phase": "tools"}}).status == "running"


def test_step_rows_honor_state_redaction(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "runs.db", redact_state_keys={"api_token"})
    Agent(model=ScriptedModel(["hi"]), store=store, state={"api_token": "s3cr3t-value", "plain": 1})("q", run_id="r")
    with sqlite3.connect(store.path) as conn:
        bodies = [unzip_step(row[0]) if is_zipped(row[0]) else row[0] for row in conn.execute("SELECT body FROM steps")]
    assert len(bodies) == 3 and not any("s3cr3t-value" in body for body in bodies)
    assert all(step.head["state"] == {"plain": 1} for step in store.history("r"))


def test_step_rows_are_sealed_by_the_store_cipher(tmp_path: Path) -> None:
    from tether.durable import AESGCMCipher

    cipher = AESGCMCipher({"k1": bytes(range(32))}, current="k1")
    store = SQLiteStore(tmp_path / "runs.db", cipher=cipher)
    agent = Agent(model=ScriptedModel([tool_call("add", {"a": 1, "b": 2}), "the answer is three"], stateful=True), tools=[add], store=store)
    agent("a private question", run_id="r")
    with sqlite3.connect(store.path) as conn:
        rows = [(int(k) % SPAN, body) for k, body in conn.execute("SELECT k, body FROM steps ORDER BY k")]  # one run in the file
    assert len(rows) == 5
    for number, body in rows:
        # Decrypt and compare: each stored row is an envelope whose plaintext is the step itself,
        # and no part of that plaintext (a known string of 16+ bytes, which ciphertext cannot hold
        # by chance) is stored in clear.
        envelope = json.loads(body)
        assert is_envelope(envelope)
        plaintext = cipher.open(envelope, f"steps step {number}", RowPlace("steps", "r", number))
        assert json.loads(plaintext)["step"] == number
        assert not [plaintext[i : i + 16] for i in range(len(plaintext) - 15) if plaintext[i : i + 16] in body]
    tools = [call["name"] for step in store.history("r") for call in step.tools]
    assert tools == ["add"]  # the tool call is in the rows, readable with the key only
    assert [s.position for s in store.history("r")] == ["turn_start", "after_model", "after_tools", "after_model", "turn_end"]
    fork_id = agent.fork("r", at=3)
    assert (
        str(Agent(model=ScriptedModel([None, "forked answer"], stateful=True), tools=[add], store=store).resume(fork_id)) == "forked answer"
    )
    with pytest.raises(StoreError):
        SQLiteStore(tmp_path / "runs.db").history("r")  # without the key the rows cannot be read


def test_a_nested_run_names_its_parent_in_its_head_and_summary(store: RunStore) -> None:
    two_cycle_agent(store)("go", run_id="parent")
    child = two_cycle_agent(store)
    child("sub-task", run_id="parent.child-1", parent_run_id="parent")
    child.resume("parent.child-1")  # an existing run keeps its parent
    runs = {r.run_id: r for r in store.list_runs()}
    assert runs["parent"].parent_run_id is None
    assert runs["parent.child-1"].parent_run_id == "parent"
    head = store.head("parent.child-1")
    assert head is not None and head["parent_run_id"] == "parent"
    assert "parent_run_id" not in (store.head("parent") or {})
    assert all(step.status for step in store.history("parent.child-1"))  # the step heads rebuild with it


def test_parent_run_id_is_checked(store: RunStore) -> None:
    from tether.errors import ConfigurationError, PromptError

    agent = two_cycle_agent(store)
    with pytest.raises(ConfigurationError, match="nested in itself"):
        agent("go", run_id="self", parent_run_id="self")
    with pytest.raises(StoreError, match="run_id 'no/slash' is invalid"):
        agent("go", run_id="ok", parent_run_id="no/slash")
    with pytest.raises(PromptError, match="pass run_id too"):
        agent("go", parent_run_id="p")
    assert {r.run_id for r in store.list_runs()} == set()


def test_a_stored_parent_that_is_not_a_run_id_is_refused_by_the_row_check() -> None:
    from tether.durable import MemoryStore
    from tether.durable.codec import check_head
    from tether.errors import ShapeError

    store = MemoryStore()
    Agent(model=ScriptedModel(["x"]), store=store)("go", run_id="r")
    head = dict(store.head("r") or {})
    head["parent_run_id"] = "../../etc"
    with pytest.raises(ShapeError, match="parent_run_id"):
        check_head(head)


def test_a_step_tail_follows_a_run_reading_only_its_new_steps(store: RunStore) -> None:
    tail = StepTail()
    followed: list[Any] = []

    @tool
    def follow(n: int) -> int:
        """Read the steps committed since the last call."""
        followed.append([s.step for s in store.history("f", after=tail)])
        return n

    cycles = 2 * KEYFRAME_EVERY + 5  # past two keyframes: the deltas apply to the tail's head
    script: list[Any] = [tool_call("follow", {"n": i}) for i in range(cycles)] + ["done"]
    Agent(model=ScriptedModel(script, stateful=True), tools=[follow], store=store)("go", run_id="f")
    rest = store.history("f", after=tail)
    everything = store.history("f")
    assert [n for batch in followed for n in batch] + [s.step for s in rest] == [s.step for s in everything]
    assert all(len(batch) <= 3 for batch in followed[1:]) and tail.step == everything[-1].step
    assert store.history("f", after=tail) == []
    store.delete_run("f")  # the id used again: read from its own keyframes, not through the old head
    again = Agent(model=ScriptedModel(["a", "b", "c"], stateful=True), store=store)
    for prompt in ("x", "y", "z"):
        again(prompt, run_id="f")
    steps = store.history("f")
    assert len(steps) > 0 and tail.step > steps[-1].step and store.history("f", after=tail) == []
    fresh = StepTail()
    assert store.history("f", after=fresh) == steps and fresh.incarnation == steps[0].head.get("incarnation")
