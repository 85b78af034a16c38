"""Strands interrupts with the provider: a tool asks for approval, the program answers.

Usage: ``approve.py STORE [--plain]``. Killed inside the answered tool and started again, the
program's first call gets the interrupt again, answers it, and the turn ends as without the crash.
"""

from __future__ import annotations

import json
import sys

from _program_kit import ScriptModel, effect, manager_or_none, show
from strands import Agent, ToolContext, tool


@tool(context=True)
def transfer(amount: int, to: str, tool_context: ToolContext) -> str:
    """Transfer money.

    Args:
        amount: Euros.
        to: The recipient.
    """
    answer = tool_context.interrupt("approve-transfer", reason={"amount": amount, "to": to})
    if answer != "yes":
        return f"transfer to {to} refused"
    effect(tool_context, "transfer")
    return f"sent {amount} to {to}"


SCRIPT = [{"tools": [("tu-1", "transfer", {"amount": 100, "to": "bob"})]}, {"text": "Sent."}]
agent = Agent(model=ScriptModel(SCRIPT), tools=[transfer], callback_handler=None, session_manager=manager_or_none("pay-1", sys.argv[1]))
result = agent("Send 100 to bob")
show(agent, result, "paused")
print(json.dumps([{"name": i.name, "reason": i.reason, "id": i.id} for i in result.interrupts], sort_keys=True))
result = agent([{"interruptResponse": {"interruptId": i.id, "response": "yes"}} for i in result.interrupts])
show(agent, result, "resumed")
