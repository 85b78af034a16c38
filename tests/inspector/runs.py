"""Runs the inspector tests look at, built with ScriptedModel on a real SQLite store."""

from __future__ import annotations

from pathlib import Path

from tether import Agent, tool
from tether.durable import SQLiteStore
from tether.durable.fork import fork_run
from tether.models import ScriptedModel
from tether.models.scripted import tool_call, tool_calls
from tether.tools.context import ToolContext

PROMPT = "Please refund order A1 <script>alert('prompt')</script>"
ERROR = "payment gateway said no </script><script>alert('error')</script>"
ANSWER = "Refund approved </script> and done."
CHILD_ANSWER = "child says hello"


@tool
def lookup(order: str) -> str:
    """Look up an order."""
    return f"order {order}: shipped"


@tool
def refund(order: str) -> str:
    """Refund an order (always fails here)."""
    raise RuntimeError(ERROR)


@tool
def approve(ctx: ToolContext, amount: int) -> str:
    """Ask a human to approve an amount."""
    answer = str(ctx.interrupt("approve", reason={"amount": amount}))
    ctx.agent.state.set("approved", answer)
    return answer


def build(path: Path) -> SQLiteStore:
    """A store with run ``r1``: a failing tool, an interrupt, a resume in a new agent (as a new
    process would), the approving tool sets ``approved`` in the agent state; a nested run ``r1.child`` and a fork
    ``r1.fork`` of it at step 3."""
    store = SQLiteStore(path)
    script = [tool_calls([("lookup", {"order": "A1"}), ("refund", {"order": "A1"})]), tool_call("approve", {"amount": 5}), ANSWER]
    first = Agent(
        model=ScriptedModel(script, stateful=True, usage=(11, 4)), tools=[lookup, refund, approve], store=store, state={"customer": "ann"}
    )
    result = first(PROMPT, run_id="r1")
    assert result.interrupts, "the run must stop at the interrupt"
    second = Agent(model=ScriptedModel(script, stateful=True, usage=(11, 4)), tools=[lookup, refund, approve], store=store)
    second.resume("r1", [{"interruptResponse": {"interruptId": result.interrupts[0].id, "response": "yes"}}])
    child = Agent(model=ScriptedModel([CHILD_ANSWER]), store=store)
    child("sub task", run_id="r1.child", parent_run_id="r1")
    fork_run(store, "r1", 3, new_run_id="r1.fork")
    return store


GRAPH_TASK = "Check then write </script><b>bold</b>"


def build_graph(store: SQLiteStore) -> None:
    """Graph run ``g``: ``check`` (an agent that asks a human; answered) -> ``write`` (an agent),
    and ``check`` -> ``notify`` (a callable, on a condition): four nested runs' worth of shape
    (two agent node runs, one callable execution without a run)."""
    from tether.multiagent import GraphBuilder

    def notify(prompt: object) -> str:
        return "notified"

    def build() -> object:
        builder = GraphBuilder()
        check = Agent(model=ScriptedModel([tool_call("approve", {"amount": 3}), "checked"], stateful=True), tools=[approve], name="check")
        builder.add_node(check, "check")
        builder.add_node(Agent(model=ScriptedModel(["written"]), name="write"), "write")
        builder.add_node(notify, "notify")
        builder.add_edge("check", "write")
        builder.add_edge("check", "notify", condition=lambda state: True)
        return builder.build(store=store)

    graph = build()
    first = graph(GRAPH_TASK, run_id="g")  # type: ignore[operator]
    [interrupt] = first.interrupts
    build().resume("g", [{"interruptResponse": {"interruptId": interrupt.id, "response": "yes"}}])  # type: ignore[attr-defined]
