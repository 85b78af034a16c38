"""A worker process for the Temporal tests: ``python -m tests.temporal.worker_main ADDRESS QUEUE BLOBS [REGISTRY]``.

``REGISTRY`` names the test module whose ``registry`` the worker serves: ``agents`` (default),
``graphs`` or ``swarms``.
"""

from __future__ import annotations

import asyncio
import importlib
import sys
from datetime import timedelta

from temporalio.client import Client

from tether.temporal import AgentRegistry, BlobStore, create_worker

REGISTRIES = ("agents", "graphs", "swarms")


async def main(address: str, task_queue: str, blobs: str, registry: AgentRegistry) -> None:
    client = await Client.connect(address)
    worker = create_worker(
        client,
        task_queue,
        registry,
        BlobStore(blobs),
        sticky_queue_schedule_to_start_timeout=timedelta(seconds=1),
    )
    print("ready", flush=True)
    await worker.run()


if __name__ == "__main__":
    name = sys.argv[4] if len(sys.argv) > 4 else "agents"
    if name not in REGISTRIES:
        raise SystemExit(f"unknown registry {name!r}: one of {', '.join(REGISTRIES)}")
    module = importlib.import_module(f"tests.temporal.{name}")
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], module.registry))
