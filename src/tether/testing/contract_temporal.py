"""The resume contract on Temporal: ``resume_contract(..., runtime="temporal", temporal="HOST:PORT")``.

The agent runs as a Tether workflow on the Temporal server given (a worker of this process serves
it on a task queue of its own, its tool starts counted like a contract child's). Checked:

- **consume-once**, the paper's concurrent case as Temporal delivers it: the run stops at its
  interrupt, then ``k`` clients, each on a connection of its own, deliver the one answer at the
  same instant by update: exactly one is taken, every other is refused with ``InterruptError``,
  each tool starts once, and the run ends as an uninterrupted run answered once does; then the
  same with ``k`` signals (fire and forget): each effect still once, the same end.

The other five properties are about Tether's own store, which a Temporal run does not use (its
history is Temporal's event history, replayed by Temporal); they are reported "not applicable"
with that reason. Run the contract with ``runtime="local"`` for them.
"""

from __future__ import annotations

import asyncio
import json
import os
import uuid
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

from .._diff import describe, first_difference
from ..durable.indoubt import IN_DOUBT
from ..errors import InterruptError, RunEndedError, TetherError
from ..interrupts import Interrupt
from ._child import build, count_starts
from ._procs import _Plan, _starts
from .contract_report import CONSUME, EFFECT, FORK, HOLDS, NOT_APPLICABLE, PREFIX, RECOVERY, VALIDITY, VIOLATED, ContractReport

AGENT = "agent"
SCRATCH = "TETHER_CRASHTEST_SCRATCH"
STORE_ONLY = (
    "a Temporal run keeps no Tether store (its history is Temporal's event history, which Temporal "
    "replays): check this property with runtime='local'"
)


class TemporalChecks:
    """The Temporal phases of one contract check, sharing its plan and report."""

    def __init__(self, plan: _Plan, report: ContractReport, add: Callable[..., None], address: str) -> None:
        self.plan, self.report, self.add, self.address = plan, report, add, address
        self.directory = plan.workdir / "temporal"
        self.directory.mkdir(parents=True, exist_ok=True)
        self.log = self.directory / "starts.log"
        self.queue = f"tether-contract-{plan.token}"

    def check(self, wanted: list[str], k: int) -> None:
        for name in (PREFIX, EFFECT, FORK, VALIDITY, RECOVERY):
            if name in wanted:
                self.add(name, NOT_APPLICABLE, 0, STORE_ONLY)
        if CONSUME in wanted:
            scratch = self.directory / "scratch"  # the agent's outside world (TETHER_CRASHTEST_SCRATCH, as for a child)
            scratch.mkdir(exist_ok=True)
            before = os.environ.get(SCRATCH)
            os.environ[SCRATCH] = str(scratch)
            try:
                asyncio.run(self._consume_once(k))
            finally:
                if before is None:
                    os.environ.pop(SCRATCH, None)
                else:
                    os.environ[SCRATCH] = before

    async def _consume_once(self, k: int) -> None:
        from temporalio.client import Client

        from ..temporal import AgentRegistry, BlobStore, TetherClient, create_worker

        registry = AgentRegistry()
        registry.register(AGENT, self._agent)
        blobs = BlobStore(self.directory / "blobs")
        client = await Client.connect(self.address)
        tc = TetherClient(client, blobs, self.queue)
        async with create_worker(client, self.queue, registry, blobs):
            reference = await self._reference(tc)
            if reference is None:
                why = "the run asked nothing (no interrupt of its own); give an agent that asks and answers="
                self.add(CONSUME, NOT_APPLICABLE, 0, why)
                return
            senders = [TetherClient(await Client.connect(self.address), blobs, self.queue) for _ in range(k)]
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

    async def _finish(self, tc: Any, run_id: str) -> dict[str, Any]:
        """The run's end: its result, answering any later interrupt; as JSON data to compare."""
        while True:
            status = await tc.status(run_id)
            if status["status"] != "interrupted":
                break
            try:
                interrupts = await tc.wait_for_interrupts(run_id)
            except RunEndedError:  # an answer delivered by signal was taken after the status was read
                break
            responses = self._responses(interrupts)
            if responses is None:
                break
            await tc.answer_interrupts(run_id, responses)
        result = await tc.result(run_id)
        snapshot = await tc.final_snapshot(run_id)
        data = {"stop_reason": result.stop_reason, "text": str(result), "messages": snapshot.to_dict()["data"].get("messages")}
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
        return await self._finish(tc, run_id)

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
        end = await self._finish(tc, run_id)
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
