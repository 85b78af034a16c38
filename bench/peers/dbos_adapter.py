"""DBOS's side of ``bench/compare.py`` (``dbos``, in its own virtual environment): durable-pg only.

DBOS is a durable-execution library, not an agent SDK, so it appears in the one scenario that
measures durable execution on PostgreSQL. The agent is the benchmark's ReAct loop written by hand
the way DBOS's documentation writes one: an ``@DBOS.workflow()`` whose model call and tool call are
each an ``@DBOS.step()`` (a step per model call and per tool call, as a DBOS agent records them).

- model: the async step ``model_step(last, cycles)`` returns the next ``add`` call (or the answer)
  from the last result only (``_common.next_call``);
- tool: the async step ``tool_step(a, b)`` runs ``add``;
- durable-pg: ``DBOS(config={"name": ..., "system_database_url": ...})`` on the benchmark database,
  ``DBOS.launch()``, each conversation under ``SetWorkflowID(key)``; the plain baseline is the same
  loop with the undecorated functions.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from importlib import metadata
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import _common


async def model_call(last: int | None, cycles: int) -> Any:
    """The fake model: the next ``add`` arguments (a list) or the answer (a string)."""
    action = _common.next_call(last, cycles)
    return action if isinstance(action, str) else list(action)


async def tool_call(a: int, b: int) -> int:
    """The tool: ``add``."""
    return _common.add(a, b)


async def loop(model: Callable[..., Any], tool: Callable[..., Any], cycles: int) -> str:
    """The ReAct loop: model, tool, model, ... until the model answers."""
    last: int | None = None
    while True:
        action = await model(last, cycles)
        if isinstance(action, str):
            return action
        last = await tool(*action)


async def durable_pg_rig(server: _common.PgServer, dbname: str) -> _common.DurablePgRig:
    from dbos import DBOS, SetWorkflowID

    model_step = DBOS.step(name="model_call")(model_call)
    tool_step = DBOS.step(name="tool_call")(tool_call)

    @DBOS.workflow(name="agent")
    async def agent(cycles: int) -> str:
        return await loop(model_step, tool_step, cycles)

    DBOS(config={"name": "tether-bench", "system_database_url": server.url(dbname)})
    DBOS.launch()

    async def run(cycles: int, key: str) -> str:
        with SetWorkflowID(key):
            return await agent(cycles)

    async def plain(cycles: int) -> str:
        return await loop(model_call, tool_call, cycles)

    def close() -> None:
        DBOS.destroy(destroy_registry=True)

    return _common.DurablePgRig(run, plain, close, "@DBOS.workflow loop; @DBOS.step per model call and per tool call; SetWorkflowID(key)")


def _unsupported(*args: Any) -> Any:
    raise SystemExit("the dbos adapter measures durable-pg only")


def versions() -> dict[str, str]:
    return {name: metadata.version(name) for name in ("dbos", "sqlalchemy", "psycopg")}


ADAPTER = _common.Adapter(
    name="dbos",
    versions=versions,
    loop=_unsupported,
    snapshot=_unsupported,
    durable=None,
    concurrent=_unsupported,
    durable_pg=durable_pg_rig,
    notes={
        "model": "async function returning the next add call from the last result (a DBOS step when durable)",
        "agent": "hand-written ReAct loop as an async @DBOS.workflow",
        "durable-pg": "DBOS system database on the benchmark database; a step per model call and per tool call",
    },
)

if __name__ == "__main__":
    _common.main(ADAPTER)
