"""Record a replay corpus: ``python -m tests.temporal.record_histories [--corpus C] [--prefix P] [--only a,b]``.

Runs each scenario of a corpus on a fresh dev server with an in-process worker and writes the
history of every execution of its workflow (continue-as-new makes several) in Temporal's JSON
history format. The corpora (``--corpus``):

- ``agents`` (the default): agent workflows, to ``tests/temporal/histories/<prefix><scenario>.<n>.json``;
  ``test_replay.py`` replays them against the current workflow, so a change to the loop core or
  the workflow that would break runs in flight fails CI.
- ``graph``: ``tether.graph`` workflows, to ``histories/graph/``, replayed by ``test_graph.py``
  against the current ``GraphWorkflow``.
- ``swarm``: ``tether.swarm`` workflows, to ``histories/swarm/``, replayed by ``test_swarm.py``
  against the current ``SwarmWorkflow``.

The graph nodes' and swarm members' own histories are agent workflows, covered by ``agents``.
Record the corpora again at each release (keeping the old files: runs of the old release may
still be in flight; put a change that breaks them behind ``workflow.patched``), and add a
scenario for every new command sequence (a new activity, timer, patch or wait). Files recorded
by an older release keep its prefix (e.g. ``r0-``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from temporalio.client import Client
from temporalio.service import RPCError

from tether.temporal import AgentRegistry, BlobStore, TetherClient, create_worker

from . import graphs, swarms
from .agents import registry
from .fixtures import execution_histories
from .server import DevServer, require_binary

HISTORIES = Path(__file__).resolve().parent / "histories"

Scenario = Callable[[TetherClient, Path], Awaitable[str | list[str]]]
"""Runs one scenario to its end; returns the workflow id (or the ids: a parent's, then its children's)."""


def _starter(tc: TetherClient, kind: str, verb: str) -> Any:
    """``tc.start`` / ``tc.start_graph`` / ``tc.start_swarm`` (``verb`` ``start``), likewise ``execute`` and ``result``."""
    if kind == "agent":
        return getattr(tc, verb)
    return getattr(tc, f"{kind}_{verb}" if verb == "result" else f"{verb}_{kind}")


def executed(kind: str, name: str, task: str, run_id: str, **start: Any) -> Scenario:
    """A scenario that runs ``name`` (an ``agent``, ``graph`` or ``swarm``) to its end as ``run_id``."""

    async def scenario(tc: TetherClient, tmp: Path) -> str:
        await _starter(tc, kind, "execute")(name, task, run_id=run_id, **start)
        return run_id

    return scenario


def answered(kind: str, name: str, task: str, run_id: str, response: Any, *, signal: bool = False, **start: Any) -> Scenario:
    """A scenario that starts ``name`` as ``run_id``, answers its first interrupt with ``response``
    (by update, or by ``signal``) and waits for its end."""

    async def scenario(tc: TetherClient, tmp: Path) -> str:
        await _starter(tc, kind, "start")(name, task, run_id=run_id, **start)
        interrupts = await tc.wait_for_interrupts(run_id)
        answer = tc.signal_interrupts if signal else tc.answer_interrupts
        await answer(run_id, [{"interruptId": interrupts[0].id, "response": response}])
        await _starter(tc, kind, "result")(run_id)
        return run_id

    return scenario


async def exhausted_tool(tc: TetherClient, tmp: Path) -> str:
    options: Any = {"tool_timeout_s": 0.5, "heartbeat_s": 10.0, "tool_attempts": 2}
    with contextlib.suppress(Exception):  # releases before the tool-failures patch fail the run here
        await tc.execute("stuck", "Try.", run_id="exhausted_tool", options=options)
    return "exhausted_tool"


_IN_DOUBT_OPTIONS: Any = {"tool_timeout_s": 1.0, "heartbeat_s": 10.0}


def in_doubt(run_id: str, answer: Any = None, *, signal: bool = False, **more: Any) -> Scenario:
    """A ``charge`` run whose tool call is in doubt after its worker's timeout (the tool writes its
    started-marker in the scenario's temporary folder): reconciled (``reconcile=True``), or
    answered with ``answer``."""

    async def scenario(tc: TetherClient, tmp: Path) -> str | list[str]:
        config = {"sleep": 2.0, "started_marker": str(tmp / run_id), "once": True, **more}
        start = {"config": config, "options": _IN_DOUBT_OPTIONS}
        if answer is None:
            return await executed("agent", "charge", "Charge 5.", run_id, **start)(tc, tmp)
        return await answered("agent", "charge", "Charge 5.", run_id, answer, signal=signal, **start)(tc, tmp)

    return scenario


async def agent_tool(tc: TetherClient, tmp: Path) -> list[str]:
    await tc.execute("delegator", "Delegate.", run_id="agent_tool", config={"sleep": 0.0})
    return ["agent_tool", "agent_tool.tooluse_1_0"]  # the child workflow (recorded since the child-workflows patch)


async def compensated(tc: TetherClient, tmp: Path) -> str:
    with contextlib.suppress(Exception):  # the run fails (its model), after it undid its three bookings
        await tc.execute("booking", "Book.", run_id="compensated", config={"compensate_on": ["failed"]})
    return "compensated"


SCENARIOS: dict[str, Scenario] = {
    "two_tools": executed("agent", "two_tools", "Compute things.", "two_tools"),
    "hooked": executed("agent", "hooked", "Add.", "hooked"),
    "counter": executed("agent", "counter", "Count.", "counter"),
    "interrupt_update": answered("agent", "asker", "Book Lisbon.", "interrupt_update", "yes"),
    "interrupt_signal": answered("agent", "asker", "Book Lisbon.", "interrupt_signal", "no", signal=True),
    "continue_as_new": executed("agent", "long", "Tick.", "continue_as_new", config={"cycles": 12}, options={"cycles_per_execution": 5}),
    "claim_checked_messages": executed(
        "agent", "big", "Dump.", "claim_checked_messages", config={"size": 50_000, "cycles": 3, "answer_size": 20_000}
    ),
    "claim_checked_state": answered(
        "agent",
        "bulky",
        "Grow and ask.",
        "claim_checked_state",
        "a" * 200_000,
        config={"state_size": 1_200_000, "grow_size": 100_000, "reason_size": 300_000},
    ),
    "exhausted_tool": exhausted_tool,
    "in_doubt_reconciled": in_doubt("in_doubt_reconciled", reconcile=True),
    "in_doubt_answered": in_doubt("in_doubt_answered", {"status": "success", "content": [{"text": "charged once"}]}),
    "in_doubt_rerun": in_doubt("in_doubt_rerun", "rerun", signal=True),
    "throttled": executed("agent", "throttled", "Go.", "throttled", config={"retry_after": 0.1}),
    "agent_tool": agent_tool,
    "compensated": compensated,
}

GRAPH_SCENARIOS: dict[str, Scenario] = {
    # a parallel branch (an agent and a callable) joining, a conditional edge taken
    "graph_parallel": executed("graph", "review", "urgent: explain tides", "graph_parallel"),
    # a cycle with conditions, two node executions per workflow execution (continue-as-new)
    "graph_loop": executed("graph", "loop", "write", "graph_loop", options={"nodes_per_execution": 2}),
    "graph_interrupt": answered("graph", "approval", "publish something", "graph_interrupt", "yes"),
    "graph_nested": executed("graph", "outer", "go", "graph_nested"),
}

SWARM_SCENARIOS: dict[str, Scenario] = {
    # two turns per execution: the third turn runs in a second execution (continue-as-new)
    "swarm_handoffs": executed("swarm", "team", "explain tides", "swarm_handoffs", options={"turns_per_execution": 2}),
    "swarm_limit": executed("swarm", "pingpong", "task", "swarm_limit", config={"max_handoffs": 2}),
    "swarm_interrupt": answered("swarm", "approval", "publish something", "swarm_interrupt", "yes"),
}


@dataclass(frozen=True)
class Corpus:
    """One replay corpus: its scenarios, the registry a worker serves them from, its folder."""

    scenarios: dict[str, Scenario]
    factories: AgentRegistry
    out: Path


CORPORA: dict[str, Corpus] = {
    "agents": Corpus(SCENARIOS, registry, HISTORIES),
    "graph": Corpus(GRAPH_SCENARIOS, graphs.registry, HISTORIES / "graph"),
    "swarm": Corpus(SWARM_SCENARIOS, swarms.registry, HISTORIES / "swarm"),
}


async def histories_of(client: Client, workflow_id: str) -> list[str]:
    """The JSON histories of every execution of ``workflow_id``, first to last."""
    return [history.to_json() for history in await execution_histories(client, workflow_id)]


async def record(prefix: str, only: list[str] | None, out: Path, corpus: Corpus = CORPORA["agents"]) -> list[Path]:
    """Run the scenarios of ``corpus`` and write their histories to ``out``; returns the files written."""
    server = DevServer(require_binary())
    await asyncio.to_thread(server.start)
    written: list[Path] = []
    try:
        client = await Client.connect(server.address)
        with tempfile.TemporaryDirectory() as tmp:
            blobs = BlobStore(Path(tmp) / "blobs")
            tc = TetherClient(client, blobs, "record")
            worker = create_worker(client, "record", corpus.factories, blobs, sticky_queue_schedule_to_start_timeout=timedelta(seconds=1))
            async with worker:
                for name, scenario in corpus.scenarios.items():
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


def main(argv: list[str] | None = None) -> None:
    """The command line: ``--corpus``, ``--prefix``, ``--only``, ``--out`` (default: the corpus's folder)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", choices=sorted(CORPORA), default="agents", help="which workflows' histories (default: agents)")
    parser.add_argument("--prefix", default="", help="file name prefix (e.g. the release)")
    parser.add_argument("--only", default="", help="comma-separated scenario names (default: all)")
    parser.add_argument("--out", default=None, help="the folder (default: the corpus's own)")
    args = parser.parse_args(argv)
    corpus = CORPORA[args.corpus]
    out = Path(args.out) if args.out else corpus.out
    out.mkdir(parents=True, exist_ok=True)
    only = [name for name in args.only.split(",") if name] or None
    for path in asyncio.run(record(args.prefix, only, out, corpus)):
        print(path)


if __name__ == "__main__":
    main()
