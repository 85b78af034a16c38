"""Record the replay corpus: ``python -m tests.temporal.record_histories [--prefix P] [--only a,b]``.

Runs each scenario below on a fresh dev server with an in-process worker and writes the
history of every execution of its workflow (continue-as-new makes several) to
``tests/temporal/histories/<prefix><scenario>.<n>.json`` in Temporal's JSON history format.
``test_replay.py`` replays them all against the current workflow code, so a change to the loop
core or the workflow that would break runs in flight fails CI.

Record the corpus again at each release (keeping the old files: runs of the old release may
still be in flight), and add a scenario for every new command sequence (a new activity, timer,
patch or wait). Files recorded by an older release keep its prefix (e.g. ``r0-``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import tempfile
from collections.abc import Awaitable, Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

from temporalio.client import Client
from temporalio.service import RPCError

from tether.temporal import AgentRegistry, BlobStore, TetherClient, create_worker

from .agents import registry
from .server import DevServer, require_binary

HISTORIES = Path(__file__).resolve().parent / "histories"

Scenario = Callable[[TetherClient, Path], Awaitable[str | list[str]]]
"""Runs one scenario to its end; returns the workflow id (or the ids: a parent's, then its children's)."""


async def two_tools(tc: TetherClient, tmp: Path) -> str:
    await tc.execute("two_tools", "Compute things.", run_id="two_tools")
    return "two_tools"


async def hooked(tc: TetherClient, tmp: Path) -> str:
    await tc.execute("hooked", "Add.", run_id="hooked")
    return "hooked"


async def counter(tc: TetherClient, tmp: Path) -> str:
    await tc.execute("counter", "Count.", run_id="counter")
    return "counter"


async def interrupt_update(tc: TetherClient, tmp: Path) -> str:
    await tc.start("asker", "Book Lisbon.", run_id="interrupt_update")
    interrupts = await tc.wait_for_interrupts("interrupt_update")
    await tc.answer_interrupts("interrupt_update", [{"interruptId": interrupts[0].id, "response": "yes"}])
    await tc.result("interrupt_update")
    return "interrupt_update"


async def interrupt_signal(tc: TetherClient, tmp: Path) -> str:
    await tc.start("asker", "Book Lisbon.", run_id="interrupt_signal")
    interrupts = await tc.wait_for_interrupts("interrupt_signal")
    await tc.signal_interrupts("interrupt_signal", [{"interruptId": interrupts[0].id, "response": "no"}])
    await tc.result("interrupt_signal")
    return "interrupt_signal"


async def continue_as_new(tc: TetherClient, tmp: Path) -> str:
    await tc.execute("long", "Tick.", run_id="continue_as_new", config={"cycles": 12}, options={"cycles_per_execution": 5})
    return "continue_as_new"


async def claim_checked_messages(tc: TetherClient, tmp: Path) -> str:
    config = {"size": 50_000, "cycles": 3, "answer_size": 20_000}
    await tc.execute("big", "Dump.", run_id="claim_checked_messages", config=config)
    return "claim_checked_messages"


async def claim_checked_state(tc: TetherClient, tmp: Path) -> str:
    config = {"state_size": 1_200_000, "grow_size": 100_000, "reason_size": 300_000}
    await tc.start("bulky", "Grow and ask.", run_id="claim_checked_state", config=config)
    interrupts = await tc.wait_for_interrupts("claim_checked_state")
    await tc.answer_interrupts("claim_checked_state", [{"interruptId": interrupts[0].id, "response": "a" * 200_000}])
    await tc.result("claim_checked_state")
    return "claim_checked_state"


async def exhausted_tool(tc: TetherClient, tmp: Path) -> str:
    options: Any = {"tool_timeout_s": 0.5, "heartbeat_s": 10.0, "tool_attempts": 2}
    with contextlib.suppress(Exception):  # releases before the tool-failures patch fail the run here
        await tc.execute("stuck", "Try.", run_id="exhausted_tool", options=options)
    return "exhausted_tool"


async def in_doubt_reconciled(tc: TetherClient, tmp: Path) -> str:
    config = {"sleep": 2.0, "started_marker": str(tmp / "reconciled"), "once": True, "reconcile": True}
    options: Any = {"tool_timeout_s": 1.0, "heartbeat_s": 10.0}
    await tc.execute("charge", "Charge 5.", run_id="in_doubt_reconciled", config=config, options=options)
    return "in_doubt_reconciled"


async def in_doubt_answered(tc: TetherClient, tmp: Path) -> str:
    config = {"sleep": 2.0, "started_marker": str(tmp / "answered"), "once": True}
    options: Any = {"tool_timeout_s": 1.0, "heartbeat_s": 10.0}
    await tc.start("charge", "Charge 5.", run_id="in_doubt_answered", config=config, options=options)
    interrupts = await tc.wait_for_interrupts("in_doubt_answered")
    answer = {"status": "success", "content": [{"text": "charged once"}]}
    await tc.answer_interrupts("in_doubt_answered", [{"interruptId": interrupts[0].id, "response": answer}])
    await tc.result("in_doubt_answered")
    return "in_doubt_answered"


async def in_doubt_rerun(tc: TetherClient, tmp: Path) -> str:
    config = {"sleep": 2.0, "started_marker": str(tmp / "rerun"), "once": True}
    options: Any = {"tool_timeout_s": 1.0, "heartbeat_s": 10.0}
    await tc.start("charge", "Charge 5.", run_id="in_doubt_rerun", config=config, options=options)
    interrupts = await tc.wait_for_interrupts("in_doubt_rerun")
    await tc.signal_interrupts("in_doubt_rerun", [{"interruptId": interrupts[0].id, "response": "rerun"}])
    await tc.result("in_doubt_rerun")
    return "in_doubt_rerun"


async def agent_tool(tc: TetherClient, tmp: Path) -> list[str]:
    await tc.execute("delegator", "Delegate.", run_id="agent_tool", config={"sleep": 0.0})
    return ["agent_tool", "agent_tool.tooluse_1_0"]  # the child workflow (recorded since the child-workflows patch)


async def throttled(tc: TetherClient, tmp: Path) -> str:
    await tc.execute("throttled", "Go.", run_id="throttled", config={"retry_after": 0.1})
    return "throttled"


SCENARIOS: dict[str, Scenario] = {
    "two_tools": two_tools,
    "hooked": hooked,
    "counter": counter,
    "interrupt_update": interrupt_update,
    "interrupt_signal": interrupt_signal,
    "continue_as_new": continue_as_new,
    "claim_checked_messages": claim_checked_messages,
    "claim_checked_state": claim_checked_state,
    "exhausted_tool": exhausted_tool,
    "in_doubt_reconciled": in_doubt_reconciled,
    "in_doubt_answered": in_doubt_answered,
    "in_doubt_rerun": in_doubt_rerun,
    "throttled": throttled,
    "agent_tool": agent_tool,
}


async def histories_of(client: Client, workflow_id: str) -> list[str]:
    """The JSON histories of every execution of ``workflow_id``, first to last."""
    handle = client.get_workflow_handle(workflow_id)
    info = (await handle.describe()).raw_description.workflow_execution_info
    run_id: str | None = info.first_run_id or info.execution.run_id
    out: list[str] = []
    while run_id:
        history = await client.get_workflow_handle(workflow_id, run_id=run_id).fetch_history()
        out.append(history.to_json())
        run_id = None
        for event in history.events:
            if event.HasField("workflow_execution_continued_as_new_event_attributes"):
                run_id = event.workflow_execution_continued_as_new_event_attributes.new_execution_run_id
    return out


async def record(
    prefix: str,
    only: list[str] | None,
    out: Path,
    scenarios: dict[str, Scenario] = SCENARIOS,
    factories: AgentRegistry = registry,
) -> list[Path]:
    """Run ``scenarios`` (a worker serving ``factories``) and write their histories; returns the
    files written. ``record_graph_histories`` and ``record_swarm_histories`` call it too."""
    server = DevServer(require_binary())
    await asyncio.to_thread(server.start)
    written: list[Path] = []
    try:
        client = await Client.connect(server.address)
        with tempfile.TemporaryDirectory() as tmp:
            blobs = BlobStore(Path(tmp) / "blobs")
            tc = TetherClient(client, blobs, "record")
            worker = create_worker(client, "record", factories, blobs, sticky_queue_schedule_to_start_timeout=timedelta(seconds=1))
            async with worker:
                for name, scenario in scenarios.items():
                    if only and name not in only:
                        continue
                    ids = await scenario(tc, Path(tmp))
                    texts = []
                    for workflow_id in [ids] if isinstance(ids, str) else ids:
                        try:
                            texts += await histories_of(client, workflow_id)
                        except RPCError:  # a child workflow this release does not start
                            continue
                    for n, text in enumerate(texts):
                        path = out / f"{prefix}{name}.{n}.json"
                        path.write_text(text + "\n")
                        written.append(path)
    finally:
        await asyncio.to_thread(server.stop)
    return written


def main(
    description: str = __doc__.splitlines()[0],
    scenarios: dict[str, Scenario] = SCENARIOS,
    factories: AgentRegistry = registry,
    default_out: Path = HISTORIES,
) -> None:
    """The command line of a recorder: ``--prefix``, ``--only``, ``--out``."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--prefix", default="", help="file name prefix (e.g. the release)")
    parser.add_argument("--only", default="", help="comma-separated scenario names (default: all)")
    parser.add_argument("--out", default=str(default_out))
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    only = [name for name in args.only.split(",") if name] or None
    for path in asyncio.run(record(args.prefix, only, out, scenarios, factories)):
        print(path)


if __name__ == "__main__":
    main()
