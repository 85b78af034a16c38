"""The durable driver's save points: the start of an idempotent tool rides on the write of the
model's response (two writes per tool cycle); an ``idempotent=False`` tool keeps its own start
write; a call recorded as started that never began (an interrupt stopped the cycle first) is not
left in doubt."""

from __future__ import annotations

from typing import Any

from tether import Agent, tool
from tether.durable import MemoryStore, RunStore
from tether.durable.store import Lease, PreparedWrite
from tether.models import ScriptedModel
from tether.models.scripted import tool_call
from tether.tools.context import ToolContext
from tether.tools.executors import SequentialToolExecutor


class Counting(MemoryStore):
    """A MemoryStore that records the cursor of every head it commits."""

    def __init__(self) -> None:
        super().__init__()
        self.started: list[list[str]] = []

    def commit(self, run_id: str, prepared: PreparedWrite, *, lease: Lease | None = None, wait: bool = True) -> bool:
        import json

        done = super().commit(run_id, prepared, lease=lease, wait=wait)
        if done:
            self.started.append(list(json.loads(prepared.rows.head)["cursor"]["started"]))
        return done


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


@tool(idempotent=False)
def pay(amount: int) -> str:
    """Pay (must not run twice)."""
    return f"paid {amount}"


def writes_of(tools: list[Any], script: list[Any]) -> Counting:
    store = Counting()
    Agent(model=ScriptedModel(script), tools=tools, store=store)("go", run_id="r")
    return store


def test_an_idempotent_tool_cycle_is_two_writes_and_its_start_rides_on_the_model_response() -> None:
    cycles = 5
    store = writes_of([lookup], [tool_call("lookup", {"key": f"k{i}"}) for i in range(cycles)] + ["done"])
    # turn_start, then per cycle after_model (with the start marker) and after_tools, then the last
    # model response and turn_end
    assert len(store.started) == 1 + 2 * cycles + 2
    after_model = store.started[1::2][:cycles]
    assert all(len(started) == 1 for started in after_model)  # the call is recorded as started before it runs


def test_a_non_idempotent_tool_keeps_its_own_start_write() -> None:
    cycles = 3
    store = writes_of([pay], [tool_call("pay", {"amount": i}) for i in range(cycles)] + ["done"])
    assert len(store.started) == 1 + 3 * cycles + 2
    assert store.started[1] == []  # the model's response: the payment is not started yet
    assert len(store.started[2]) == 1  # its own start write, right before it runs


def test_a_call_that_never_began_is_not_left_started() -> None:
    ran: list[str] = []

    @tool
    def ask(ctx: ToolContext) -> str:
        """Asks a person first."""
        ran.append("ask")
        ctx.interrupt("approve", "ok?")
        return "approved"

    @tool
    def after(ctx: ToolContext) -> str:
        """Runs after the question."""
        ran.append("after")
        return "ok"

    store = MemoryStore()
    response = {
        "role": "assistant",
        "content": [
            {"toolUse": {"toolUseId": "a1", "name": "ask", "input": {}}},
            {"toolUse": {"toolUseId": "a2", "name": "after", "input": {}}},
        ],
    }
    agent = Agent(model=ScriptedModel([response, "done"]), tools=[ask, after], store=store, tool_executor=SequentialToolExecutor())
    result = agent("go", run_id="r")
    assert result.stop_reason == "interrupt" and ran == ["ask"]
    loaded = store.load("r")
    assert loaded is not None and loaded.head["cursor"]["started"] == []  # "after" never began: not in doubt


async def test_the_prompt_is_stored_before_the_caller_hears_of_it(store: RunStore) -> None:
    """A durable stream's first event, the prompt message, reaches the caller only once the
    turn's first step stores it: a caller that saw it finds the run (``tether serve`` answers a
    new run's POST when its first event comes; a GET right after it found no run now and then)."""
    agent = Agent(model=ScriptedModel(["done"]), store=store)
    stream = agent.stream_async("go", run_id="first")
    first = await anext(stream)
    assert first["type"] == "message" and first["message"]["role"] == "user"
    stored = store.load("first")
    assert stored is not None and stored.messages == [first["message"]]
    assert [step.position for step in store.history("first")] == ["turn_start"]
    async for _ in stream:
        pass
    assert [step.position for step in store.history("first")][-1] == "turn_end"
