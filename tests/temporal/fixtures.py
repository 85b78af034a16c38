"""Fixtures and helpers of the Temporal tests (registered by conftest.py when temporalio is installed)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.worker import Worker

from tether.temporal import BlobStore, create_worker

from .agents import registry
from .server import DevServer, require_binary


@pytest.fixture(scope="session")
def dev_server() -> Iterator[DevServer]:
    server = DevServer(require_binary())
    server.start()
    yield server
    server.stop()


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
async def running_worker(client: Client, task_queue: str, blobs: BlobStore, **options: Any) -> AsyncIterator[Worker]:
    """An in-process worker for the duration of the block."""
    options.setdefault("sticky_queue_schedule_to_start_timeout", timedelta(seconds=1))
    worker = create_worker(client, task_queue, registry, blobs, **options)
    async with worker:
        yield worker


async def history_stats(client: Client, workflow_id: str, first_run_id: str) -> dict[str, int]:
    """Walk the histories of a workflow's runs (following continue-as-new) and measure them.

    ``max_event_bytes`` is the largest serialized history event, an upper bound of the largest
    payload; ``runs`` counts the executions of the chain.
    """
    run_id: str | None = first_run_id
    largest = 0
    runs = 0
    events = 0
    while run_id:
        runs += 1
        history = await client.get_workflow_handle(workflow_id, run_id=run_id).fetch_history()
        run_id = None
        for event in history.events:
            events += 1
            largest = max(largest, event.ByteSize())
            if event.HasField("workflow_execution_continued_as_new_event_attributes"):
                run_id = event.workflow_execution_continued_as_new_event_attributes.new_execution_run_id
    return {"max_event_bytes": largest, "runs": runs, "events": events}
