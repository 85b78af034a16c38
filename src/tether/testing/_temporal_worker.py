"""A worker process of a Temporal resume-contract check: ``python -m tether.testing._temporal_worker CONFIG_JSON``.

The config names the Temporal server (``address``), the task queue, the blob store's directory
and the import path (``sys_path``). The worker serves one agent, ``agent``, built exactly as a
served check's (:mod:`tether.testing._served_registry`): by the factory in
``$TETHER_CONTRACT_FACTORY``, its tool starts counted in ``$TETHER_CONTRACT_LOG``, and with
``$TETHER_CONTRACT_HOLD=N:before`` / ``N:after`` it stops for good inside the N-th tool call it
starts (before the body, or once the body returned): the parent SIGKILLs it there
(:mod:`tether.testing.contract_temporal_crash`). Prints ``ready`` once it polls. Not a public API.
"""

from __future__ import annotations

import asyncio
import json
import sys
from datetime import timedelta
from typing import Any

AGENT = "agent"


async def main(config: dict[str, Any]) -> None:
    from temporalio.client import Client

    from ..temporal import AgentRegistry, BlobStore, create_worker
    from ._served_registry import AGENTS

    registry = AgentRegistry()
    registry.register(AGENT, lambda _config: AGENTS[AGENT]())
    client = await Client.connect(config["address"])
    worker = create_worker(
        client, config["queue"], registry, BlobStore(config["blobs"]), sticky_queue_schedule_to_start_timeout=timedelta(seconds=1)
    )
    async with worker:
        print("ready", flush=True)
        await asyncio.Event().wait()  # until the parent kills this process


if __name__ == "__main__":
    settings = json.loads(sys.argv[1])
    for entry in reversed(settings.get("sys_path", [])):
        if entry not in sys.path:
            sys.path.insert(0, entry)
    asyncio.run(main(settings))
