"""The flows the graph and swarm tests on Temporal share (``test_graph.py``, ``test_swarm.py``).

A graph and a swarm run on Temporal alike: a parent workflow whose agent steps are child
workflows, the same client calls (``start_graph`` / ``start_swarm`` …), the same moves of a
snapshot between a local run and Temporal. Each flow here runs one such scenario on either;
the tests assert what is particular to a graph or a swarm on what it returns.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client
from temporalio.worker import Worker

from tether.durable import MemoryStore
from tether.errors import PromptError, ScriptExhaustedError, SnapshotError
from tether.temporal import AgentRegistry, BlobStore, TetherClient, TetherPlugin

from .fixtures import killed_in_the_slow_tool, running_worker, spawn_worker
from .server import DevServer


@dataclass
class Orchestration:
    """Graph (``kind="graph"``) or swarm (``kind="swarm"``) runs of ``registry`` on one task queue."""

    kind: str
    registry: AgentRegistry
    client: Client
    blobs: BlobStore
    task_queue: str
    tc: TetherClient = field(init=False)

    def __post_init__(self) -> None:
        self.tc = TetherClient(self.client, self.blobs, self.task_queue)

    def worker(self, **options: Any) -> AbstractAsyncContextManager[Worker]:
        """An in-process worker serving the registry, for the duration of the block."""
        return running_worker(self.client, self.task_queue, self.blobs, self.registry, **options)

    def plugin_worker(self) -> Worker:
        """A plain Temporal worker set up by the Tether plugin alone (no ``create_worker``)."""
        return Worker(self.client, task_queue=self.task_queue, plugins=[TetherPlugin(self.registry, self.blobs)])

    def build(self, name: str, config: dict[str, Any]) -> Any:
        """The local graph or swarm ``name`` of the registry."""
        return getattr(self.registry, f"build_{self.kind}")(name, config)

    async def start(self, name: str, *task: Any, **options: Any) -> None:
        await getattr(self.tc, f"start_{self.kind}")(name, *task, **options)

    async def result(self, run_id: str, tc: TetherClient | None = None) -> Any:
        return await getattr(tc or self.tc, f"{self.kind}_result")(run_id)

    async def execute(self, name: str, *task: Any, **options: Any) -> Any:
        return await getattr(self.tc, f"execute_{self.kind}")(name, *task, **options)

    async def snapshot(self, run_id: str) -> dict[str, Any]:
        snapshot: dict[str, Any] = await getattr(self.tc, f"{self.kind}_snapshot")(run_id)
        return snapshot

    async def local_child_run_ids(self, name: str, task: str, run_id: str) -> list[str]:
        """The run ids of the child runs a durable local run of ``name`` (as ``run_id``) records."""
        store = MemoryStore()
        local = self.build(name, {})
        local.store = store
        await local.invoke_async(task, run_id=run_id)
        return sorted(r.run_id for r in store.list_runs() if r.parent_run_id == run_id)

    async def moved_to_temporal_and_back(
        self, name: str, task: str, run_id: str, config: dict[str, Any], stop: Callable[[Any], bool]
    ) -> tuple[list[str], Any, dict[str, Any], Any]:
        """A local run of ``name`` streamed until ``stop(event)``; its snapshot is finished on
        Temporal (which refuses a task beside it and another kind's snapshot), and the finished
        run's snapshot started again (``<run_id>-again``). Returns the side-effect log at the
        move, the result, the finished run's snapshot and the result of starting it again."""
        local = self.build(name, config)
        events = local.stream_async(task)
        async for event in events:
            if stop(event):
                snapshot = json.loads(json.dumps(local.take_snapshot()))
                break
        await events.aclose()
        at_move = Path(config["log"]).read_text().splitlines()
        other = "tether.swarm" if self.kind == "graph" else "tether.graph"
        async with self.worker():
            with pytest.raises(PromptError, match="not both"):
                await self.start(name, task, run_id=run_id, snapshot=snapshot, config=config)
            with pytest.raises(SnapshotError, match=f"not a {self.kind} snapshot"):
                await self.start(name, run_id=run_id, snapshot={"type": other}, config=config)
            result = await self.execute(name, run_id=run_id, snapshot=snapshot, config=config)
            back = await self.snapshot(run_id)
            again = await self.execute(name, run_id=f"{run_id}-again", snapshot=back, config=config)  # finished: it stands
        return at_move, result, back, again

    async def answered_locally(self, run_id: str, config: dict[str, Any], response: str) -> Any:
        """``approval`` waits on its interrupt on Temporal, moves (its snapshot) to a local run,
        which the answer finishes; returns the local result."""
        async with self.worker():
            await self.start("approval", "publish something", run_id=run_id, config=config)
            [interrupt] = await self.tc.wait_for_interrupts(run_id)
            snapshot = json.loads(json.dumps(await self.snapshot(run_id)))
            await self.client.get_workflow_handle(run_id).terminate("moved to a laptop")
        local = self.build("approval", config)
        local.load_snapshot(snapshot)
        return await local.invoke_async([{"interruptResponse": {"interruptId": interrupt.id, "response": response}}])

    async def answered_on_temporal(self, run_id: str, config: dict[str, Any], response: str) -> Any:
        """A local ``approval`` run waits on its interrupt, moves to Temporal (with the same
        interrupt id), where the answer finishes it; returns the Temporal result."""
        local = self.build("approval", config)
        paused = await local.invoke_async("publish something")
        [interrupt] = paused.interrupts
        async with self.worker():
            await self.start("approval", run_id=run_id, snapshot=json.loads(json.dumps(local.take_snapshot())), config=config)
            assert [i.id for i in await self.tc.wait_for_interrupts(run_id)] == [interrupt.id]
            await self.tc.answer_interrupts(run_id, [{"interruptId": interrupt.id, "response": response}])
            return await self.result(run_id)

    async def signalled(self, run_id: str) -> Any:
        """``approval`` answered by signals: an unknown interrupt id (logged and ignored), then
        the right one with ``later``; returns the result."""
        async with self.worker():
            await self.start("approval", "publish something", run_id=run_id, config={})
            [interrupt] = await self.tc.wait_for_interrupts(run_id)
            await self.tc.signal_interrupts(run_id, [{"interruptId": "nope", "response": "yes"}])
            await self.tc.signal_interrupts(run_id, [{"interruptId": interrupt.id, "response": "later"}])
            return await self.result(run_id)

    async def failed(self, run_id: str, config: dict[str, Any] | None = None) -> dict[str, Any]:
        """``broken`` (its second agent has no answer scripted) fails on Temporal with the local
        error class; returns the failed run's snapshot."""
        with pytest.raises(ScriptExhaustedError):
            await self.build("broken", {}).invoke_async("task")
        async with self.worker():
            await self.start("broken", "task", run_id=run_id, **({"config": config} if config is not None else {}))
            with pytest.raises(ScriptExhaustedError):
                await self.result(run_id)
            return await self.snapshot(run_id)

    async def killed_in_the_slow_tool(
        self, run_id: str, dev_server: DevServer, tmp_path: Path, registry_module: str
    ) -> tuple[Any, list[str]]:
        """``relay`` on a worker process killed with -9 inside the builder's slow tool, finished by
        an in-process worker; returns the result and the side-effect log."""
        process = spawn_worker(dev_server.address, self.task_queue, self.blobs, registry_module)

        async def start(tc: TetherClient, config: dict[str, Any]) -> None:
            await getattr(tc, f"start_{self.kind}")("relay", "build a shed", run_id=run_id, config=config)

        async def finish(tc: TetherClient) -> Any:
            return await self.result(run_id, tc)

        return await killed_in_the_slow_tool(self.client, self.blobs, self.task_queue, process, tmp_path, start, finish, self.registry)
