"""Record the graph replay corpus: ``python -m tests.temporal.record_graph_histories [--prefix P]``.

Runs each graph scenario below on a fresh dev server with an in-process worker and writes the
history of every execution of its ``tether.graph`` workflow (continue-as-new makes several) to
``tests/temporal/histories/graph/<prefix><scenario>.<n>.json``. ``test_graph.py`` replays them
against the current ``GraphWorkflow``, so a change to its command sequence that would break graph
runs in flight fails CI (put such a change behind ``workflow.patched``). The agent nodes' own
histories are agent workflows, covered by ``record_histories.py``.
"""

from __future__ import annotations

from pathlib import Path

from tether.temporal import TetherClient

from .graphs import registry
from .record_histories import HISTORIES, Scenario, main

GRAPH_HISTORIES = HISTORIES / "graph"


async def graph_parallel(tc: TetherClient, tmp: Path) -> str:
    # a parallel branch (an agent and a callable) joining, a conditional edge taken
    await tc.execute_graph("review", "urgent: explain tides", run_id="graph_parallel")
    return "graph_parallel"


async def graph_loop(tc: TetherClient, tmp: Path) -> str:
    # a cycle with conditions, one node execution per workflow execution (continue-as-new)
    await tc.execute_graph("loop", "write", run_id="graph_loop", options={"nodes_per_execution": 2})
    return "graph_loop"


async def graph_interrupt(tc: TetherClient, tmp: Path) -> str:
    await tc.start_graph("approval", "publish something", run_id="graph_interrupt")
    [interrupt] = await tc.wait_for_interrupts("graph_interrupt")
    await tc.answer_interrupts("graph_interrupt", [{"interruptId": interrupt.id, "response": "yes"}])
    await tc.graph_result("graph_interrupt")
    return "graph_interrupt"


async def graph_nested(tc: TetherClient, tmp: Path) -> str:
    await tc.execute_graph("outer", "go", run_id="graph_nested")
    return "graph_nested"


SCENARIOS: dict[str, Scenario] = {
    "graph_parallel": graph_parallel,
    "graph_loop": graph_loop,
    "graph_interrupt": graph_interrupt,
    "graph_nested": graph_nested,
}


if __name__ == "__main__":
    main(__doc__.splitlines()[0], SCENARIOS, registry, GRAPH_HISTORIES)
