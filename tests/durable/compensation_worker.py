"""The booking example (examples/compensation.py) in a child process, for the crash tests of
compensation.

Usage: ``python -m tests.durable.compensation_worker STORE FOLDER compensate [KILL_AT WHEN]`` compensates
run ``trip-7`` of STORE (``compensate-nested``: the run of :func:`build_nested`, whose bookings a
nested agent made) (a SQLite file or a ``postgresql://`` URL; its provider in FOLDER) through a
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


def build_nested(folder: Path, store: Any, *, compensate_on: tuple[str, ...] = ()) -> Any:
    """The booking with nesting: the parent agent asks a ``booker`` agent (an agent tool, so a
    nested durable run ``trip-7.booker``) to book the flight and the hotel, then charges the card
    itself, then fails (the ticketing step). The tools are the example's, one provider."""
    from tether import Agent, ScriptedModel
    from tether.models import tool_call

    example = load_example()
    tools = example.build_agent(folder, store).tool_registry
    booker = Agent(
        name="booker",
        description="Books flights and hotels.",
        model=ScriptedModel(
            [
                tool_call("book_flight", {"to": "Lisbon"}, tool_use_id="flight"),
                tool_call("book_hotel", {"city": "Lisbon", "nights": 3}, tool_use_id="hotel"),
                "booked",
            ]
        ),
        tools=[tools.get("book_flight"), tools.get("book_hotel")],
    )
    script = [
        tool_call("booker", {"input": "a flight and 3 nights in Lisbon"}, tool_use_id="booker"),
        tool_call("charge_card", {"amount": 740.0}, tool_use_id="charge"),
        RuntimeError("the ticketing service is down"),
    ]
    return Agent(model=ScriptedModel(script), tools=[booker, tools.get("charge_card")], store=store, compensate_on=compensate_on)


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
    agent = build_nested(folder, store) if mode == "compensate-nested" else example.build_agent(folder, store, compensate_on=())
    report = agent.compensate(example.RUN_ID)
    print(json.dumps({"commits": store.commits, "status": report.status}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
