"""The resume contract on Temporal: ``resume_contract(..., runtime="temporal", temporal="HOST:PORT")``.

The agent runs as a Tether workflow on the Temporal server given, on task queues of the check's
own, its tool starts counted like a contract child's. Checked:

- **consume-once**, the paper's concurrent case as Temporal delivers it: the run stops at its
  interrupt, then ``k`` clients, each on a connection of its own, deliver the one answer at the
  same instant by update: exactly one is taken, every other is refused with ``InterruptError``,
  each tool starts once, and the run ends as an uninterrupted run answered once does; then the
  same with ``k`` signals (fire and forget): each effect still once, the same end (a worker of
  this process serves these runs).
- **prefix continuation**, **effect exactly-once** and **recovery determinism**: a worker process
  is SIGKILLed inside each tool call, a new worker finishes the run, and the finished histories
  are replayed twice (:mod:`tether.testing.contract_temporal_crash`).

- **checkpoint validity**: prompts no store can keep (:data:`INVALID_PROMPTS`: a lone surrogate,
  NaN and infinity in a content block) given to ``TetherClient.start`` must be refused with a
  ``TetherError`` before any workflow exists (the server is asked for each probe's workflow id).

- **fork determinism**: the run finished once, every step of it (or ``forks=N`` spread over it;
  its steps as :meth:`TetherClient.fork_steps <tether.temporal.TetherClient.fork_steps>` lists them,
  derived from its event history) is forked twice with :meth:`TetherClient.fork
  <tether.temporal.TetherClient.fork>`, each fork a new workflow beside the run, and both forks
  run to their ends on the worker: they must end the same (result, final messages and state, the
  fork's run id masked).
"""

from __future__ import annotations

import asyncio
import json
import os
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import Any

from .._diff import describe, first_difference
from ..durable.indoubt import IN_DOUBT
from ..errors import InterruptError, RunEndedError, TetherError
from ..interrupts import Interrupt
from ._child import build, count_starts
from ._procs import _Plan, _spread, _starts
from .contract_report import CONSUME, EFFECT, FORK, HOLDS, NOT_APPLICABLE, PREFIX, RECOVERY, VALIDITY, VIOLATED, ContractReport
from .contract_temporal_crash import _at

AGENT = "agent"
SCRATCH = "TETHER_CRASHTEST_SCRATCH"


def _json_block(value: float) -> dict[str, Any]:
    return {"toolResult": {"toolUseId": "probe", "status": "success", "content": [{"json": {"value": value}}]}}


INVALID_PROMPTS: dict[str, Any] = {
    "a lone surrogate in the prompt text": "book \ud800 it",
    "a lone surrogate in a text block": [{"text": "book it \udfff"}],
    "NaN in a content block": [{"text": "book it"}, _json_block(float("nan"))],
    "infinity in a content block": [{"text": "book it"}, _json_block(float("inf"))],
}
"""The checkpoint-validity probes on Temporal: prompts no store (nor event history) can keep."""


class TemporalChecks:
    """The Temporal phases of one contract check, sharing its plan and report."""

    def __init__(self, plan: _Plan, report: ContractReport, add: Callable[..., None], address: str) -> None:
        self.plan, self.report, self.add, self.address = plan, report, add, address
        self.directory = plan.workdir / "temporal"
        self.directory.mkdir(parents=True, exist_ok=True)
        self.log = self.directory / "starts.log"
        self.queue = f"tether-contract-{plan.token}"

    def check(self, wanted: list[str], k: int, points: int | str = "all", forks: int | str = "all") -> None:
        if forks != "all" and (isinstance(forks, bool) or not isinstance(forks, int) or forks < 1):
            raise TetherError(f"resume_contract forks={forks!r} must be 'all' or a positive int")
        scratch = self.directory / "scratch"  # the agent's outside world (TETHER_CRASHTEST_SCRATCH, as for a child)
        scratch.mkdir(exist_ok=True)
        before = os.environ.get(SCRATCH)
        os.environ[SCRATCH] = str(scratch)
        try:
            asyncio.run(self._check(wanted, k, points, forks))
        finally:
            if before is None:
                os.environ.pop(SCRATCH, None)
            else:
                os.environ[SCRATCH] = before

    async def _check(self, wanted: list[str], k: int, points: int | str, forks: int | str) -> None:
        from temporalio.client import Client

        from ..temporal import BlobStore, TetherClient
        from .contract_temporal_crash import TemporalCrashes

        blobs = BlobStore(self.directory / "blobs")
        client = await Client.connect(self.address)
        tc = TetherClient(client, blobs, self.queue, options={"heartbeat_s": 1.0})  # a dead worker's call is retried within ~1 s
        if VALIDITY in wanted:
            await self._validity(client, tc)
        if CONSUME in wanted:
            await self._consume_once(client, tc, k)
        if PREFIX in wanted or EFFECT in wanted or RECOVERY in wanted:
            await TemporalCrashes(self, tc, client, blobs).check(wanted, points)
        if FORK in wanted:
            await self._forks(client, tc, forks)

    async def _validity(self, client: Any, tc: Any) -> None:
        """Each invalid prompt refused by ``TetherClient.start`` with a TetherError, no workflow started."""
        from temporalio.service import RPCError, RPCStatusCode

        for i, (label, prompt) in enumerate(INVALID_PROMPTS.items()):
            run_id = f"contract-{self.plan.token}-validity-{i}"
            try:
                await tc.start(AGENT, prompt, run_id=run_id)
                refusal: str | None = None
            except TetherError as exc:
                refusal = f"{type(exc).__name__}: {exc}"
            try:
                await client.get_workflow_handle(run_id).describe()
                started = True
            except RPCError as exc:
                if exc.status != RPCStatusCode.NOT_FOUND:
                    raise
                started = False
            if started:
                await client.get_workflow_handle(run_id).terminate(reason="resume contract: checkpoint validity probe")
            if refusal is None or started:
                told = "accepted by TetherClient.start:" if refusal is None else f"refused ({refusal}), yet"
                state = "started" if started else "not found on the server, but no TetherError was raised"
                detail = f"{label}: {told} workflow {run_id!r} {state}"
                self.add(VALIDITY, VIOLATED, len(INVALID_PROMPTS), detail)
                return
        summary = f"{len(INVALID_PROMPTS)} prompts no store can keep ({', '.join(INVALID_PROMPTS)})"
        self.add(
            VALIDITY, HOLDS, len(INVALID_PROMPTS), f"{summary}: each refused by TetherClient.start with a TetherError, no workflow started"
        )

    async def _forks(self, client: Any, tc: Any, forks: int | str) -> None:
        """Fork each chosen step of a finished run twice (new workflows beside it), run both forks
        to their ends on the worker, compare the ends."""
        run_id = f"{self.queue}-fork-reference"
        async with self.worker(client, self.queue):
            await tc.start(AGENT, self.plan.prompt, run_id=run_id, config={})
            await self.drive(tc, run_id)
            if (await tc.status(run_id))["status"] != "done":
                raise TetherError(f"resume contract (temporal): run {run_id!r} waits for interrupts; pass answers= for them")
            await self.finish(tc, run_id)
            steps = await tc.fork_steps(run_id)
            numbers = [step.step for step in steps]
            chosen = [steps[n - 1] for n in (numbers if forks == "all" else _spread(numbers, int(forks)))]
            for step in chosen:
                ends = []
                for name in ("a", "b"):
                    fork_id = f"{run_id}.fork-{step.step}-{name}"
                    await tc.fork(run_id, step.step, new_run_id=fork_id)
                    ends.append(await self.finish(tc, fork_id))
                diff = first_difference(ends[0], ends[1])
                if diff is not None:
                    export = self.directory / f"fork-{step.step}.json"
                    export.write_text(json.dumps({"a": ends[0], "b": ends[1]}, indent=1, ensure_ascii=False, default=str))
                    values = f" ({_at(ends[0], diff)!r} in fork a, {_at(ends[1], diff)!r} in fork b)"
                    detail = f"step {step.step} ({step.position}): its two forks differ at {describe(diff)}{values}"
                    self.add(FORK, VIOLATED, len(chosen), detail, [str(export)])
                    return
        summary = f"{len(chosen)} of the {len(steps)} steps of the Temporal run forked twice with TetherClient.fork"
        self.add(FORK, HOLDS, len(chosen) * 2, f"{summary} (new workflows beside it): every pair ended the same")

    @asynccontextmanager
    async def worker(self, client: Any, queue: str) -> AsyncIterator[None]:
        """A worker of this process serving the agent on ``queue`` for the block."""
        from ..temporal import AgentRegistry, BlobStore, create_worker

        registry = AgentRegistry()
        registry.register(AGENT, self._agent)
        blobs = BlobStore(self.directory / "blobs")
        async with create_worker(client, queue, registry, blobs, sticky_queue_schedule_to_start_timeout=timedelta(seconds=1)):
            yield

    async def _consume_once(self, client: Any, tc: Any, k: int) -> None:
        from temporalio.client import Client

        from ..temporal import TetherClient

        async with self.worker(client, self.queue):
            reference = await self._reference(tc)
            if reference is None:
                why = "the run asked nothing (no interrupt of its own); give an agent that asks and answers="
                self.add(CONSUME, NOT_APPLICABLE, 0, why)
                return
            senders = [TetherClient(await Client.connect(self.address), tc.blobs, self.queue) for _ in range(k)]
            for by_signal in (False, True):
                if not await self._race(tc, senders, reference, by_signal):
                    return
        summary = f"{k} updates and {k} signals delivering one answer at once: 1 update taken, {k - 1} refused, each effect once"
        self.add(CONSUME, HOLDS, 2 * k, summary)

    def _agent(self, config: Mapping[str, Any]) -> Any:
        agent = build(self.plan.factory)
        count_starts(agent, str(self.log))
        return agent

    def _responses(self, interrupts: list[Interrupt]) -> list[dict[str, Any]] | None:
        own = self.plan.answers or {}
        out = []
        for interrupt in interrupts:
            if interrupt.name != IN_DOUBT and interrupt.name not in own:
                return None
            response = "rerun" if interrupt.name == IN_DOUBT else own[interrupt.name]
            out.append({"interruptResponse": {"interruptId": interrupt.id, "response": response}})
        return out

    async def drive(self, tc: Any, run_id: str, until: Callable[[], bool] | None = None) -> None:
        """Answer the run's interrupts until it is done (or ``until()``)."""
        deadline = asyncio.get_running_loop().time() + self.plan.timeout
        while until is None or not until():
            if asyncio.get_running_loop().time() > deadline:
                raise TetherError(f"resume contract (temporal): run {run_id!r} did not end in {self.plan.timeout:.0f} s")
            try:
                status = await tc.status(run_id)
            except Exception:  # the workflow may not have run its first task yet
                status = {"status": "starting"}
            if status["status"] == "done":
                return
            if status["status"] == "interrupted":
                responses = self._responses([Interrupt.from_dict(item) for item in status["interrupts"]])
                if responses is None:
                    return
                try:
                    await tc.answer_interrupts(run_id, responses)
                except (InterruptError, RunEndedError):  # an answer delivered by signal was taken first
                    pass
                continue
            await asyncio.sleep(0.05)

    async def finish(self, tc: Any, run_id: str) -> dict[str, Any]:
        """The run's end: its result, answering any later interrupt; as JSON data to compare."""
        await self.drive(tc, run_id)
        result = await tc.result(run_id)
        snapshot = await tc.final_snapshot(run_id)
        data = {
            "stop_reason": result.stop_reason,
            "text": str(result),
            "messages": snapshot.to_dict()["data"].get("messages"),
            "state": result.state,
        }
        masked: dict[str, Any] = json.loads(json.dumps(data, default=str).replace(run_id, "<run>"))
        return masked

    async def _reference(self, tc: Any) -> dict[str, Any] | None:
        run_id = f"{self.queue}-reference"
        await tc.start(AGENT, self.plan.prompt, run_id=run_id, config={})
        status = await self._wait(tc, run_id)
        if status is None:
            return None
        responses = self._responses(status)
        if responses is None:
            raise TetherError(f"resume contract (temporal): the run asks {[i.name for i in status]}; pass answers= for them")
        await tc.answer_interrupts(run_id, responses)
        return await self.finish(tc, run_id)

    async def _wait(self, tc: Any, run_id: str) -> list[Interrupt] | None:
        """The run's first interrupts (None: it ended without asking)."""
        while True:
            try:
                status = (await tc.status(run_id))["status"]
            except Exception:  # the workflow may not have run its first task yet
                status = "starting"
            if status == "interrupted":
                interrupts: list[Interrupt] = await tc.wait_for_interrupts(run_id)
                return interrupts
            if status == "done":
                return None
            await asyncio.sleep(0.05)

    async def _race(self, tc: Any, senders: list[Any], reference: dict[str, Any], by_signal: bool) -> bool:
        """``k`` deliveries of one answer at once; False when it found a violation."""
        how = "signals" if by_signal else "updates"
        run_id = f"{self.queue}-race-{how}-{uuid.uuid4().hex[:6]}"
        await tc.start(AGENT, self.plan.prompt, run_id=run_id, config={})
        interrupts = await self._wait(tc, run_id)
        responses = self._responses(interrupts or [])
        gate = asyncio.Event()

        async def deliver(sender: Any) -> str:
            await gate.wait()
            if by_signal:
                await sender.signal_interrupts(run_id, responses)
                return "signalled"
            try:
                await sender.answer_interrupts(run_id, responses)
            except InterruptError:
                return "refused"
            return "taken"

        tasks = [asyncio.create_task(deliver(sender)) for sender in senders]
        await asyncio.sleep(0)
        gate.set()
        outcomes = Counter(await asyncio.gather(*tasks))
        end = await self.finish(tc, run_id)
        k = len(senders)
        race = f"{k} {how} delivering one answer at once"
        starts = Counter(s.id for s in _starts(self.log) if s.key.startswith(run_id + "/"))
        twice = {ident: n for ident, n in starts.items() if n > 1}
        if not by_signal and (outcomes["taken"] != 1 or outcomes["refused"] != k - 1):
            self.add(CONSUME, VIOLATED, k, f"{race}: {dict(outcomes)} (must be 1 taken, {k - 1} refused)")
        elif twice:
            ident, n = next(iter(twice.items()))
            self.add(CONSUME, VIOLATED, k, f"{race}: tool call {ident} started {n} times", [str(self.log)])
        elif (diff := first_difference(reference, end)) is not None:
            self.add(CONSUME, VIOLATED, k, f"{race}: the run ended unlike the reference at {describe(diff)}")
        else:
            return True
        return False


__all__ = ["TemporalChecks"]
