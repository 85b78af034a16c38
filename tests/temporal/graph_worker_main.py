"""A worker process serving the graph test registry: ``python -m tests.temporal.graph_worker_main ADDRESS QUEUE BLOBS``."""

from __future__ import annotations

import asyncio
import sys
from datetime import timedelta

from temporalio.client import Client

from tether.temporal import BlobStore, create_worker

from .graphs import registry


async def main(address: str, task_queue: str, blobs: str) -> None:
    client = await Client.connect(address)
    worker = create_worker(client, task_queue, registry, BlobStore(blobs), sticky_queue_schedule_to_start_timeout=timedelta(seconds=1))
    print("ready", flush=True)
    await worker.run()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3]))
