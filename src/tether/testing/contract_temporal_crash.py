"""The crash phases of the resume contract on Temporal (:mod:`tether.testing.contract_temporal`).

- **prefix continuation** and **effect exactly-once**: the run's worker, a process of its own
  (:mod:`tether.testing._temporal_worker`), is SIGKILLed inside each tool call of the run (before
  the tool's body runs, and once it returned, its result not yet recorded); a new worker (in the
  checking process) takes the run over: Temporal notices the dead activity by its heartbeat and
  runs it again. The messages the run held at the kill must be kept, the run must end as the
  uninterrupted one did (its result and final snapshot messages, the run id masked), and each
  tool call must start once, the cut-off one at most twice with the same idempotency key.
- **recovery determinism**: Temporal recovers a run by replaying its event history against the
  workflow code. The history of each crashed and finished run is replayed twice with
  ``temporalio``'s ``Replayer`` (the workflows and the sandbox a Tether worker registers): both
  replays must succeed with no nondeterminism and return the result the run recorded, byte for
  byte.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from .._diff import describe, first_difference
from ..errors import TetherError
from ._procs import _begun, _ready, _spread, _starts
from ._served_registry import FACTORY, HOLD, LOG
from .contract_report import EFFECT, HOLDS, NOT_APPLICABLE, PREFIX, RECOVERY, VIOLATED

_replayed: list[Any] = []  # the results the replayed workflows returned (the replay's interceptor appends)


class TemporalCrashes:
    """Kill the worker inside each tool call, finish on another, replay the histories."""

    def __init__(self, checks: Any, tc: Any, client: Any, blobs: Any) -> None:
        self.checks, self.plan = checks, checks.plan
        self.wanted: list[str] = []
        self.tc, self.client, self.blobs = tc, client, blobs
        self.log = checks.log
        self.finished: list[str] = []  # the runs a worker was killed in, finished

    def add(self, name: str, *verdict: Any) -> None:
        """Record a verdict of a property the check was asked for."""
        if name in self.wanted:
            self.checks.add(name, *verdict)

    async def check(self, wanted: list[str], points: int | str) -> None:
        self.wanted = wanted
        reference_id = f"{self.checks.queue}-crash-reference"
        async with self.checks.worker(self.client, self.checks.queue):
            await self.tc.start("agent", self.plan.prompt, run_id=reference_id, config={})
            reference = {"run": reference_id, "end": await self.checks.finish(self.tc, reference_id)}
        calls = len(self.begun(reference_id))
        chosen = [(n, when) for n in range(1, calls + 1) for when in ("before", "after")]
        if points != "all":
            chosen = _spread(chosen, int(points))
        killed = 0
        for n, when in chosen:
            killed += await self.crash(n, when, reference, killed + 1)
        if not killed:
            for name in (PREFIX, EFFECT):
                self.add(name, NOT_APPLICABLE, 0, "the run calls no tool: no call for a worker to die in")
        else:
            summary = f"{killed} worker kills inside a tool call (before and after its body)"
            self.add(PREFIX, HOLDS, killed, f"{summary}, each run finished by a new worker as the uninterrupted one")
            self.add(EFFECT, HOLDS, killed, f"{summary}: each call started once, the cut-off one at most twice with its key")
        if RECOVERY in wanted:
            await self.replays([reference_id, *self.finished])

    def begun(self, run_id: str) -> list[str]:
        """Every start of a tool body in ``run_id``, in order (one that stopped to ask counts too)."""
        return _begun(self.log, run_id)

    def spawn(self, queue: str, hold: str) -> subprocess.Popen[str]:
        env = {**self.plan.env, FACTORY: self.plan.factory, LOG: str(self.log), HOLD: hold}
        env["TETHER_CRASHTEST_SCRATCH"] = os.environ["TETHER_CRASHTEST_SCRATCH"]
        config = {"address": self.checks.address, "queue": queue, "blobs": str(self.blobs.root), "sys_path": self.plan.sys_path}
        output = open(self.checks.directory / f"worker-{queue}.log", "ab")
        try:
            process = subprocess.Popen(
                [sys.executable, "-m", "tether.testing._temporal_worker", json.dumps(config)],
                cwd=os.getcwd(),
                env=env,
                stdout=subprocess.PIPE,
                stderr=output,
                text=True,
            )
        finally:
            output.close()
        if not _ready(process, self.plan.timeout):
            self.kill(process)
            raise TetherError(f"resume contract (temporal): the worker did not start; see {output.name}")
        return process

    @staticmethod
    def kill(process: subprocess.Popen[str]) -> None:
        if process.poll() is None:
            os.kill(process.pid, signal.SIGKILL)
        process.wait()

    async def crash(self, n: int, when: str, reference: dict[str, Any], index: int) -> int:
        """Kill the worker inside tool call ``n`` (``when``: before or after its body); 1 if it was
        killed there (0: call ``n`` stopped to ask a person, it has no "after")."""
        slug = f"{n}-{when}"
        queue = f"{self.checks.queue}-crash-{slug}"  # a queue of its own: no other worker takes the call
        run_id = queue
        held = Path(f"{self.log}.held")
        held.unlink(missing_ok=True)
        victim = await asyncio.to_thread(self.spawn, queue, f"{n}:{when}")
        tc = type(self.tc)(self.client, self.blobs, queue, options={"heartbeat_s": 1.0})
        try:
            await tc.start("agent", self.plan.prompt, run_id=run_id, config={})
            await self.checks.drive(tc, run_id, until=held.exists)
            if not held.exists():
                return 0
            before = (await tc.snapshot(run_id)).to_dict()["data"].get("messages") or []  # what the run holds at the kill
        finally:
            await asyncio.to_thread(self.kill, victim)
        async with self.checks.worker(self.client, queue):
            end = await self.checks.finish(tc, run_id)
        self.finished.append(run_id)
        begun = self.begun(run_id)
        cut = begun[n - 1] if len(begun) >= n else None  # the call the kill cut off
        counts = Counter(s.id for s in _starts(self.log) if s.key.startswith(run_id + "/"))
        label = f"worker killed inside tool call {n} of {len(self.begun(reference['run']))} ({when} its body)"
        export = self.checks.directory / f"{run_id}.json"
        export.write_text(json.dumps({"uninterrupted": reference["end"], "killed": end}, indent=1, ensure_ascii=False, default=str))
        files = [str(self.log), str(export)]
        kept = (end.get("messages") or [])[: len(before)]
        masked = json.loads(json.dumps(before, default=str).replace(run_id, "<run>"))
        if kept != masked:
            where = next((i for i, (x, y) in enumerate(zip(masked, kept, strict=False)) if x != y), len(kept))
            self.add(PREFIX, VIOLATED, index, f"{label}: message {where + 1}, held by the run at the kill, changed", files)
        elif (diff := first_difference(reference["end"], end)) is not None:
            values = f" ({_at(reference['end'], diff)!r} uninterrupted, {_at(end, diff)!r} after the kill)"
            if cut is not None and counts[cut] == 2:  # the cut-off call ran again and the run came out otherwise
                detail = f"{label}: tool call {cut}, run again with the same key after the kill, changed the run"
                detail += f" at {describe(diff)}{values}"
                self.add(EFFECT, VIOLATED, index, detail + ": not idempotent (declare idempotent=False with a reconcile callback)", files)
            else:
                self.add(PREFIX, VIOLATED, index, f"{label}: the run ended unlike the uninterrupted one at {describe(diff)}{values}", files)
        over = {ident: c for ident, c in counts.items() if c > (2 if ident == cut else 1)}
        if over:
            ident, count = next(iter(over.items()))
            self.add(EFFECT, VIOLATED, index, f"{label}: tool call {ident} started {count} times", files)
        return 1

    async def replays(self, run_ids: list[str]) -> None:
        """Replay each run's history twice; both must succeed and return the recorded result."""
        for run_id in run_ids:
            history = await self.client.get_workflow_handle(run_id).fetch_history()
            failure = await replay_twice(history)
            if failure is not None:
                self.add(RECOVERY, VIOLATED, 2 * len(run_ids), f"run {run_id}: {failure}")
                return
        crashed = len(run_ids) - 1
        summary = f"the histories of {len(run_ids)} runs ({crashed} with a worker killed in a tool call) each replayed twice"
        self.add(RECOVERY, HOLDS, 2 * len(run_ids), f"{summary}: no nondeterminism, the recorded result both times")


async def replay_twice(history: Any, workflows: list[type] | None = None) -> str | None:
    """Replay ``history`` twice against ``workflows`` (default: those a Tether worker registers, in its
    sandbox); None when both replays succeed and return the result the history recorded (as JSON
    data), else what went wrong."""
    from temporalio.converter import DataConverter
    from temporalio.worker import Replayer

    from ..temporal.worker import WORKFLOWS, workflow_runner

    replayer = Replayer(workflows=workflows or WORKFLOWS, workflow_runner=workflow_runner(), interceptors=[_capture()])
    converter = DataConverter.default.payload_converter
    done = "workflow_execution_completed_event_attributes"
    recorded = next((list(getattr(e, done).result.payloads) for e in history.events if e.HasField(done)), [])
    wanted = json.dumps(converter.from_payloads(recorded), sort_keys=True, default=str)
    for attempt in (1, 2):
        _replayed.clear()
        outcome = await replayer.replay_workflow(history, raise_on_replay_failure=False)
        if outcome.replay_failure is not None:
            return f"replay {attempt} of its history failed: {outcome.replay_failure!r}"
        got = json.dumps(converter.from_payloads(converter.to_payloads(_replayed)), sort_keys=True, default=str)
        if got != wanted:
            return f"replay {attempt} of its history returned {got[:300]}, the run recorded {wanted[:300]}"
    return None


def _at(data: Any, path: list[Any]) -> Any:
    """The value at ``path`` in ``data`` (None where it has none)."""
    for key in path:
        try:
            data = data[key]
        except (KeyError, IndexError, TypeError):
            return None
    return data


def _capture() -> Any:
    """The replay's interceptor class: it keeps what each replayed workflow returned."""
    from temporalio.worker import Interceptor, WorkflowInboundInterceptor

    class Inbound(WorkflowInboundInterceptor):
        async def execute_workflow(self, input: Any) -> Any:
            result = await super().execute_workflow(input)
            _replayed.append(result)
            return result

    class Capture(Interceptor):
        def workflow_interceptor_class(self, input: Any) -> type[WorkflowInboundInterceptor]:
            return Inbound

    return Capture()


__all__ = ["TemporalCrashes"]
