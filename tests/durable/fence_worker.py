"""A durable run in a child process on either store, for the split-brain (fencing) tests.

Usage: ``python -m tests.durable.fence_worker STORE RUN_ID LOG start|resume [GATE]`` where STORE
is ``sqlite:PATH`` or ``postgres:CONNINFO``. The agent is the crash-torture one (see
:mod:`tests.durable.worker`): tools log ``effect <key>`` and wait for GATE when given; a resume
first logs ``doubt <key>`` for each in-doubt call. Prints ``ready`` once imported; exits 0 when
the run ends, 3 when another owner holds the run, 4 when its lease was lost (fenced off).
"""

from __future__ import annotations

import sys

from tether.durable import RunStore, SQLiteStore
from tether.errors import LeaseLostError, RunLockedError

from .worker import build_agent, record_doubts


def open_store(spec: str) -> RunStore:
    kind, _, where = spec.partition(":")
    if kind == "sqlite":
        return SQLiteStore(where)
    from tether.durable.postgres import PostgresStore

    return PostgresStore(where)


def main(argv: list[str]) -> int:
    spec, run_id, log, action = argv[:4]
    gate = argv[4] if len(argv) > 4 else None
    store = open_store(spec)
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
