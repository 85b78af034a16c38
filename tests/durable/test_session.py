"""`durable/session.py`: store writes run off the event loop, in order, on copies of the rows."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from tether import Agent, ScriptedModel, tool
from tether.durable import MemoryStore, SQLiteStore
from tether.errors import RowTooLargeError, StoreError
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


class ResultsWatch(MemoryStore):
    """A store whose commits cannot be made inline (like PostgreSQL's): it records, for each
    write that stores a cycle's tool results, whether the next model call had been made when
    the commit finished. With ``gated``, such a commit waits for that model call (a hang guard
    bounds the wait: the test fails, it does not hang, when the call never comes first)."""

    def __init__(self, *, gated: bool, fail: bool = False) -> None:
        super().__init__()
        self.gated = gated
        self.fail = fail
        self.model_called = threading.Event()
        self.results_commits: list[bool] = []

    def commit(self, run_id: str, prepared: Any, *, lease: Any = None, wait: bool = True) -> bool:
        if not wait:
            return False
        if any('"toolResult"' in text for _, text in prepared.rows.messages):
            if self.gated:
                self.model_called.wait(timeout=30)
            self.results_commits.append(self.model_called.is_set())
            if self.fail:
                raise StoreError(f"run {run_id!r}: the results write failed")
        return super().commit(run_id, prepared, lease=lease, wait=True)


@tool
def echo(n: int) -> int:
    """Echo n.

    Args:
        n: The number.
    """
    return n


def _watched_agent(store: ResultsWatch) -> Agent:
    def answer(messages: list[Any]) -> str:
        store.model_called.set()
        return "done"

    return Agent(model=ScriptedModel([tool_call("echo", {"n": 1}), answer]), tools=[echo], store=store)


async def test_a_cycles_results_commit_while_the_next_model_call_is_made() -> None:
    # invoke: nobody watches the run as it goes, so the results write need not be waited for
    # before the model is called (it is before the next write and before the turn ends).
    store = ResultsWatch(gated=True)
    agent = _watched_agent(store)
    result = await agent.invoke_async("go", run_id="behind")
    assert str(result) == "done"
    assert store.results_commits == [True]  # the model call came while the results committed
    loaded = store.load("behind")
    assert loaded is not None and loaded.messages == agent.messages and loaded.head["status"] == "finished"


async def test_a_streamed_run_stores_the_results_before_the_model_is_called_and_the_caller_hears_of_them() -> None:
    store = ResultsWatch(gated=False)
    agent = _watched_agent(store)
    heard: list[tuple[str, bool]] = []
    async for event in agent.stream_async("go", run_id="streamed"):
        heard.append((event["type"], bool(store.results_commits)))
    assert store.results_commits == [False]  # committed before the model was called
    assert ("tool_result", True) in heard  # and the caller heard of the results only once they were stored


async def test_a_results_write_that_fails_behind_fails_the_turn_with_its_own_error() -> None:
    store = ResultsWatch(gated=True, fail=True)
    agent = _watched_agent(store)
    with pytest.raises(StoreError, match=r"run 'failing': the results write failed"):
        await agent.invoke_async("go", run_id="failing")
    loaded = store.load("failing")
    assert loaded is not None and loaded.head["cursor"]["phase"] == "tools"  # nothing after the failed write was stored


async def test_a_blocking_sync_refuses_while_a_write_commits_behind() -> None:
    from concurrent.futures import ThreadPoolExecutor

    from tether.durable.session import DurableSession
    from tether.loop.state import RunState

    store = GatedStore()
    session = DurableSession(store, "r", RunState(), writer=ThreadPoolExecutor(1))
    store.gate.set()
    await session.sync_async("turn_start")
    store.gate.clear()
    session.run.messages.append({"role": "user", "content": [{"text": "more"}]})
    task = asyncio.ensure_future(session.sync_async(behind=True))
    await task  # returns at once: the commit waits at the gate, on a thread of its own
    assert session.writing_behind
    with pytest.raises(StoreError, match=r"run 'r': a write is still committing"):
        session.sync("turn_end")
    store.gate.set()
    await session.settle()
    assert not session.writing_behind and store.head("r")["rev"] == 2


class SendingStore(MemoryStore):
    """A store that sends its writes from the event loop (like PostgreSQL's ``send_commit``):
    ``send_commit`` records the send and returns a handle whose ``done`` records the outcome
    after a round trip (``refuse``: revisions whose outcome is False, nothing written: the
    session then commits them with ``commit``). The log shows what was out when."""

    def __init__(self, refuse: frozenset[int] = frozenset()) -> None:
        super().__init__()
        self.refuse = refuse
        self.log: list[tuple[str, int]] = []

    inline_commits = False

    def commit(self, run_id: str, prepared: Any, *, lease: Any = None, wait: bool = True) -> bool:
        if not wait:
            return False
        self.log.append(("thread", prepared.rev))
        return super().commit(run_id, prepared, lease=lease, wait=True)

    def send_commit(self, run_id: str, prepared: Any, *, lease: Any = None) -> Any:
        if prepared.rev is None or prepared.rev <= 1:
            return None  # a run's first write: on the thread
        self.log.append(("send", prepared.rev))
        store = self

        class Sent:
            async def done(self) -> bool:
                await asyncio.sleep(0.005)  # the round trip
                store.log.append(("done", prepared.rev))
                if prepared.rev in store.refuse:
                    return False
                return MemoryStore.commit(store, run_id, prepared, lease=lease)

        return Sent()


def _looping_agent(store: MemoryStore) -> Agent:
    return Agent(model=ScriptedModel([*(tool_call("echo", {"n": i}) for i in range(3)), "done"]), tools=[echo], store=store)


async def test_a_cycles_next_write_is_sent_while_its_results_write_is_out() -> None:
    """invoke: the results write of a cycle goes out behind, and the write recording the next
    model response is sent at once, while it is still out (the store commits it after it), then
    awaited in order; the run is stored whole."""
    store = SendingStore()
    agent = _looping_agent(store)
    result = await agent.invoke_async("go", run_id="piped")
    assert str(result) == "done"
    log = store.log
    sends = [rev for kind, rev in log if kind == "send"]
    assert any(log.index(("send", rev + 1)) < log.index(("done", rev)) for rev in sends if ("send", rev + 1) in log)
    assert [rev for kind, rev in log if kind == "done"] == sorted(sends)  # outcomes awaited in order
    loaded = store.load("piped")
    assert loaded is not None and loaded.messages == agent.messages and loaded.head["status"] == "finished"


async def test_a_write_sent_behind_a_refused_one_is_committed_after_it_on_the_thread() -> None:
    """The results write out first is refused (its outcome False): the session commits it on the
    thread, then the write sent behind it (refused as well, as the store's compare-and-swap
    makes it), in order; the run is stored whole."""
    probe = SendingStore()
    await _looping_agent(probe).invoke_async("go", run_id="probe")
    log = probe.log
    sent = [rev for kind, rev in log if kind == "send" and ("send", rev + 1) in log]
    piped = next(rev for rev in sent if log.index(("send", rev + 1)) < log.index(("done", rev)))
    store = SendingStore(refuse=frozenset({piped, piped + 1}))
    agent = _looping_agent(store)
    await agent.invoke_async("go", run_id="refused")
    log = store.log
    assert log.index(("thread", piped)) < log.index(("done", piped + 1)) < log.index(("thread", piped + 1))
    loaded = store.load("refused")
    assert loaded is not None and loaded.messages == agent.messages and loaded.head["status"] == "finished"
