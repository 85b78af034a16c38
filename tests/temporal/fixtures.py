"""Fixtures and helpers of the Temporal tests (registered by conftest.py when temporalio is installed)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client, WorkflowHistory
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.worker import Worker

from tether.temporal import AgentRegistry, BlobStore, TetherClient, create_worker

from .agents import registry
from .server import DevServer, require_binary


@pytest.fixture(scope="session")
def dev_server() -> Iterator[DevServer]:
    server = DevServer(require_binary())
    server.start()
    yield server
    server.stop()


ROOT = Path(__file__).resolve().parents[2]


def spawn_worker(address: str, task_queue: str, blobs: BlobStore, registry: str = "agents") -> subprocess.Popen[str]:
    """A worker in a subprocess of its own (``tests.temporal.worker_main``) serving the test
    registry ``registry`` (``agents``, ``graphs`` or ``swarms``), once it is ready."""
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.temporal.worker_main", address, task_queue, str(blobs.root), registry],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline().strip() == "ready"
    except BaseException:
        kill_9(process)
        raise
    return process


@pytest.fixture
def worker_process(dev_server: DevServer, blobs: BlobStore, task_queue: str) -> Iterator[subprocess.Popen[str]]:
    """An agents worker in a subprocess of its own, for kill -9 tests."""
    process = spawn_worker(dev_server.address, task_queue, blobs)
    try:
        yield process
    finally:
        if process.poll() is None:
            os.kill(process.pid, signal.SIGKILL)
        process.wait()


def kill_9(process: subprocess.Popen[str]) -> None:
    """Kill a worker process the hard way (no cleanup, no activity completions) and reap it."""
    os.kill(process.pid, signal.SIGKILL)
    process.wait()


async def wait_for_file(path: Path, timeout: float = 30.0) -> None:
    """Wait until ``path`` exists (a tool or model wrote its started-marker)."""
    async with asyncio.timeout(timeout):
        while not path.exists():
            await asyncio.sleep(0.02)


@pytest.fixture
def blobs(tmp_path: Path) -> BlobStore:
    return BlobStore(tmp_path / "blobs")


@pytest.fixture
def task_queue() -> str:
    return f"tq-{uuid.uuid4().hex[:12]}"


@pytest.fixture
async def client(dev_server: DevServer) -> Client:
    # The pydantic converter here, the default JSON one in the subprocess workers: runs carry
    # plain JSON dicts, so either works on either side.
    return await Client.connect(dev_server.address, data_converter=pydantic_data_converter)


@asynccontextmanager
async def running_worker(
    client: Client, task_queue: str, blobs: BlobStore, factories: AgentRegistry = registry, **options: Any
) -> AsyncIterator[Worker]:
    """An in-process worker serving ``factories`` (default: the agents of ``agents.py``) for the
    duration of the block."""
    options.setdefault("sticky_queue_schedule_to_start_timeout", timedelta(seconds=1))
    worker = create_worker(client, task_queue, factories, blobs, **options)
    async with worker:
        yield worker


async def killed_in_the_slow_tool(
    client: Client,
    blobs: BlobStore,
    task_queue: str,
    process: subprocess.Popen[str],
    tmp_path: Path,
    start: Callable[[TetherClient, dict[str, Any]], Awaitable[Any]],
    finish: Callable[[TetherClient], Awaitable[Any]],
    factories: AgentRegistry = registry,
) -> tuple[Any, list[str]]:
    """Start a run with ``start(tc, config)`` on the worker ``process``, kill -9 that worker once
    the slow tool (``fast_and_slow_tools``) has started, and ``finish(tc)`` it on an in-process
    worker serving ``factories``; returns what ``finish`` returned and the side-effect log."""
    log = tmp_path / "side.log"
    marker = tmp_path / "slow-started"
    tc = TetherClient(client, blobs, task_queue, options={"heartbeat_s": 1.0})
    config = {"log": str(log), "sleep": 2.0, "started_marker": str(marker)}
    try:
        await start(tc, config)
        await wait_for_file(marker)
    finally:
        kill_9(process)
    marker.unlink()
    async with running_worker(client, task_queue, blobs, factories):
        result = await finish(tc)
    return result, log.read_text().splitlines()


def child_executions(history: WorkflowHistory) -> list[Any]:
    """The child workflow executions a history started, in order (``workflow_id``, ``run_id``)."""
    return [
        event.child_workflow_execution_started_event_attributes.workflow_execution
        for event in history.events
        if event.HasField("child_workflow_execution_started_event_attributes")
    ]


def scheduled_activities(history: WorkflowHistory) -> list[str]:
    """The activity types a history scheduled, in order."""
    return [
        event.activity_task_scheduled_event_attributes.activity_type.name
        for event in history.events
        if event.HasField("activity_task_scheduled_event_attributes")
    ]


async def execution_histories(client: Client, workflow_id: str, first_run_id: str | None = None) -> list[WorkflowHistory]:
    """The histories of every execution of a workflow, first to last, following continue-as-new
    from ``first_run_id`` (default: the workflow's first run)."""
    run_id = first_run_id
    if run_id is None:
        info = (await client.get_workflow_handle(workflow_id).describe()).raw_description.workflow_execution_info
        run_id = info.first_run_id or info.execution.run_id
    histories: list[WorkflowHistory] = []
    while run_id:
        history = await client.get_workflow_handle(workflow_id, run_id=run_id).fetch_history()
        histories.append(history)
        run_id = None
        for event in history.events:
            if event.HasField("workflow_execution_continued_as_new_event_attributes"):
                run_id = event.workflow_execution_continued_as_new_event_attributes.new_execution_run_id
    return histories


async def history_stats(client: Client, workflow_id: str, first_run_id: str) -> dict[str, int]:
    """Walk the histories of a workflow's runs (following continue-as-new) and measure them.

    ``max_event_bytes`` is the largest serialized history event, an upper bound of the largest
    payload; ``runs`` counts the executions of the chain.
    """
    histories = await execution_histories(client, workflow_id, first_run_id)
    events = [event for history in histories for event in history.events]
    return {"max_event_bytes": max((event.ByteSize() for event in events), default=0), "runs": len(histories), "events": len(events)}


async def history_events(client: Client, workflow_id: str) -> list[Any]:
    """Every history event of a workflow, following continue-as-new from its first run."""
    return [event for history in await execution_histories(client, workflow_id) for event in history.events]


def activity_starts(events: list[Any], activity_type: str) -> list[Any]:
    """The ``ActivityTaskStarted`` attributes of the activities of one type (their final attempts)."""
    scheduled = {
        event.event_id
        for event in events
        if event.HasField("activity_task_scheduled_event_attributes")
        and event.activity_task_scheduled_event_attributes.activity_type.name == activity_type
    }
    return [
        event.activity_task_started_event_attributes
        for event in events
        if event.HasField("activity_task_started_event_attributes")
        and event.activity_task_started_event_attributes.scheduled_event_id in scheduled
    ]
