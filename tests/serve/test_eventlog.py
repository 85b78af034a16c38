"""The shared, incremental event log of a served run: each read costs the new steps, not the
run's length; the streams of a run share one read per notice; a run id used again is not mixed up."""

from __future__ import annotations

import asyncio
from typing import Any

from tether import Agent, tool
from tether.conversation import NullConversationManager, SlidingWindowConversationManager
from tether.durable import MemoryStore, Step, StepTail
from tether.durable.commits import COMMIT_OBSERVER
from tether.durable.packing import KEYFRAME_EVERY
from tether.models import ScriptedModel
from tether.models.scripted import tool_call
from tether.serve.eventlog import HEAD_KEYS, EventLog, EventLogs
from tether.serve.events import ServeEvent

CYCLES = 120  # about 240 steps: far more than a keyframe window


class CountingStore(MemoryStore):
    """A memory store that counts the step and message rows its reads fetch."""

    def __init__(self) -> None:
        super().__init__()
        self.step_rows = 0
        self.message_rows = 0
        self.history_calls = 0
        self.followed: list[Step] = []  # the steps read through a StepTail

    def _step_rows(self, conn: Any, run_id: str, key: Any, first: int, stop: int | None) -> list[tuple[int, Any]]:
        rows = super()._step_rows(conn, run_id, key, first, stop)
        self.step_rows += len(rows)
        return rows

    def _message_rows(self, conn: Any, run_id: str, key: Any, start: int, stop: int) -> list[tuple[int, Any]]:
        rows = super()._message_rows(conn, run_id, key, start, stop)
        self.message_rows += len(rows)
        return rows

    def history(self, run_id: str, *, after: int | StepTail = 0) -> list[Step]:
        self.history_calls += 1
        steps = super().history(run_id, after=after)
        if isinstance(after, StepTail):
            self.followed.extend(steps)
        return steps


def follow_a_long_run(store: CountingStore, manager: Any, turns: int = 1) -> tuple[list[ServeEvent], list[tuple[int, int]]]:
    """Run CYCLES tool cycles over ``turns`` turns; inside each tool call the log reads what was
    committed since its last read (a stream following the run). Returns the events and the rows
    each read fetched."""
    log = EventLog(store, "long")
    events: list[ServeEvent] = []
    costs: list[tuple[int, int]] = []

    @tool
    def follow(n: int) -> str:
        """Read the log."""
        steps, messages = store.step_rows, store.message_rows
        events.extend(log.read())
        costs.append((store.step_rows - steps, store.message_rows - messages))
        return f"read {n}"

    per_turn = CYCLES // turns
    script: list[Any] = []
    for turn in range(turns):
        script += [tool_call("follow", {"n": turn * per_turn + i}) for i in range(per_turn)] + [f"done {turn}"]
    agent = Agent(model=ScriptedModel(script, stateful=True), tools=[follow], store=store, conversation_manager=manager)
    for turn in range(turns):
        agent(f"go {turn}", run_id="long")
    events.extend(log.read())
    return events, costs


def test_each_read_fetches_the_new_steps_and_messages_not_the_history() -> None:
    store = CountingStore()
    events, costs = follow_a_long_run(store, NullConversationManager())
    assert len(store.history("long")) > 4 * KEYFRAME_EVERY
    steps, messages = zip(*costs[1:], strict=True)
    # Each read: the few steps committed since the last one (their deltas apply to the head the
    # log's StepTail kept) and the messages they added. Re-reading the history would fetch hundreds.
    assert max(steps) <= 3, steps
    assert max(messages) <= 2, messages
    assert [s.to_dict() for s in store.followed] == [s.to_dict() for s in store.history("long")]  # heads included
    assert events == EventLog(store, "long").read()  # read at once or step by step: the same events, same ids
    assert [e["type"] for e in events].count("tool_call_end") == CYCLES and events[-1]["type"] == "result"


def test_a_trimmed_conversation_gives_the_same_events_read_step_by_step_or_at_once() -> None:
    store = CountingStore()
    events, _ = follow_a_long_run(store, SlidingWindowConversationManager(window_size=20), turns=20)
    assert int(store.head("long")["start_seq"]) > 0  # type: ignore[index]  # the window moved
    assert events == EventLog(store, "long").read()
    ids = [tuple(map(int, e["id"].split("."))) for e in events]
    assert ids == sorted(set(ids))


def test_the_streams_of_a_run_share_its_log_and_its_reads() -> None:
    store = CountingStore()
    Agent(model=ScriptedModel(["hello"], stateful=True), store=store)("hi", run_id="r")
    logs = EventLogs(store)

    async def many_streams() -> list[EventLog]:
        with logs.open("r") as first, logs.open("r") as second:
            assert first is second and len(logs) == 1
            await asyncio.gather(*(first.refresh(lambda: 0) for _ in range(10)))
            return [first, second]

    before = store.history_calls
    (log, _) = asyncio.run(many_streams())
    assert store.history_calls - before <= 2  # one read, and one more for the calls that asked while it ran
    assert [e["type"] for e in log.events][-1] == "result" and len(logs) == 0  # dropped after the last stream


def test_a_run_id_deleted_and_used_again_is_not_mixed_with_the_old_run() -> None:
    store = MemoryStore()
    Agent(model=ScriptedModel(["first answer"], stateful=True), store=store)("hi", run_id="r")
    log = EventLog(store, "r")
    old = log.read()
    assert old[-1]["data"]["answer"] == "first answer"
    store.delete_run("r")
    agent = Agent(model=ScriptedModel(["x", "second answer"], stateful=True), store=store)
    agent("hi again", run_id="r")
    agent("and again", run_id="r")  # a new incarnation, with more steps than the old one
    assert log.read() == [] and log.replaced
    logs = EventLogs(store)
    with logs.open("r") as fresh:
        assert fresh.read()[-1]["data"]["answer"] == "second answer" and not fresh.replaced


class Handoff:
    """The commit observer a server installs (tether.durable.commits): each committed write to the logs."""

    head_keys = HEAD_KEYS

    def __init__(self, logs: EventLogs, skip: int | None = None) -> None:
        self.logs = logs
        self.skip = skip  # a step never offered (as one committed before the log's first read)

    def committed(self, run_id: str, step: Step | None, messages: dict[int, Any]) -> None:
        if step is None or step.step != self.skip:
            self.logs.offer(run_id, step, messages)


def follow_in_memory(skip: int | None = None) -> tuple[list[ServeEvent], list[ServeEvent], int, int]:
    """A run of 6 tool cycles over two turns (a trimmed conversation) followed by a log fed in
    memory, refreshed inside every tool call, then once from the store; returns its events, a
    replay's from the store, and the fed log's store reads and the store's history calls while
    the run executed."""
    store = CountingStore()
    logs = EventLogs(store)
    execution = object()

    async def main() -> tuple[list[ServeEvent], int, int]:
        with logs.open("m") as log:

            @tool
            async def follow(n: int) -> str:
                """Refresh the log."""
                await log.refresh(lambda: 0, execution)
                return f"read {n}"

            COMMIT_OBSERVER.set(Handoff(logs, skip))
            await log.refresh(lambda: 0, execution)  # before the run exists
            script: list[Any] = [tool_call("follow", {"n": i}) for i in range(3)] + ["done 0"]
            script += [tool_call("follow", {"n": i}) for i in range(3, 6)] + ["done 1"]
            agent = Agent(
                model=ScriptedModel(script, stateful=True),
                tools=[follow],
                store=store,
                conversation_manager=SlidingWindowConversationManager(window_size=4),
            )
            before = store.history_calls
            await agent.invoke_async("go 0", run_id="m")
            await agent.invoke_async("go 1", run_id="m")
            await log.refresh(lambda: 0, execution)
            reads, calls = log.store_reads, store.history_calls - before
            await log.refresh(lambda: 0)  # the execution ended: the store read finds the steps taken from memory
            return list(log.events), reads, calls

    events, reads, calls = asyncio.run(main())
    return events, EventLog(store, "m").read(), reads, calls


def test_a_run_executing_here_hands_its_committed_steps_to_the_log_in_memory() -> None:
    events, replayed, reads, calls = follow_in_memory()
    assert events == replayed and [e["type"] for e in events].count("tool_call_end") == 6
    assert reads == 1 and calls == 0  # the one read before the run existed; every step since from memory


def test_a_step_missing_from_memory_is_read_from_the_store_with_what_follows() -> None:
    events, replayed, reads, calls = follow_in_memory(skip=3)
    assert events == replayed and reads == 2 and calls == 1
