"""In-doubt calls of non-idempotent tools: interrupt or reconcile, never a blind re-run."""

from __future__ import annotations

from typing import Any

import pytest

from tether import Agent, tool
from tether.durable import RERUN, InDoubtCall, RunStore
from tether.models import ScriptedModel
from tether.models.scripted import tool_call
from tether.tools.context import ToolContext

from .helpers import Crash


def make(store: RunStore, log: list[str], crash: list[bool], **kwargs: Any) -> Agent:
    @tool(idempotent=False)
    def charge(amount: int, ctx: ToolContext) -> str:
        """Charge a card."""
        log.append(ctx.idempotency_key)
        if crash and crash.pop():
            raise Crash("after the charge")
        return f"charged {amount}"

    model = ScriptedModel([tool_call("charge", {"amount": 5}, tool_use_id="c1"), "paid"], stateful=True)
    return Agent(model=model, tools=[charge], store=store, **kwargs)


def crashed_run(store: RunStore, log: list[str]) -> None:
    with pytest.raises(Crash):
        make(store, log, [True])("pay", run_id="p")
    assert log == ["p/c1"]


def test_in_doubt_becomes_interrupt_then_rerun(store: RunStore) -> None:
    log: list[str] = []
    crashed_run(store, log)
    agent = make(store, log, [])
    result = agent.resume("p")
    assert result.stop_reason == "interrupt"
    (interrupt,) = result.interrupts
    assert interrupt.name == "tether.in_doubt" and interrupt.tool_use_id == "c1"
    assert interrupt.reason["idempotency_key"] == "p/c1"  # type: ignore[index,call-overload]
    assert log == ["p/c1"]  # not re-run blindly
    # a new process sees the same question
    again = make(store, log, []).resume("p")
    assert [i.id for i in again.interrupts] == [interrupt.id]
    final = make(store, log, []).resume("p", [{"interruptResponse": {"interruptId": interrupt.id, "response": "rerun"}}])
    assert str(final) == "paid"
    assert log == ["p/c1", "p/c1"]  # re-run once, same key


def test_in_doubt_answered_with_a_result(store: RunStore) -> None:
    log: list[str] = []
    crashed_run(store, log)
    interrupt = make(store, log, []).resume("p").interrupts[0]
    agent = make(store, log, [])
    final = agent([{"interruptResponse": {"interruptId": interrupt.id, "response": "charged 5 (checked)"}}], run_id="p")
    assert str(final) == "paid"
    assert log == ["p/c1"]
    result_block = agent.messages[2]["content"][0]["toolResult"]  # type: ignore[typeddict-item]
    assert result_block["content"] == [{"text": "charged 5 (checked)"}]


def test_reconcile_returns_result(store: RunStore) -> None:
    log: list[str] = []
    crashed_run(store, log)
    seen: list[InDoubtCall] = []

    def reconcile(call: InDoubtCall) -> Any:
        seen.append(call)
        return {"status": "success", "content": [{"text": "already charged"}]}

    final = make(store, log, [], reconcile=reconcile).resume("p")
    assert str(final) == "paid" and log == ["p/c1"]
    assert seen[0].idempotency_key == "p/c1" and seen[0].tool_use["name"] == "charge"


def test_reconcile_asks_for_rerun(store: RunStore) -> None:
    log: list[str] = []
    crashed_run(store, log)

    async def reconcile(call: InDoubtCall) -> Any:
        return RERUN

    final = make(store, log, [], reconcile=reconcile).resume("p")
    assert str(final) == "paid" and log == ["p/c1", "p/c1"]


def test_finished_tool_is_not_in_doubt(store: RunStore) -> None:
    log: list[str] = []
    agent = make(store, log, [])
    assert str(agent("pay", run_id="p")) == "paid"
    assert str(make(store, log, []).resume("p")) == "paid"
    assert log == ["p/c1"]


def test_tool_interrupt_is_answered_in_another_process(store: RunStore) -> None:
    log: list[str] = []

    def build() -> Agent:
        @tool(idempotent=False)
        def approve(item: str, ctx: ToolContext) -> str:
            """Ask a human before buying."""
            answer = ctx.interrupt("approve", {"item": item})
            log.append(f"{ctx.idempotency_key}:{answer}")
            return f"bought {item}" if answer == "yes" else "skipped"

        model = ScriptedModel([tool_call("approve", {"item": "tea"}, tool_use_id="q1"), "ok"], stateful=True)
        return Agent(model=model, tools=[approve], store=store)

    first = build()("buy tea", run_id="i")
    assert first.stop_reason == "interrupt" and first.interrupts[0].name == "approve"
    pending = build().resume("i")  # a stopped tool is not in doubt: same question, no new one
    assert [i.id for i in pending.interrupts] == [first.interrupts[0].id]
    final = build().resume("i", [{"interruptResponse": {"interruptId": first.interrupts[0].id, "response": "yes"}}])
    assert str(final) == "ok" and log == ["i/q1:yes"]


def test_a_pending_in_doubt_question_is_asked_once(store: RunStore) -> None:
    """Attaching to a run whose in-doubt question is still unanswered (another process, a server
    restart, the answer itself) records nothing new: one ``resumed`` step asked it."""
    log: list[str] = []
    crashed_run(store, log)
    interrupt = make(store, log, []).resume("p").interrupts[0]
    make(store, log, []).resume("p")  # looked at again from a fresh process: the same question
    final = make(store, log, []).resume("p", [{"interruptResponse": {"interruptId": interrupt.id, "response": "rerun"}}])
    assert str(final) == "paid" and log == ["p/c1", "p/c1"]
    resumed = [step for step in store.history("p") if step.position == "resumed"]
    assert [[marker["action"] for marker in step.in_doubt] for step in resumed] == [["interrupt"]]
