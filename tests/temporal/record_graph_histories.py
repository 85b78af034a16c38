"""Record the graph replay corpus: ``python -m tests.temporal.record_graph_histories [--prefix P]``.

Runs each graph scenario below on a fresh dev server with an in-process worker and writes the
history of every execution of its ``tether.graph`` workflow (continue-as-new makes several) to
``tests/temporal/histories/graph/<prefix><scenario>.<n>.json``. ``test_graph.py`` replays them
against the current ``GraphWorkflow``, so a change to its command sequence that would break graph
runs in flight fails CI (put such a change behind ``workflow.patched``). The agent nodes' own
histories are agent workflows, covered by ``record_histories.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from collections.abc import Awaitable, Callable
from datetime import timedelta
from pathlib import Path

from temporalio.client import Client

from tether.temporal import BlobStore, TetherClient, create_worker

from .graphs import registry
from .record_histories import HISTORIES, histories_of
from .server import DevServer, require_binary

GRAPH_HISTORIES = HISTORIES / "graph"

Scenario = Callable[[TetherClient], Awaitable[str]]
"""Runs one scenario to its end; returns the graph workflow id."""


async def graph_parallel(tc: TetherClient) -> str:
    # a parallel branch (an agent and a callable) joining, a conditional edge taken
    await tc.execute_graph("review", "urgent: explain tides", run_id="graph_parallel")
    return "graph_parallel"


async def graph_loop(tc: TetherClient) -> str:
    # a cycle with conditions, one node execution per workflow execution (continue-as-new)
    await tc.execute_graph("loop", "write", run_id="graph_loop", options={"nodes_per_execution": 2})
    return "graph_loop"


async def graph_interrupt(tc: TetherClient) -> str:
    await tc.start_graph("approval", "publish something", run_id="graph_interrupt")
    [interrupt] = await tc.wait_for_interrupts("graph_interrupt")
    await tc.answer_interrupts("graph_interrupt", [{"interruptId": interrupt.id, "response": "yes"}])
    await tc.graph_result("graph_interrupt")
    return "graph_interrupt"


async def graph_nested(tc: TetherClient) -> str:
    await tc.execute_graph("outer", "go", run_id="graph_nested")
    return "graph_nested"


SCENARIOS: dict[str, Scenario] = {
    "graph_parallel": graph_parallel,
    "graph_loop": graph_loop,
    "graph_interrupt": graph_interrupt,
    "graph_nested": graph_nested,
}


async def record(prefix: str, out: Path) -> list[Path]:
    """Run the scenarios and write their graph workflows' histories; returns the files written."""
    server = DevServer(require_binary())
    await asyncio.to_thread(server.start)
    written: list[Path] = []
    try:
        client = await Client.connect(server.address)
        with tempfile.TemporaryDirectory() as tmp:
            blobs = BlobStore(Path(tmp) / "blobs")
            tc = TetherClient(client, blobs, "record")
            worker = create_worker(client, "record", registry, blobs, sticky_queue_schedule_to_start_timeout=timedelta(seconds=1))
            async with worker:
                for name, scenario in SCENARIOS.items():
                    workflow_id = await scenario(tc)
                    for n, text in enumerate(await histories_of(client, workflow_id)):
                        path = out / f"{prefix}{name}.{n}.json"
                        path.write_text(text + "\n")
                        written.append(path)
    finally:
        await asyncio.to_thread(server.stop)
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prefix", default="", help="file name prefix (e.g. the release)")
    parser.add_argument("--out", default=str(GRAPH_HISTORIES))
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for path in asyncio.run(record(args.prefix, out)):
        print(path)


if __name__ == "__main__":
    main()
