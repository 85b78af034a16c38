"""A durable graph whose node agent calls an agent tool (three levels of runs) under a graph
budget, killed at a chosen point.

Usage: ``python -m tests.budget.nested_worker DB LOG COUNTER KILL_AT BUDGET``. ``BUDGET`` is the
graph's budget as JSON (``Budget.to_dict``). Every kill point (a child tool before and after its
side effect, every message either agent adds, after the store wrote it) adds one to the number
in COUNTER; the one that reaches KILL_AT appends ``kill <label>`` to LOG and SIGKILLs this process
(0: never). Every usage figure a model reports is appended to LOG as ``usage <model id> <input>
<output>``. The worker starts graph run ``g`` or resumes it, then prints its status and the
lead node's stop reason.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from typing import Any

from tests.multiagent.nested_worker import Killer, append
from tether import Agent, Budget, ModelPrice, tool
from tether.durable import SQLiteStore
from tether.hooks import MessageAdded
from tether.models import ScriptedModel
from tether.models.scripted import tool_call
from tether.multiagent import GraphBuilder
from tether.tools.context import ToolContext
from tether.types import Message, ModelRequest, StreamEvent

PRICES = {"lead-model": ModelPrice(10.0, 100.0), "helper-model": ModelPrice(10.0, 100.0)}
LEAD_USAGE = (100, 10)
HELPER_USAGE = (40, 4)
LEAD_CALLS = 4  # the lead asks its helper this many times, then answers


class ReportingModel(ScriptedModel):
    """A scripted model that logs the usage it reports, as a provider's bill would show it."""

    def __init__(self, script: list[Any], usage: tuple[int, int], model_id: str, log: str) -> None:
        super().__init__(script, usage=usage, stateful=True, model_id=model_id)
        self.log = log

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        async for event in super().stream(request):
            if "metadata" in event:
                usage = event["metadata"]["usage"]
                append(self.log, f"usage {self.model_id} {usage['inputTokens']} {usage['outputTokens']}")
            yield event


def build(db: str, log: str, killer: Killer, budget: Budget) -> Any:
    @tool
    async def step(topic: str, context: ToolContext) -> str:
        """Look one thing up, with a side effect."""
        key = context.idempotency_key
        killer.tick(f"before-effect {key}")
        append(log, f"effect {key}")
        killer.tick(f"after-effect {key}")
        return f"fact about {topic}"

    def helper_first(messages: list[Message]) -> Any:
        return tool_call("step", {"topic": "x"}, tool_use_id="s1")

    def on_message(who: str) -> Any:
        def hook(event: MessageAdded) -> None:
            killer.tick(f"message {who}")

        return hook

    helper = Agent(
        model=ReportingModel([helper_first, "found it"], HELPER_USAGE, "helper-model", log),
        tools=[step],
        hooks=[on_message("helper")],
        name="helper",
        description="Looks things up.",
        prices=PRICES,
    )
    lead_script: list[Any] = [tool_call("helper", {"input": f"question {i}"}, tool_use_id=f"q{i}") for i in range(LEAD_CALLS)]
    lead = Agent(
        model=ReportingModel([*lead_script, "final answer"], LEAD_USAGE, "lead-model", log),
        tools=[helper],
        hooks=[on_message("lead")],
        name="lead",
        prices=PRICES,
    )
    builder = GraphBuilder()
    builder.add_node(lead, "lead")
    builder.set_budget(budget)
    return builder.build(store=SQLiteStore(db))


def main() -> None:
    db, log, counter, kill_at, budget = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
    graph = build(db, log, Killer(log, counter, kill_at), Budget.from_dict(json.loads(budget)))
    store = graph.store
    result = graph.resume("g") if store.head("g") is not None else graph("research", run_id="g")
    lead = result.results["lead"].result
    print(json.dumps({"status": result.status, "lead": getattr(lead, "stop_reason", None), "text": str(lead)}))


if __name__ == "__main__":
    main()
