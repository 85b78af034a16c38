"""Forking a run from any past step (contract tests over every store)."""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest

from tether import Agent, tool
from tether.durable import MemoryStore, RunStore, SQLiteStore
from tether.durable.sqlite import SPAN
from tether.errors import PromptError, RunNotFoundError, StoreError
from tether.models import ScriptedModel
from tether.models.scripted import tool_call
from tether.tools.context import ToolContext
from tether.types import Message


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def script() -> list[Any]:
    return [tool_call("add", {"a": 1, "b": 2}, tool_use_id="t1"), lambda messages: f"answer after {len(messages)} messages"]


def agent_for(store: RunStore, replies: list[Any] | None = None) -> Agent:
    return Agent(model=ScriptedModel(replies or script(), stateful=True), tools=[add], store=store)


def raw_rows(store: RunStore, run_id: str) -> list[Any]:
    """Every stored row of ``run_id``, exactly as the store holds it (for byte-for-byte checks)."""
    if isinstance(store, MemoryStore):
        rows = store._runs[run_id]
        return [rows.head, list(rows.messages), sorted(rows.results.items()), sorted(rows.steps.items()), sorted(rows.blobs.items())]
    if isinstance(store, SQLiteStore):
        with sqlite3.connect(store.path) as conn:
            tables = [name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name != 'meta'")]
            base = f"(SELECT num FROM runs WHERE run_id = :run) * {SPAN}"  # messages and steps: keyed by run number
            where = {t: f"k >= {base} AND k < {base} + {SPAN}" if t in ("messages", "steps") else "run_id = :run" for t in tables}
            return [(t, sorted(conn.execute(f"SELECT * FROM {t} WHERE {where[t]}", {"run": run_id}).fetchall())) for t in sorted(tables)]
    import psycopg  # the PostgreSQL store: every tether_ table that has a run_id column

    with psycopg.connect(store.conninfo, autocommit=True) as conn:  # type: ignore[attr-defined]
        query = "SELECT table_name FROM information_schema.columns WHERE column_name = 'run_id' AND table_name LIKE 'tether%'"
        tables = sorted({name for (name,) in conn.execute(query).fetchall()})
        return [(t, sorted(map(repr, conn.execute(f"SELECT * FROM {t} WHERE run_id = %s", (run_id,)).fetchall()))) for t in tables]


def position_step(store: RunStore, run_id: str, position: str) -> int:
    return next(s.step for s in store.history(run_id) if s.position == position)


def test_fork_mid_cycle_then_resume_leaves_the_original_untouched(store: RunStore) -> None:
    original = agent_for(store)
    original("go", run_id="r")
    before = raw_rows(store, "r")
    at = position_step(store, "r", "after_model")
    new_id = original.fork("r", at=at)
    assert new_id == "r.fork-1"
    loaded = store.load(new_id)
    assert loaded is not None and [m["role"] for m in loaded.messages] == ["user", "assistant"]
    result = agent_for(store).resume(new_id)  # a fresh agent, as in another process
    assert str(result) == "answer after 3 messages"
    fork = store.load(new_id)
    reference = store.load("r")
    assert fork is not None and reference is not None and fork.messages == reference.messages
    assert raw_rows(store, "r") == before
    assert agent_for(store).resume("r").stop_reason == "end_turn"  # the original still works


def test_fork_history_starts_with_a_forked_step(store: RunStore) -> None:
    agent = agent_for(store)
    agent("go", run_id="r")
    new_id = agent.fork("r", at=position_step(store, "r", "after_tools"), new_run_id="branch")
    assert new_id == "branch"
    first = store.history("branch")[0]
    assert (first.step, first.position, first.forked_from) == (1, "forked", {"run_id": "r", "step": 3})
    assert first.status == "paused" and first.message_count == 3
    agent_for(store).resume("branch")
    assert [s.position for s in store.history("branch")] == ["forked", "after_model", "turn_end"]
    summary = {r.run_id: r for r in store.list_runs()}["branch"]
    assert summary.status == "finished" and summary.cycles == 2


def test_default_ids_count_up_and_explicit_ids_must_be_new(store: RunStore) -> None:
    agent = agent_for(store)
    agent("go", run_id="r")
    assert [agent.fork("r", at=1) for _ in range(3)] == ["r.fork-1", "r.fork-2", "r.fork-3"]
    with pytest.raises(StoreError, match=r"'r\.fork-2' already exists"):
        agent.fork("r", at=1, new_run_id="r.fork-2")
    with pytest.raises(StoreError, match="run_id"):
        agent.fork("r", at=1, new_run_id="bad/id")


def test_edit_a_tool_result_with_a_callable(store: RunStore) -> None:
    agent = agent_for(store)
    agent("go", run_id="r")

    def edit(messages: list[Message]) -> list[Message]:
        messages[-1]["content"][0]["toolResult"]["content"] = [{"text": "42"}]  # type: ignore[typeddict-item]
        return messages

    new_id = agent.fork("r", at=position_step(store, "r", "after_tools"), edit=edit)
    seen: list[Any] = []

    def answer(messages: list[Message]) -> str:
        seen.append(messages[-1]["content"][0]["toolResult"]["content"])  # type: ignore[typeddict-item]
        return "forty-two"

    resumed = Agent(model=ScriptedModel([None, answer], stateful=True), tools=[add], store=store)
    assert str(resumed.resume(new_id)) == "forty-two" and seen == [[{"text": "42"}]]
    reference = store.load("r")
    assert reference is not None and reference.messages[2]["content"][0]["toolResult"]["content"] == [{"json": 3}]  # type: ignore[typeddict-item]


def test_edit_the_prompt_with_a_message_dict(store: RunStore) -> None:
    agent = agent_for(store)
    agent("go", run_id="r")
    new_id = agent.fork("r", at=1, edit={"role": "user", "content": [{"text": "a different question"}]})
    resumed = agent_for(store)
    resumed.model.record_requests = True  # type: ignore[attr-defined]
    resumed.resume(new_id)
    first_request = resumed.model.calls[0]  # type: ignore[attr-defined]
    assert first_request["messages"][0]["content"] == [{"text": "a different question"}]


def test_fork_a_finished_turn_then_talk_on(store: RunStore) -> None:
    agent = agent_for(store, [*script(), "second answer"])
    agent("go", run_id="r")
    new_id = agent.fork("r", at=position_step(store, "r", "turn_end"))
    assert str(agent_for(store, [*script(), "second answer"])("and then?", run_id=new_id)) == "second answer"
    fork = store.load(new_id)
    assert fork is not None and len(fork.messages) == 6
    original = store.load("r")
    assert original is not None and len(original.messages) == 4


def test_bad_steps_and_runs_are_refused(store: RunStore) -> None:
    agent = agent_for(store)
    agent("go", run_id="r")
    for bad in (0, 6, -1):
        with pytest.raises(StoreError, match=f"no step {bad}"):
            agent.fork("r", at=bad)
    for wrong in ("2", 1.0, True):
        with pytest.raises(StoreError, match="not a step number"):
            agent.fork("r", at=wrong)  # type: ignore[arg-type]
    with pytest.raises(RunNotFoundError, match="ghost"):
        agent.fork("ghost", at=1)
    assert [r.run_id for r in store.list_runs()] == ["r"]


def test_edits_that_break_the_cycle_are_refused(store: RunStore) -> None:
    agent = agent_for(store)
    agent("go", run_id="r")
    with pytest.raises(PromptError, match="toolUse"):
        agent.fork("r", at=position_step(store, "r", "after_model"), edit={"role": "assistant", "content": [{"text": "no call"}]})
    with pytest.raises(PromptError, match="user message"):
        agent.fork("r", at=1, edit=lambda messages: [*messages, {"role": "assistant", "content": [{"text": "x"}]}])
    with pytest.raises(PromptError, match="edit"):
        agent.fork("r", at=1, edit=lambda messages: [{"role": "robot", "content": []}])
    with pytest.raises(PromptError, match="non-empty list"):
        agent.fork("r", at=1, edit=lambda messages: [])
    assert [r.run_id for r in store.list_runs()] == ["r"]


def test_fork_keeps_the_results_recorded_at_the_step(store: RunStore) -> None:
    @tool
    def ask(ctx: ToolContext) -> str:
        """Ask a human."""
        return f"human said {ctx.interrupt('approve')}"

    calls: Message = {
        "role": "assistant",
        "content": [
            {"toolUse": {"toolUseId": "a", "name": "add", "input": {"a": 2, "b": 2}}},
            {"toolUse": {"toolUseId": "q", "name": "ask", "input": {}}},
        ],
    }

    def build() -> Agent:
        return Agent(model=ScriptedModel([calls, "done"], stateful=True), tools=[add, ask], store=store)

    first = build()("go", run_id="i")
    assert first.stop_reason == "interrupt"
    at = position_step(store, "i", "turn_end")
    assert store.history("i")[-1].results == ["a"]
    new_id = build().fork("i", at=at)
    answer = [{"interruptResponse": {"interruptId": first.interrupts[0].id, "response": "yes"}}]
    assert str(build().resume(new_id, answer)) == "done"
    fork = store.load(new_id)
    assert fork is not None
    results = [block["toolResult"] for block in fork.messages[2]["content"]]  # type: ignore[typeddict-item]
    assert [(r["toolUseId"], r["content"]) for r in results] == [("a", [{"json": 4}]), ("q", [{"text": "human said yes"}])]


def test_fork_that_removes_an_in_doubt_call_never_spins(store: RunStore) -> None:
    """Issue #14 item 3: fork at a `resumed` step with an edit removing the in-doubt call, then
    answer the leftover interrupt: the fork drops it, and every way on terminates."""
    import concurrent.futures

    from tether import tool
    from tether.errors import InterruptError
    from tether.tools.executors import SequentialToolExecutor

    from .helpers import Crash

    log: list[str] = []
    crash = [True]

    @tool(idempotent=False)
    def charge(n: int) -> str:
        """Charge a card."""
        log.append(f"charge {n}")
        if crash and crash.pop():
            raise Crash("after the charge")
        return f"charged {n}"

    def agent() -> Agent:
        uses = [{"toolUse": {"toolUseId": f"c{n}", "name": "charge", "input": {"n": n}}} for n in (1, 2)]
        calls: Any = {"role": "assistant", "content": uses}
        script = [calls, "done"]
        return Agent(model=ScriptedModel(script, stateful=True), tools=[charge], store=store, tool_executor=SequentialToolExecutor())

    with pytest.raises(Crash):
        agent()("pay twice", run_id="pay")
    waiting = agent().resume("pay")
    (leftover,) = waiting.interrupts
    assert leftover.tool_use_id == "c1"
    resumed = next(s for s in store.history("pay") if s.position == "resumed")

    def drop_c1(messages: list[Any]) -> list[Any]:
        messages[-1]["content"] = [b for b in messages[-1]["content"] if b["toolUse"]["toolUseId"] != "c1"]
        return messages

    fork_id = agent().fork("pay", at=resumed, edit=drop_c1)

    def finish() -> Any:
        with pytest.raises(InterruptError, match="nothing is interrupted"):
            agent().resume(fork_id, [{"interruptResponse": {"interruptId": leftover.id, "response": "rerun"}}])
        return agent().resume(fork_id)

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        result = pool.submit(finish).result(timeout=120)  # a hang guard: before the fix this looped forever
    assert str(result) == "done"
    assert log == ["charge 1", "charge 2"]  # c1 never re-ran in the fork; c2 ran once
