"""Non-idempotent tools on Temporal: a lost attempt is never re-run blindly.

A tool declared ``idempotent=False`` runs as a single-attempt activity. When that attempt is
lost (kill -9 of its worker, or a timeout), the call is *in doubt* and is settled exactly as a
local durable run settles it: the agent's ``reconcile`` callable, or a ``tether.in_doubt``
interrupt answered with the result to record or ``"rerun"``.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from temporalio.client import Client

from tether.durable.indoubt import IN_DOUBT
from tether.temporal import BlobStore, TetherClient

from .fixtures import kill_9, running_worker, wait_for_file


async def _start_and_kill(tc: TetherClient, run_id: str, config: dict[str, object], marker: Path, worker: subprocess.Popen[str]) -> None:
    await tc.start("charge", "Charge 5.", run_id=run_id, config=config)
    await wait_for_file(marker)
    kill_9(worker)


async def test_killed_worker_mid_non_idempotent_tool_is_reconciled_not_rerun(
    client: Client, blobs: BlobStore, task_queue: str, tmp_path: Path, worker_process: subprocess.Popen[str]
) -> None:
    log, marker = tmp_path / "side.log", tmp_path / "started"
    tc = TetherClient(client, blobs, task_queue, options={"heartbeat_s": 1.0, "tool_attempts": 5})
    config = {"log": str(log), "sleep": 30.0, "started_marker": str(marker), "reconcile": True}
    await _start_and_kill(tc, "doubt-reconcile", config, marker, worker_process)
    async with running_worker(client, task_queue, blobs):
        result = await tc.result("doubt-reconcile")
        snapshot = await tc.final_snapshot("doubt-reconcile")
    assert result.stop_reason == "end_turn" and result.text == "charged"
    key = "doubt-reconcile/tooluse_1_0"
    # One start of the body (the killed one), then the reconcile hook; never a second start.
    assert log.read_text().splitlines() == ["model 0", f"charge-start 5 {key}", f"reconcile charge {key}", "model 1"]
    tool_result = snapshot.data["messages"][-2]["content"][0]["toolResult"]
    assert tool_result["status"] == "success" and tool_result["content"] == [{"text": "reconciled 5"}]


async def test_killed_worker_mid_non_idempotent_tool_asks_through_in_doubt_interrupt(
    client: Client, blobs: BlobStore, task_queue: str, tmp_path: Path, worker_process: subprocess.Popen[str]
) -> None:
    log, marker = tmp_path / "side.log", tmp_path / "started"
    tc = TetherClient(client, blobs, task_queue, options={"heartbeat_s": 1.0})
    config = {"log": str(log), "sleep": 30.0, "started_marker": str(marker)}
    await _start_and_kill(tc, "doubt-ask", config, marker, worker_process)
    async with running_worker(client, task_queue, blobs):
        interrupts = await tc.wait_for_interrupts("doubt-ask")
        assert [i.name for i in interrupts] == [IN_DOUBT]
        reason = interrupts[0].reason
        assert isinstance(reason, dict)
        key = "doubt-ask/tooluse_1_0"
        # The same reason a local durable run gives.
        assert (reason["tool"], reason["input"], reason["idempotency_key"]) == ("charge", {"amount": 5}, key)
        answer = {"status": "success", "content": [{"text": "the bank says: charged once"}]}
        await tc.answer_interrupts("doubt-ask", [{"interruptId": interrupts[0].id, "response": answer}])
        result = await tc.result("doubt-ask")
        snapshot = await tc.final_snapshot("doubt-ask")
    assert result.stop_reason == "end_turn" and result.text == "charged"
    assert log.read_text().splitlines() == ["model 0", f"charge-start 5 {key}", "model 1"]  # exactly one start
    tool_result = snapshot.data["messages"][-2]["content"][0]["toolResult"]
    assert tool_result["content"] == [{"text": "the bank says: charged once"}]
    assert snapshot.data["interrupt_state"] == {"interrupts": {}, "context": {}, "activated": False}  # nothing pending (Strands' shape)


async def test_timed_out_non_idempotent_tool_is_in_doubt_and_rerun_by_signal(
    client: Client, blobs: BlobStore, task_queue: str, tmp_path: Path
) -> None:
    # A timeout loses the attempt just like a crash: no automatic retry; "rerun" runs it again.
    log, marker = tmp_path / "side.log", tmp_path / "started"
    tc = TetherClient(client, blobs, task_queue, options={"tool_timeout_s": 1.0, "heartbeat_s": 10.0, "tool_attempts": 5})
    config = {"log": str(log), "sleep": 2.5, "started_marker": str(marker), "once": True}
    async with running_worker(client, task_queue, blobs):
        await tc.start("charge", "Charge 5.", run_id="doubt-rerun", config=config)
        interrupts = await tc.wait_for_interrupts("doubt-rerun")
        assert [i.name for i in interrupts] == [IN_DOUBT]
        starts = [line for line in log.read_text().splitlines() if line.startswith("charge-start")]
        assert len(starts) == 1  # not retried by Temporal although tool_attempts is 5
        await tc.signal_interrupts("doubt-rerun", [{"interruptId": interrupts[0].id, "response": "rerun"}])
        result = await tc.result("doubt-rerun")
        snapshot = await tc.final_snapshot("doubt-rerun")
    assert result.stop_reason == "end_turn"
    lines = log.read_text().splitlines()
    assert lines.count("charge-start 5 doubt-rerun/tooluse_1_0") == 2  # the lost start and the asked-for re-run
    assert snapshot.data["messages"][-2]["content"][0]["toolResult"]["content"] == [{"text": "charged 5"}]
