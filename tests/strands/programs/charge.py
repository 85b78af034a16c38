"""A non-idempotent tool with the provider: an in-doubt call is reconciled or asked about.

Usage: ``charge.py STORE MODE [--plain]``; MODE ``reconcile`` passes a reconcile callable that looks
the call's idempotency key up in the payment log; MODE ``interrupt`` has none, so the program answers
a ``tether.in_doubt`` interrupt itself, from the same log. Either way the call is never run twice.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from _program_kit import PLAIN, ScriptModel, effect, show
from strands import Agent, ToolContext, tool

from tether.durable import RERUN, InDoubtCall


@tool(context=True)
def charge(amount: int, tool_context: ToolContext) -> str:
    """Charge the card.

    Args:
        amount: Euros.
    """
    effect(tool_context, "charge")
    return f"charged {amount}"


def looked_up(key: str, amount: Any) -> str:
    """What the payment system says about the request ``key``: its outcome, or RERUN if it never arrived."""
    with open(os.environ["TRIP_LOG"]) as log:
        done = any(json.loads(line)["key"] == key for line in log)
    return f"charged {amount}" if done else RERUN


def reconcile(call: InDoubtCall) -> str:
    return looked_up(call.idempotency_key, call.tool_use["input"]["amount"])


SCRIPT = [{"tools": [("tu-1", "charge", {"amount": 30})]}, {"text": "Paid."}]
store, mode = sys.argv[1], sys.argv[2]
manager = None
if not PLAIN:
    from tether.strands.session_manager import TetherSessionManager

    manager = TetherSessionManager("shop-1", store=store, non_idempotent={"charge"}, reconcile=reconcile if mode == "reconcile" else None)
agent = Agent(model=ScriptModel(SCRIPT), tools=[charge], callback_handler=None, session_manager=manager)
result = agent("Charge 30")
while result.stop_reason == "interrupt":
    answers = []
    for interrupt in result.interrupts:
        assert interrupt.name == "tether.in_doubt", interrupt.name
        reason = interrupt.reason
        answers.append(
            {
                "interruptResponse": {
                    "interruptId": interrupt.id,
                    "response": looked_up(reason["idempotency_key"], reason["input"]["amount"]),
                }
            }
        )
        print("in doubt:", reason["tool"], reason["toolUseId"], file=sys.stderr)
    result = agent(answers)
show(agent, result)
