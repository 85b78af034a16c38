"""A tool call's change to the agent state is stored with its result, never before it.

Two tool calls of one cycle run at once and change the agent state. Every store write is checked
as it commits: the stored state holds the changes of exactly the calls whose results are stored.
Before the fix, the write of one call's result carried the other's change too, so a kill right
after it left that call in doubt, and the resumed run applied its change a second time.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tether import Agent, ScriptedModel, ToolContext, tool
from tether.durable import RunStore

RUN = "state-effects"


def two_calls() -> ScriptedModel:
    """One cycle calling ``a`` and ``b`` at once, then an answer."""
    uses = [{"toolUse": {"toolUseId": f"t{name}", "name": name, "input": {}}} for name in ("a", "b")]
    return ScriptedModel([{"role": "assistant", "content": uses}, "done"])


def recorded_calls(store: RunStore) -> set[str]:
    """The calls whose results the store holds (open-cycle rows or a stored results message)."""
    stored = store.load(RUN)
    assert stored is not None
    ids = set(stored.results)
    for message in stored.messages:
        ids.update(block["toolResult"]["toolUseId"] for block in message["content"] if "toolResult" in block)
    return ids


def checking_commits(store: RunStore, check: Any) -> list[str]:
    """Call ``check()`` after every write the store commits (on a thread or, for a store that
    sends its writes from the event loop, once one is known committed there); returns the list
    of violations."""
    violations: list[str] = []
    commit = store.commit
    send_commit = getattr(store, "send_commit", None)

    def checked_if(done: bool, run_id: str) -> bool:
        problem = check() if done and run_id == RUN else ""
        if problem:
            violations.append(problem)
        return done

    def checked(run_id: str, prepared: Any, **kwargs: Any) -> bool:
        return checked_if(commit(run_id, prepared, **kwargs), run_id)

    class Checked:
        def __init__(self, run_id: str, sent: Any) -> None:
            self.run_id, self.sent = run_id, sent

        async def done(self) -> bool:
            return checked_if(bool(await self.sent.done()), self.run_id)

    def checked_send(run_id: str, prepared: Any, **kwargs: Any) -> Checked | None:
        assert send_commit is not None
        sent = send_commit(run_id, prepared, **kwargs)
        return None if sent is None else Checked(run_id, sent)

    store.commit = checked  # type: ignore[method-assign]
    if send_commit is not None:  # a store that commits on the event loop (PostgreSQL)
        store.send_commit = checked_send  # type: ignore[attr-defined]
    return violations


async def test_a_call_reading_a_siblings_change_is_stored_with_it(store: RunStore) -> None:
    """``b`` extends a list ``a`` changed while ``a`` still runs: ``b``'s result waits for ``a``'s."""
    a_wrote, b_returned = asyncio.Event(), asyncio.Event()

    @tool
    async def a(context: ToolContext) -> str:
        """Append 'a', then wait for b."""
        context.agent.state.set("ran", [*(context.agent.state.get("ran") or []), "ta"])
        a_wrote.set()
        await b_returned.wait()
        return "a done"

    @tool
    async def b(context: ToolContext) -> str:
        """Append 'b' once 'a' did."""
        await a_wrote.wait()
        context.agent.state.set("ran", [*(context.agent.state.get("ran") or []), "tb"])
        b_returned.set()
        return "b done"

    def check() -> str:
        stored = store.load(RUN)
        assert stored is not None
        ran = sorted(stored.head["state"].get("ran") or [])
        recorded = sorted(recorded_calls(store))
        return "" if ran == recorded else f"state.ran {ran} stored with the results of {recorded}"

    agent = Agent(model=two_calls(), tools=[a, b], store=store)
    violations = checking_commits(store, check)
    order = [event["toolResult"]["toolUseId"] async for event in agent.stream_async("go", run_id=RUN) if event["type"] == "tool_result"]
    assert violations == []
    assert agent.state.get("ran") == ["ta", "tb"]
    assert order == ["ta", "tb"]  # b's result is announced with a's, not before it


async def test_independent_changes_are_each_stored_with_their_own_result(store: RunStore) -> None:
    """``a`` and ``b`` change different keys; ``b`` finishes first and is stored alone."""
    a_wrote, b_recorded = asyncio.Event(), asyncio.Event()
    seen: dict[str, Any] = {}

    @tool
    async def a(context: ToolContext) -> str:
        """Set 'a', then wait until b's result is stored."""
        context.agent.state.set("a", 1)
        a_wrote.set()
        await b_recorded.wait()
        return "a done"

    @tool
    async def b(context: ToolContext) -> str:
        """Set 'b'."""
        await a_wrote.wait()
        context.agent.state.set("b", 1)
        return "b done"

    def check() -> str:
        stored = store.load(RUN)
        assert stored is not None
        keys = sorted(k for k in stored.head["state"] if k in ("a", "b"))
        recorded = sorted(i.removeprefix("t") for i in recorded_calls(store))
        if "tb" in recorded_calls(store) and "ta" not in recorded_calls(store):
            seen["b alone"] = keys
        return "" if keys == recorded else f"state keys {keys} stored with the results of {recorded}"

    agent = Agent(model=two_calls(), tools=[a, b], store=store)
    violations = checking_commits(store, check)
    async for event in agent.stream_async("go", run_id=RUN):
        if event["type"] == "tool_result" and event["toolResult"]["toolUseId"] == "tb":
            b_recorded.set()
    assert violations == []
    assert seen["b alone"] == ["b"]  # b did not wait for a: nothing of a's was read
    assert agent.state.get() == {"a": 1, "b": 1}


@pytest.mark.parametrize("kind", ["interrupt", "error"])
async def test_a_call_without_a_result_keeps_what_it_stored_with_its_outcome(store: RunStore, kind: str) -> None:
    """An interrupt is an outcome too: the changes made before it are stored with it, once; a
    call's failure is its (error) result, stored with its changes."""

    @tool
    async def a(context: ToolContext) -> str:
        """Count, then ask or fail."""
        context.agent.state.set("count", (context.agent.state.get("count") or 0) + 1)
        if kind == "interrupt":
            context.interrupt("approve")
            return "approved"
        raise RuntimeError("boom")

    @tool
    async def b(context: ToolContext) -> str:
        """Set 'b'."""
        context.agent.state.set("b", 1)
        return "b done"

    agent = Agent(model=two_calls(), tools=[a, b], store=store)
    result = await agent.invoke_async("go", run_id=RUN)
    stored = store.load(RUN)
    assert stored is not None
    assert stored.head["state"] == {"count": 1, "b": 1}
    assert result.stop_reason == ("interrupt" if kind == "interrupt" else "end_turn")


async def test_an_agent_tools_usage_roll_up_is_stored_with_its_result(store: RunStore) -> None:
    """What else a call changes besides its result: an agent tool adds its child's usage to the
    parent's metrics. Its after-hook waits until a sibling's result is stored; that write must
    not carry the child's usage while the agent tool's result is not stored (a kill then, and
    the re-run call would add the child's usage a second time)."""
    from tether.hooks import AfterToolCall

    child = Agent(model=ScriptedModel(["researched"]), name="researcher")
    child_done, b_recorded = asyncio.Event(), asyncio.Event()

    @tool
    async def b() -> str:
        """Finish once the researcher's child finished."""
        await child_done.wait()
        return "b done"

    async def after(event: AfterToolCall) -> None:
        if event.tool_use["name"] == "researcher":
            child_done.set()
            await b_recorded.wait()

    uses = [
        {"toolUse": {"toolUseId": "ta", "name": "researcher", "input": {"input": "topic"}}},
        {"toolUse": {"toolUseId": "tb", "name": "b", "input": {}}},
    ]
    parent = Agent(model=ScriptedModel([{"role": "assistant", "content": uses}, "done"]), tools=[child, b], store=store)
    parent.hooks.add_callback(AfterToolCall, after)

    def check() -> str:
        stored = store.load(RUN)
        assert stored is not None
        calls = stored.head["metrics"]["model_call_count"]
        own = sum(1 for m in stored.messages if m["role"] == "assistant")  # the parent's own model calls
        expected = own + (1 if "ta" in recorded_calls(store) else 0)  # + the child's one call, once recorded
        return "" if calls == expected else f"{calls} model calls stored with the results of {sorted(recorded_calls(store))}"

    violations = checking_commits(store, check)
    async for event in parent.stream_async("go", run_id=RUN):
        if event["type"] == "tool_result" and event["toolResult"]["toolUseId"] == "tb":
            b_recorded.set()
    assert violations == []
    assert parent.run_state.metrics["model_call_count"] == 3  # two of the parent's, one of the child's: once
