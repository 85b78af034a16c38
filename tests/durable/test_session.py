"""`durable/session.py`: store writes run off the event loop, in order, on copies of the rows."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from tether import Agent, ScriptedModel, tool
from tether.durable import MemoryStore, SQLiteStore
from tether.errors import RowTooLargeError
from tether.models import tool_call, tool_calls


class GatedStore(MemoryStore):
    """A store whose commits can block (like a PostgreSQL round trip): they wait until ``gate``
    opens, and it records the committing threads."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()
        self.threads: list[int] = []

    def commit(self, run_id: str, prepared: Any, *, lease: Any = None, wait: bool = True) -> bool:
        if not wait:
            return False  # could block: the session must commit on its writer thread
        self.threads.append(threading.get_ident())
        if not self.gate.wait(timeout=60):  # a hang guard, not a timing assertion
            raise AssertionError("the gate never opened: a blocked commit stalled the event loop")
        return super().commit(run_id, prepared, lease=lease, wait=True)


async def test_a_blocked_store_write_does_not_stall_other_agents_on_the_loop() -> None:
    store = GatedStore()
    slow = Agent(model=ScriptedModel(["stored"]), store=store)
    other = Agent(model=ScriptedModel(["free"]))
    loop_thread = threading.get_ident()

    async def opener() -> str:
        result = await other.invoke_async("meanwhile")  # runs while the durable agent's write is blocked
        store.gate.set()
        return str(result)

    stored, free = await asyncio.gather(slow.invoke_async("hello", run_id="gated"), opener())
    assert (str(stored), free) == ("stored", "free")
    assert store.threads and loop_thread not in store.threads


async def test_concurrent_tool_results_are_written_in_order() -> None:
    @tool
    def echo(n: int) -> int:
        """Echo n."""
        return n

    store = MemoryStore()
    agent = Agent(model=ScriptedModel([tool_calls([("echo", {"n": i}) for i in range(6)]), "done"]), tools=[echo], store=store)
    result = await agent.invoke_async("go", run_id="many")
    assert str(result) == "done"
    loaded = store.load("many")
    assert loaded is not None and loaded.messages == agent.messages  # every revision applied in order (a CAS would refuse otherwise)
    # One write per boundary: 5 steps and a result per tool but the last, whose result closes the
    # cycle and is stored by the after_tools step write (the idempotent calls' starts ride on the
    # after_model step write).
    assert len(store.history("many")) == 5 and loaded.head["rev"] == 5 + 5


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_a_row_over_the_size_limit_names_the_tool_and_is_not_written(kind: str, tmp_path: Path) -> None:
    @tool
    def dump() -> str:
        """Returns far too much."""
        return "x" * 50_000

    store = MemoryStore(max_row_bytes=10_000) if kind == "memory" else SQLiteStore(tmp_path / "r.db", max_row_bytes=10_000)
    agent = Agent(model=ScriptedModel([tool_call("dump"), "done"]), tools=[dump], store=store)
    expected = r"run 'big': the output of tool 'dump' \(call tooluse_1_0\) is \d+ bytes .*max_row_bytes=10000"
    with pytest.raises(RowTooLargeError, match=expected):
        agent("go", run_id="big")
    loaded = store.load("big")
    assert loaded is not None and loaded.head["cursor"]["phase"] == "tools" and loaded.results == {}  # nothing of it stored


class DecliningStore(MemoryStore):
    """A store that never commits inline (like PostgreSQL): every write goes to the writer thread."""

    def commit(self, run_id: str, prepared: Any, *, lease: Any = None, wait: bool = True) -> bool:
        return False if not wait else super().commit(run_id, prepared, lease=lease, wait=True)


def test_writes_of_concurrent_tools_keep_their_order_when_the_lock_changes_hands() -> None:
    # A write arriving just as the lock was released (before the waiter it woke took it) used
    # to be encoded at once with the next revision, then queue behind that waiter: committed
    # out of order, it failed as if another writer had taken the run (LeaseLostError).
    @tool
    def work(n: int) -> str:
        """Work.

        Args:
            n: Which.
        """
        return f"did {n}"

    store = DecliningStore()
    for i in range(40):
        script = [tool_calls([("work", {"n": k}) for k in range(4)]) for _ in range(3)] + ["done"]
        agent = Agent(model=ScriptedModel(script), tools=[work], store=store)
        assert str(agent("go", run_id=f"r{i}")) == "done"
        loaded = store.load(f"r{i}")
        assert loaded is not None and loaded.messages == agent.messages


async def test_a_blocking_sync_waits_for_the_write_a_cancelled_sync_async_left_in_flight() -> None:
    from concurrent.futures import ThreadPoolExecutor

    from tether.durable.session import DurableSession
    from tether.loop.state import RunState

    class FirstGated(GatedStore):
        def commit(self, run_id: str, prepared: Any, *, lease: Any = None, wait: bool = True) -> bool:
            if wait and self.threads:  # only the first write waits at the gate
                return MemoryStore.commit(self, run_id, prepared, lease=lease, wait=True)
            return super().commit(run_id, prepared, lease=lease, wait=wait)

    store = FirstGated()
    writer = ThreadPoolExecutor(1)
    session = DurableSession(store, "r", RunState(), writer=writer)
    first = asyncio.create_task(session.sync_async("turn_start"))
    while not store.threads:  # the first write is in flight on the writer thread
        await asyncio.sleep(0.001)
    first.cancel()
    with pytest.raises(asyncio.CancelledError):
        await first
    second = asyncio.get_running_loop().run_in_executor(None, session.sync, "turn_end")  # e.g. recording the stop
    await asyncio.sleep(0.05)  # a chance for a wrong implementation to commit it first (not a timing assertion)
    store.gate.set()
    await second
    head = store.head("r")
    assert head is not None and head["rev"] == 2 and [step.position for step in store.history("r")] == ["turn_start", "turn_end"]
    writer.shutdown()
