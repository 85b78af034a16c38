"""A durable run in a child process, for the crash-torture, lease and fencing tests.

Usage: ``python -m tests.durable.worker STORE RUN_ID LOG start|resume [GATE]``, STORE a SQLite
path (or ``sqlite:PATH``) or ``postgres:CONNINFO``. Tools append ``effect <idempotency key>`` to
LOG; before a resume the worker appends ``doubt <key>`` for every call the store shows as in
doubt. With GATE, tools wait until that file exists. Prints ``ready`` once imported, exits 0
when the run ends, 3 when another owner holds the run and 4 when its lease was lost (fenced off).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import Any

from tests._append import append
from tether import Agent, tool
from tether.durable import RunStore, SQLiteStore
from tether.errors import LeaseLostError, RunLockedError
from tether.models import ScriptedModel
from tether.tools.context import ToolContext

CYCLES = 20


def responses() -> list[Any]:
    """A 20-cycle script: every third cycle calls two tools, the others one."""
    script: list[Any] = []
    for i in range(CYCLES):
        ids = [f"c{i}a", f"c{i}b"] if i % 3 == 2 else [f"c{i}"]
        blocks = [{"toolUse": {"toolUseId": tid, "name": "step", "input": {"n": i}}} for tid in ids]
        script.append({"role": "assistant", "content": [{"text": f"cycle {i}"}, *blocks]})
    script.append("finished")
    return script


def tool_ids() -> list[str]:
    """Every tool-use id of the script, in order."""
    return [block["toolUse"]["toolUseId"] for item in responses()[:-1] for block in item["content"] if "toolUse" in block]


_STATE_LOCK = threading.Lock()


def build_agent(store: RunStore, log: str, gate: str | None = None) -> Agent:
    """The torture agent: its tool sleeps 5-20 ms around a logged side effect and a change of the
    agent state (a count of steps, and how often each call ran). A cycle's second call sleeps
    longer, so it changes the state before its sibling's result is stored and is recorded after
    it: a kill in between finds a sibling's result stored while this call's change is not."""

    @tool
    def step(n: int, ctx: ToolContext) -> str:
        """One step of work."""
        delay = (0.005 + (n % 4) * 0.005) * (1.6 if ctx.tool_use["toolUseId"].endswith("b") else 1.0)
        time.sleep(delay / 2)
        while gate is not None and not os.path.exists(gate):
            time.sleep(0.01)
        with _STATE_LOCK:  # the two calls of a cycle run in threads: no lost update between them
            state = ctx.agent.state
            ran = state.get("ran") or {}
            ran[ctx.tool_use["toolUseId"]] = ran.get(ctx.tool_use["toolUseId"], 0) + 1
            state.set("ran", ran)
            state.set("steps", (state.get("steps") or 0) + 1)
        append(log, f"effect {ctx.idempotency_key}")
        time.sleep(delay / 2)
        return f"step {n} done"

    return Agent(model=ScriptedModel(responses(), stateful=True), tools=[step], store=store)


def record_doubts(store: RunStore, run_id: str, log: str) -> None:
    loaded = store.load(run_id)
    if loaded is None or loaded.head["cursor"]["phase"] != "tools":
        return
    for tool_use_id in dict.fromkeys(loaded.head["cursor"]["started"]):
        if tool_use_id not in loaded.results:
            append(log, f"doubt {run_id}/{tool_use_id}")


def open_store(spec: str) -> RunStore:
    """``postgres:CONNINFO`` or a SQLite path (optionally ``sqlite:PATH``)."""
    if spec.startswith("postgres:"):
        from tether.durable.postgres import PostgresStore

        return PostgresStore(spec.removeprefix("postgres:"))
    return SQLiteStore(spec.removeprefix("sqlite:"))


def main(argv: list[str]) -> int:
    db, run_id, log, action = argv[:4]
    gate = argv[4] if len(argv) > 4 else None
    store = open_store(db)
    agent = build_agent(store, log, gate)
    print("ready", flush=True)
    try:
        if action == "start":
            result = agent("run the 20 steps", run_id=run_id)
        else:
            with store.lease(run_id):
                record_doubts(store, run_id, log)
            result = agent.resume(run_id)
    except RunLockedError as exc:
        print(f"locked: {exc}", flush=True)
        return 3
    except LeaseLostError as exc:
        print(f"lease lost: {exc}", flush=True)
        return 4
    print(f"done {result.stop_reason}", flush=True)
    return 0 if result.stop_reason == "end_turn" else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))


__all__ = ["build_agent", "main", "open_store", "responses", "tool_ids"]
