"""``checkpointing=True`` with the provider: the program resumes every checkpoint it is handed.

Usage: ``checkpoints.py STORE EXECUTOR [--plain]``. Started again after a crash, the program's first
call finishes the cut-off turn, pausing at the checkpoints from the cut-off point on, and ends
with the uninterrupted run's result (checkpoint positions go to stderr: a restarted run pauses at
fewer of them).
"""

from __future__ import annotations

import sys

from _program_kit import ScriptModel, manager_or_none, show
from strands import Agent
from strands.tools.executors import ConcurrentToolExecutor, SequentialToolExecutor
from trip import SCRIPT, book, lookup, weather

store, kind = sys.argv[1], sys.argv[2]
agent = Agent(
    model=ScriptModel(SCRIPT),
    tools=[lookup, weather, book],
    tool_executor=ConcurrentToolExecutor() if kind == "concurrent" else SequentialToolExecutor(),
    callback_handler=None,
    checkpointing=True,
    session_manager=manager_or_none("plan-1", store),
)
result = agent("Plan a trip to Oslo")
while result.stop_reason == "checkpoint":
    assert result.checkpoint is not None
    print("checkpoint", result.checkpoint.position, file=sys.stderr)
    result = agent({"checkpointResume": {"checkpoint": result.checkpoint.to_dict()}})
show(agent, result)
