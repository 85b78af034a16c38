"""The registry a served resume-contract check serves: ``tether serve tether.testing._served_registry:AGENTS``.

One entry, ``agent``, built by the factory in ``$TETHER_CONTRACT_FACTORY`` (``"module:attr"``),
its tool starts counted in ``$TETHER_CONTRACT_LOG`` like a contract child's
(:func:`tether.testing._child.count_starts`). With ``$TETHER_CONTRACT_HOLD=N:before`` the server
stops for good inside the N-th tool call it starts, before the tool's body runs; with
``N:after``, once the body returned and before its result is recorded (the effect done, the run
not knowing it): the parent SIGKILLs it there. The variables come from the parent process (:mod:`tether.testing.contract_served`), never
from stored data. Not a public API.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable
from pathlib import Path

from ..agent import Agent
from ._child import build, count_starts

FACTORY = "TETHER_CONTRACT_FACTORY"
LOG = "TETHER_CONTRACT_LOG"
HOLD = "TETHER_CONTRACT_HOLD"

_started = 0


async def _forever() -> None:
    await asyncio.Event().wait()


def _hold(when: str) -> Awaitable[None] | None:
    """At the place ``$TETHER_CONTRACT_HOLD`` names, a wait that never ends (the server goes on
    answering requests; the call never finishes)."""
    global _started
    if when == "before":
        _started += 1
    if os.environ.get(HOLD) != f"{_started}:{when}":
        return None
    Path(os.environ[LOG] + ".held").write_text(f"{_started}:{when}")  # the parent kills this process now
    return _forever()


def _agent() -> Agent:
    agent = build(os.environ[FACTORY])
    count_starts(agent, os.environ[LOG], hold=_hold)
    return agent


AGENTS = {"agent": _agent}
