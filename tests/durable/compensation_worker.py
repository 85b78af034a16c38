"""The booking example (examples/compensation.py) in a child process, for the crash tests of
compensation.

Usage: ``python -m tests.durable.compensation_worker STORE FOLDER compensate [KILL_AT WHEN]`` compensates
run ``trip-7`` of STORE (a SQLite file or a ``postgresql://`` URL; its provider in FOLDER) through a
:class:`~tether.testing.faults.FaultStore` that SIGKILLs the process at commit KILL_AT
(``before``/``after`` it); it prints the number of commits and the report's status as JSON.
``... book`` runs the booking, and the process dies (``os._exit``) right after the card is
charged, before the charge's result is recorded: the charge is left in doubt.
"""

from __future__ import annotations

import json
import os
import runpy
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from tether.testing.faults import FaultStore, open_store

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "compensation.py"


def load_example() -> Any:
    """examples/compensation.py's names (examples/ is not a package); its ``main`` is not run."""
    return SimpleNamespace(**runpy.run_path(str(EXAMPLE), run_name="tether_example_compensation"))


def main(argv: list[str]) -> int:
    spec, folder, mode = argv[0], Path(argv[1]), argv[2]
    example = load_example()
    if mode == "book":
        provider = example.Provider
        book = provider.book

        def book_then_die(self: Any, key: str, what: str) -> str:
            done: str = book(self, key, what)
            if what.startswith("charged"):
                os._exit(1)  # the charge happened; its result is never recorded
            return done

        provider.book = book_then_die
        agent = example.build_agent(folder, open_store(spec), compensate_on=())
        agent("book", run_id=example.RUN_ID)
        return 2  # not reached
    kill_at = int(argv[3]) if len(argv) > 3 else None
    store = FaultStore(open_store(spec), kill_at, argv[4] if len(argv) > 4 else "after")
    agent = example.build_agent(folder, store, compensate_on=())
    report = agent.compensate(example.RUN_ID)
    print(json.dumps({"commits": store.commits, "status": report.status}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
