"""Record the swarm replay corpus: ``python -m tests.temporal.record_swarm_histories [--prefix P]``.

Runs each swarm scenario below on a fresh dev server with an in-process worker and writes the
history of every execution of its ``tether.swarm`` workflow (continue-as-new makes several) to
``tests/temporal/histories/swarm/<prefix><scenario>.<n>.json``. ``test_swarm.py`` replays them
against the current ``SwarmWorkflow``, so a change to its command sequence that would break swarm
runs in flight fails CI (put such a change behind ``workflow.patched``). The member turns' own
histories are agent workflows, covered by ``record_histories.py``.
"""

from __future__ import annotations

from pathlib import Path

from tether.temporal import TetherClient

from .record_histories import HISTORIES, Scenario, main
from .swarms import registry

SWARM_HISTORIES = HISTORIES / "swarm"


async def swarm_handoffs(tc: TetherClient, tmp: Path) -> str:
    # two turns per execution: the third turn runs in a second execution (continue-as-new)
    await tc.execute_swarm("team", "explain tides", run_id="swarm_handoffs", options={"turns_per_execution": 2})
    return "swarm_handoffs"


async def swarm_limit(tc: TetherClient, tmp: Path) -> str:
    await tc.execute_swarm("pingpong", "task", run_id="swarm_limit", config={"max_handoffs": 2})
    return "swarm_limit"


async def swarm_interrupt(tc: TetherClient, tmp: Path) -> str:
    await tc.start_swarm("approval", "publish something", run_id="swarm_interrupt")
    [interrupt] = await tc.wait_for_interrupts("swarm_interrupt")
    await tc.answer_interrupts("swarm_interrupt", [{"interruptId": interrupt.id, "response": "yes"}])
    await tc.swarm_result("swarm_interrupt")
    return "swarm_interrupt"


SCENARIOS: dict[str, Scenario] = {"swarm_handoffs": swarm_handoffs, "swarm_limit": swarm_limit, "swarm_interrupt": swarm_interrupt}


if __name__ == "__main__":
    main(__doc__.splitlines()[0], SCENARIOS, registry, SWARM_HISTORIES)
