"""Writes ``v2_store.db``: a store of schema 2 (Tether before packed heads), for the migration
test. Run it with that release's code (``PYTHONPATH=<old checkout>/src python make_v2_store.py``);
the file it made is committed, so the test does not need the old code.

Runs: ``finished`` (tool cycles, a 5 KB state set once, a second turn), ``crashed`` (the process
died in the middle of a tool call of an idempotent tool: resumable) and ``waiting`` (a tool
raised an interrupt: answer it to go on).
"""

from __future__ import annotations

import sys
from pathlib import Path

from tether import Agent, ToolContext, tool
from tether.durable import SQLiteStore
from tether.models import ScriptedModel
from tether.models.scripted import tool_call


class Died(BaseException):
    """Stands for the process dying."""


@tool
def note(text: str, context: ToolContext) -> str:
    """Note something in the state.

    Args:
        text: What to note.
    """
    context.agent.state.set("notes", [*(context.agent.state.get("notes") or []), text])
    if text == "die":
        raise Died()
    if text == "ask":
        return f"approved: {context.interrupt('approve', reason={'what': text})}"
    return f"noted {text}"


def main(path: Path) -> None:
    path.unlink(missing_ok=True)
    store = SQLiteStore(path)
    big = {"doc": "d" * 5000}
    finished = Agent(
        model=ScriptedModel(
            [tool_call("note", {"text": "a"}), tool_call("note", {"text": "b"}), "first", tool_call("note", {"text": "c"}), "second"]
        ),
        tools=[note],
        store=store,
        state={"big": big},
    )
    finished("one", run_id="finished")
    finished("two", run_id="finished")
    crashed = Agent(
        model=ScriptedModel([tool_call("note", {"text": "x"}), tool_call("note", {"text": "die"}), "after"]), tools=[note], store=store
    )
    try:
        crashed("go", run_id="crashed")
    except Died:
        pass
    waiting = Agent(model=ScriptedModel([tool_call("note", {"text": "ask"}), "answered"]), tools=[note], store=store)
    waiting("go", run_id="waiting")
    store.close()


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).with_name("v2_store.db"))
