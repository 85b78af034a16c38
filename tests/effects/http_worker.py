"""A process whose tool POSTs through ``context.http`` and is SIGKILLed right after, on its first run.

``python -m tests.effects.http_worker start|resume DB URL MARKER``: ``start`` runs the agent on
the SQLite run store ``DB`` as run ``pay``; the tool sends its request to ``URL`` and, while the
file ``MARKER`` does not exist, creates it and kills its own process (kill -9: the request went
out, the result was never recorded, so the call is in doubt). ``resume`` resumes the run and
prints its answer.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

from tether import Agent, ToolContext, tool
from tether.durable import SQLiteStore
from tether.models import ScriptedModel
from tether.models.scripted import tool_call


def main(action: str, db: str, url: str, marker: str) -> None:
    @tool
    async def charge(amount: int, context: ToolContext) -> str:
        """Charge a card through the payment API (which deduplicates by Idempotency-Key)."""
        response = await context.http.post(f"{url}/charges", json={"amount": amount, "key": context.idempotency_key})
        if not Path(marker).exists():
            Path(marker).touch()
            os.kill(os.getpid(), signal.SIGKILL)
        return f"charged {amount}: {response.json()['key']}"

    model = ScriptedModel([tool_call("charge", {"amount": 5}, tool_use_id="c1"), "paid"], stateful=True)
    agent = Agent(model=model, tools=[charge], store=SQLiteStore(db))
    result = agent("pay 5", run_id="pay") if action == "start" else agent.resume("pay")
    print(str(result), flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:5])
