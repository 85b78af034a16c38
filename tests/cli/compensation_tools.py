"""Tools with compensations for ``tether compensate`` tests (``--tools tests.cli.compensation_tools:TOOLS``).
Each writes ``did KEY`` / ``undid KEY`` lines to the file ``$COMPENSATION_LOG``; with
``$COMPENSATION_STOP`` set, the compensation is stopped (KeyboardInterrupt) before it undoes anything."""

from __future__ import annotations

import os
from pathlib import Path

from tether import ToolContext, Undo, tool


def _log(line: str) -> None:
    with Path(os.environ["COMPENSATION_LOG"]).open("a", encoding="utf-8") as out:
        out.write(line + "\n")


def _cancel(undo: Undo) -> None:
    if os.environ.get("COMPENSATION_STOP"):
        raise KeyboardInterrupt  # the process is stopped while the undo runs: it is left in doubt
    _log(f"undid {undo.undo_key}")


@tool(compensate=_cancel)
def book(city: str, context: ToolContext) -> str:
    """Book a room.

    Args:
        city: Where.
    """
    _log(f"did {context.idempotency_key}")
    return f"booked {city}"


TOOLS = [book]
