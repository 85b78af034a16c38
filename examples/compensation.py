"""Compensation: a trip booking fails at its fourth step, and what the first three did is undone.

The agent books a flight, books a hotel and charges the card; then the ticketing step fails (the
model provider is down). Each of the three tools declares how to undo itself
(``@tool(compensate=...)``), and the agent compensates a failed run on its own
(``compensate_on=("failed",)``): the charge is refunded, then the hotel and the flight are
cancelled, newest first, each once. Each undo is a recorded step of the run, so a process
killed while it unwinds leaves a run that ``agent.compensate(run_id)`` (or ``tether
compensate RUN``) finishes without undoing anything twice.

The "travel provider" is a JSON file keyed by idempotency key, as a real one would deduplicate
requests: a repeated booking or cancellation with the same key changes nothing.

``contract_agent`` is the same trip run to its end, for the resume contract
(``tether contract compensation:contract_agent "Book me three nights in Lisbon"``): the contract
asks for its compensation, kills the unwinding at every save point and checks each undo happens
once, newest first.

Runs offline on the scripted model.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tether import Agent, ScriptedModel, ToolContext, Undo, tool
from tether.durable import RunStore, SQLiteStore
from tether.models import tool_call

RUN_ID = "trip-7"


class Provider:
    """The travel provider: what it booked, charged and cancelled, by idempotency key, in a JSON
    file (so separate processes see one provider), and every request it got (``attempts``)."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / "provider.json"

    def read(self) -> dict[str, Any]:
        if not self.path.exists():
            return {"effects": {}, "undone": {}, "attempts": []}
        data: dict[str, Any] = json.loads(self.path.read_text())
        return data

    def _write(self, data: dict[str, Any]) -> None:
        self.path.write_text(json.dumps(data, indent=1))

    def book(self, key: str, what: str) -> str:
        data = self.read()
        data["effects"].setdefault(key, what)  # a repeated request with the same key books nothing more
        self._write(data)
        return what

    def undo(self, undo: Undo) -> None:
        data = self.read()
        data["attempts"].append(undo.undo_key)
        data["undone"].setdefault(undo.undo_key, {"call": undo.idempotency_key, "what": data["effects"].get(undo.idempotency_key)})
        self._write(data)


def build_agent(
    folder: Path,
    store: RunStore | None,
    *,
    compensate_on: Iterable[str] = ("failed",),
    script: list[Any] | None = None,
    failing_refund: bool = False,
    stateful: bool = False,
    **options: Any,
) -> Agent:
    """The booking agent; its provider lives in ``folder`` (``stateful``: the script's position
    is kept in the run, so a run resumed in another process goes on where it was)."""
    provider = Provider(folder)

    def refund(undo: Undo) -> None:
        if failing_refund:
            raise RuntimeError(f"the card network refused the refund of {undo.input['amount']}")
        provider.undo(undo)

    @tool(compensate=provider.undo)
    def book_flight(to: str, context: ToolContext) -> str:
        """Book a flight.

        Args:
            to: The destination.
        """
        return provider.book(context.idempotency_key, f"flight to {to}")

    @tool(compensate=provider.undo)
    def book_hotel(city: str, nights: int, context: ToolContext) -> str:
        """Book a hotel.

        Args:
            city: Where.
            nights: How many nights.
        """
        return provider.book(context.idempotency_key, f"{nights} nights in {city}")

    @tool(idempotent=False, compensate=refund)
    def charge_card(amount: float, context: ToolContext) -> str:
        """Charge the traveller's card.

        Args:
            amount: The amount in euros.
        """
        return provider.book(context.idempotency_key, f"charged {amount}")

    if script is None:
        script = [
            tool_call("book_flight", {"to": "Lisbon"}, tool_use_id="flight"),
            tool_call("book_hotel", {"city": "Lisbon", "nights": 3}, tool_use_id="hotel"),
            tool_call("charge_card", {"amount": 740.0}, tool_use_id="charge"),
            RuntimeError("the ticketing service is down"),  # the fourth step fails
        ]
    return Agent(
        model=ScriptedModel(script, stateful=stateful),
        tools=[book_flight, book_hotel, charge_card],
        store=store,
        compensate_on=compensate_on,
        **options,
    )


def contract_agent() -> Agent:
    """The trip booked to its end (the contract gives it its store and asks for its compensation);
    the provider lives in the contract's scratch directory of each run."""
    script: list[Any] = [
        tool_call("book_flight", {"to": "Lisbon"}, tool_use_id="flight"),
        tool_call("book_hotel", {"city": "Lisbon", "nights": 3}, tool_use_id="hotel"),
        tool_call("charge_card", {"amount": 740.0}, tool_use_id="charge"),
        "Booked: the flight, three nights at the hotel, 740 euros charged.",
    ]
    folder = Path(os.environ.get("TETHER_CRASHTEST_SCRATCH", "."))
    return build_agent(folder, None, compensate_on=(), script=script, stateful=True)


def main() -> list[str]:
    """Run the trip, watch it fail and unwind; returns what was undone, in order."""
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        store = SQLiteStore(folder / "runs.db")
        agent = build_agent(folder, store)
        try:
            agent("Book me three nights in Lisbon", run_id=RUN_ID)
        except RuntimeError as exc:
            print(f"the run failed: {exc}")
        provider = Provider(folder).read()
        undone = [provider["undone"][key]["what"] for key in provider["attempts"]]
        for what in undone:
            print(f"  undone: {what}")
        (summary,) = store.list_runs()
        print(f"run {summary.run_id}: {summary.status}")
        for step in store.history(RUN_ID):
            if step.position in ("unwind", "undo", "unwound"):
                print(f"  step {step.step} {step.position}: {json.dumps(step.undo)}")
        store.close()
        agent.close()
        return undone


if __name__ == "__main__":
    main()
