"""Consume-once on Temporal (the resume contract's concurrent case): k clients, each on a connection
of its own, deliver one interrupt answer at the same instant, by update and by signal. Exactly one
delivery is taken, every other update is refused with a clear ``InterruptError``, and the gated
effect (the ``book`` tool's side-effect line) happens once."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from temporalio.client import Client

from tether.errors import InterruptError
from tether.temporal import BlobStore, TetherClient

from .fixtures import running_worker
from .server import DevServer


@pytest.mark.parametrize(("k", "signals"), [(2, False), (8, False), (8, True)])
async def test_k_clients_answering_one_interrupt_at_once_book_once(
    dev_server: DevServer, client: Client, blobs: BlobStore, task_queue: str, tmp_path: Path, k: int, signals: bool
) -> None:
    log = tmp_path / "side.log"
    run_id = f"consume-once-{k}-{signals}"
    tc = TetherClient(client, blobs, task_queue)
    async with running_worker(client, task_queue, blobs):
        await tc.start("asker", "Book Lisbon.", run_id=run_id, config={"log": str(log)})
        (interrupt,) = await tc.wait_for_interrupts(run_id)
        answer = [{"interruptResponse": {"interruptId": interrupt.id, "response": "yes"}}]
        senders = [TetherClient(await Client.connect(dev_server.address), blobs, task_queue) for _ in range(k)]
        start = asyncio.Event()

        async def deliver(sender: TetherClient, by_signal: bool) -> str:
            await start.wait()
            if by_signal:
                await sender.signal_interrupts(run_id, answer)
                return "signalled"
            try:
                await sender.answer_interrupts(run_id, answer)
            except InterruptError as exc:
                return f"refused: {exc}"
            return "taken"

        tasks = [asyncio.create_task(deliver(sender, by_signal=signals and i % 4 == 3)) for i, sender in enumerate(senders)]
        await asyncio.sleep(0)
        start.set()
        outcomes = await asyncio.gather(*tasks)
        result = await tc.result(run_id)
    assert result.stop_reason == "end_turn" and result.text == "Booking handled."
    assert log.read_text().splitlines() == ["model 0", "book Lisbon yes", "model 1"]  # the gated effect, once
    updates = [o for o in outcomes if o != "signalled"]
    taken = updates.count("taken")
    # One delivery is consumed: an update that is taken, or (when a signal got there first) none.
    assert taken == 1 if not signals else taken <= 1, outcomes
    refusals = [o for o in updates if o != "taken"]
    assert all(o.startswith("refused: ") and run_id in o for o in refusals), outcomes
