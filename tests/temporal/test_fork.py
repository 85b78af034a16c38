"""``TetherClient.fork``: a new agent run beside the original, from one of its steps (derived from
the original's event history), on a real Temporal dev server."""

from __future__ import annotations

from pathlib import Path

import pytest
from temporalio.client import Client

from tether.errors import ForkError, RunNotFoundError
from tether.temporal import BlobStore, TetherClient

from .fixtures import running_worker


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


async def test_every_step_forks_into_a_new_run_that_ends_as_the_original(
    client: Client, blobs: BlobStore, task_queue: str, tmp_path: Path
) -> None:
    log = tmp_path / "side.log"
    tc = TetherClient(client, blobs, task_queue)
    async with running_worker(client, task_queue, blobs):
        original = await tc.execute("two_tools", "Compute things.", run_id="calc", config={"log": str(log)})
        before = await client.get_workflow_handle("calc").fetch_history()
        steps = await tc.fork_steps("calc")
        # two_tools: a round of two tool calls, a round of one, a final answer
        assert [(s.step, s.position, s.cycle_index) for s in steps] == [
            (1, "turn_start", 0),
            (2, "after_model", 0),
            (3, "after_tools", 1),
            (4, "after_model", 1),
            (5, "after_tools", 2),
            (6, "after_model", 3),
        ]
        # each step's event is the WorkflowTaskStarted of the task that reached it (what a Reset takes)
        assert all(before.events[s.event_id - 1].HasField("workflow_task_started_event_attributes") for s in steps)
        messages = (await tc.final_snapshot("calc")).data["messages"]
        for step in steps:
            log.unlink()
            handle = await tc.fork("calc", step.step)
            assert handle.id == f"calc.fork-{step.step}"  # the smallest unused fork number
            forked = await tc.result(handle.id)
            assert (forked.stop_reason, forked.text, forked.state) == (original.stop_reason, original.text, original.state)
            assert (await tc.final_snapshot(handle.id)).data["messages"] == messages
            # the fork went on from the step: only the model calls after it were made again
            assert _lines(log) == [f"model {i}" for i in range({1: 0, 2: 1, 3: 1, 4: 2, 5: 2, 6: 3}[step.step], 3)]
        after = await client.get_workflow_handle("calc").fetch_history()
    assert after.events == before.events  # the original was only read
    assert (await tc.result("calc")).text == original.text


async def test_a_fork_of_a_waiting_run_waits_too_and_goes_its_own_way(
    client: Client, blobs: BlobStore, task_queue: str, tmp_path: Path
) -> None:
    log = tmp_path / "side.log"
    tc = TetherClient(client, blobs, task_queue)
    async with running_worker(client, task_queue, blobs):
        await tc.start("asker", "Book it.", run_id="ask", config={"log": str(log)})
        (question,) = await tc.wait_for_interrupts("ask")
        steps = await tc.fork_steps("ask")  # the run is still open: the steps its history holds so far
        assert [s.position for s in steps] == ["turn_start", "after_model"]
        await tc.fork("ask", 2, new_run_id="ask-other")
        (asked,) = await tc.wait_for_interrupts("ask-other")
        assert (asked.name, asked.reason) == (question.name, question.reason)
        await tc.answer_interrupts("ask", [{"interruptId": question.id, "response": "yes"}])
        await tc.answer_interrupts("ask-other", [{"interruptId": asked.id, "response": "no"}])
        first, other = await tc.result("ask"), await tc.result("ask-other")
        assert first.stop_reason == other.stop_reason == "end_turn"
        tools = [(await tc.final_snapshot(run)).data["messages"][2]["content"][0]["toolResult"] for run in ("ask", "ask-other")]
    assert [t["content"][0]["text"] for t in tools] == ["booked Lisbon: yes", "booked Lisbon: no"]
    assert sorted(line for line in _lines(log) if line.startswith("book")) == ["book Lisbon no", "book Lisbon yes"]


async def test_the_state_at_the_step_is_what_the_fork_starts_from(client: Client, blobs: BlobStore, task_queue: str) -> None:
    tc = TetherClient(client, blobs, task_queue)
    async with running_worker(client, task_queue, blobs):
        original = await tc.execute("counter", "Count.", run_id="count", config={})
        steps = await tc.fork_steps("count")
        assert steps[2].position == "after_tools" and steps[2].carried["state"] == {"keep": "me", "a": 1, "b": 1}
        forked = await tc.result((await tc.fork("count", 3, new_run_id="count-3")).id)
    assert forked.state == original.state == {"keep": "me", "a": 2, "b": 1}


async def test_bad_forks_are_refused_naming_the_run_and_the_step(client: Client, blobs: BlobStore, task_queue: str) -> None:
    tc = TetherClient(client, blobs, task_queue)
    async with running_worker(client, task_queue, blobs):
        await tc.execute("two_tools", "Compute things.", run_id="calc-bad", config={})
        for at in (0, 7, -1):
            with pytest.raises(ForkError, match=rf"fork at={at} is not a step of run 'calc-bad': it has steps 1 to 6"):
                await tc.fork("calc-bad", at)
        for at in ("2", True, 2.0):
            with pytest.raises(ForkError, match=r"is not a step number of run 'calc-bad'"):
                await tc.fork("calc-bad", at)  # type: ignore[arg-type]
        with pytest.raises(ForkError, match="workflow 'calc-bad' exists already"):
            await tc.fork("calc-bad", 2, new_run_id="calc-bad")
        with pytest.raises(RunNotFoundError, match="no workflow 'nowhere' on this Temporal namespace; nothing to fork"):
            await tc.fork("nowhere", 1)
        with pytest.raises(RunNotFoundError, match="no workflow 'nowhere'"):
            await tc.fork_steps("nowhere")
        await client.start_workflow("not.tether", {}, id="alien", task_queue=f"{task_queue}-none")
        with pytest.raises(ForkError, match=r"run 'alien' is a 'not\.tether' workflow; fork forks agent runs"):
            await tc.fork("alien", 1)
        await client.get_workflow_handle("alien").terminate()
    assert not [w async for w in client.list_workflows("WorkflowId STARTS_WITH 'calc-bad.fork'")]


async def test_a_fork_decides_every_patch_before_its_first_local_activity(client: Client, blobs: BlobStore, task_queue: str) -> None:
    # A fork at the final answer runs a local activity (check_resume) and then finishes, which asks
    # for a patch. A status query arriving meanwhile can close the workflow task after the local
    # activity: the patch marker then lands in the next task and the fork's history no longer
    # replays (its worker fails every later task with a nondeterminism error). So a fork decides
    # every patch first; its history, polled by queries while it ran, replays.
    from tether.testing.contract_temporal_crash import replay_twice

    tc = TetherClient(client, blobs, task_queue)
    async with running_worker(client, task_queue, blobs):
        await tc.execute("two_tools", "Compute things.", run_id="calc-patch", config={})
        last = (await tc.fork_steps("calc-patch"))[-1].step
        for n in range(3):
            handle = await tc.fork("calc-patch", last)
            status = ""
            while status != "done":
                try:
                    status = (await tc.status(handle.id))["status"]
                except Exception:  # its first task has not run yet
                    status = "starting"
            await tc.result(handle.id)
            history = await handle.fetch_history()
            names = [
                e.marker_recorded_event_attributes.marker_name for e in history.events if e.HasField("marker_recorded_event_attributes")
            ]
            first_local = names.index("core_local_activity")
            assert "core_patch" not in names[first_local:], (n, names)
            assert await replay_twice(history) is None


async def test_a_run_continued_as_new_forks_from_the_steps_of_its_execution(client: Client, blobs: BlobStore, task_queue: str) -> None:
    tc = TetherClient(client, blobs, task_queue, options={"cycles_per_execution": 3})
    async with running_worker(client, task_queue, blobs):
        original = await tc.execute("long", "Tick.", run_id="ticks", config={"cycles": 5})
        executions = [w async for w in client.list_workflows("WorkflowId = 'ticks'")]
        assert len(executions) == 2  # continued as new once, after 3 model calls
        first = next(w.run_id for w in executions if w.status is not None and w.status.name == "CONTINUED_AS_NEW")
        latest = await tc.fork_steps("ticks")
        assert [s.position for s in latest] == ["continued", "after_model", "after_tools", "after_model"]
        earlier = await tc.fork_steps("ticks", temporal_run_id=first)
        assert [s.position for s in earlier][:3] == ["turn_start", "after_model", "after_tools"]
        late = await tc.result((await tc.fork("ticks", 2, new_run_id="ticks-late")).id)
        early = await tc.result((await tc.fork("ticks", 2, new_run_id="ticks-early", temporal_run_id=first)).id)
    assert late.text == early.text == original.text == "finished"
    assert late.state == early.state == original.state
