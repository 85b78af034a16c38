"""Record the swarm replay corpus: ``python -m tests.temporal.record_swarm_histories [--prefix P]``.

Runs each swarm scenario below on a fresh dev server with an in-process worker and writes the
history of every execution of its ``tether.swarm`` workflow (continue-as-new makes several) to
``tests/temporal/histories/swarm/<prefix><scenario>.<n>.json``. ``test_swarm.py`` replays them
against the current ``SwarmWorkflow``, so a change to its command sequence that would break swarm
runs in flight fails CI (put such a change behind ``workflow.patched``). The member turns' own
histories are agent workflows, covered by ``record_histories.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from collections.abc import Awaitable, Callable
from datetime import timedelta
from pathlib import Path

from temporalio.client import Client

from tether.temporal import BlobStore, TetherClient, create_worker

from .record_histories import HISTORIES, histories_of
from .server import DevServer, require_binary
from .swarms import registry

SWARM_HISTORIES = HISTORIES / "swarm"

Scenario = Callable[[TetherClient], Awaitable[str]]
"""Runs one scenario to its end; returns the swarm workflow id."""


async def swarm_handoffs(tc: TetherClient) -> str:
    # two turns per execution: the third turn runs in a second execution (continue-as-new)
    await tc.execute_swarm("team", "explain tides", run_id="swarm_handoffs", options={"turns_per_execution": 2})
    return "swarm_handoffs"


async def swarm_limit(tc: TetherClient) -> str:
    await tc.execute_swarm("pingpong", "task", run_id="swarm_limit", config={"max_handoffs": 2})
    return "swarm_limit"


async def swarm_interrupt(tc: TetherClient) -> str:
    await tc.start_swarm("approval", "publish something", run_id="swarm_interrupt")
    [interrupt] = await tc.wait_for_interrupts("swarm_interrupt")
    await tc.answer_interrupts("swarm_interrupt", [{"interruptId": interrupt.id, "response": "yes"}])
    await tc.swarm_result("swarm_interrupt")
    return "swarm_interrupt"


SCENARIOS: dict[str, Scenario] = {"swarm_handoffs": swarm_handoffs, "swarm_limit": swarm_limit, "swarm_interrupt": swarm_interrupt}


async def record(prefix: str, out: Path) -> list[Path]:
    """Run the scenarios and write their swarm workflows' histories; returns the files written."""
    server = DevServer(require_binary())
    await asyncio.to_thread(server.start)
    written: list[Path] = []
    try:
        client = await Client.connect(server.address)
        with tempfile.TemporaryDirectory() as tmp:
            blobs = BlobStore(Path(tmp) / "blobs")
            tc = TetherClient(client, blobs, "record")
            worker = create_worker(client, "record", registry, blobs, sticky_queue_schedule_to_start_timeout=timedelta(seconds=1))
            async with worker:
                for name, scenario in SCENARIOS.items():
                    workflow_id = await scenario(tc)
                    for n, text in enumerate(await histories_of(client, workflow_id)):
                        path = out / f"{prefix}{name}.{n}.json"
                        path.write_text(text + "\n")
                        written.append(path)
    finally:
        await asyncio.to_thread(server.stop)
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prefix", default="", help="file name prefix (e.g. the release)")
    parser.add_argument("--out", default=str(SWARM_HISTORIES))
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for path in asyncio.run(record(args.prefix, out)):
        print(path)


if __name__ == "__main__":
    main()
