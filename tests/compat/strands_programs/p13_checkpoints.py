"""Checkpoints (strands.experimental.checkpoint): checkpointing=True pauses at cycle boundaries; checkpointResume resumes."""

import json

from fake_model import FakeModel, call, text
from show import dump, show_messages, show_result
from strands import Agent, tool
from strands.experimental.checkpoint import Checkpoint

RUNS: list[str] = []


@tool
def charge(amount: int) -> str:
    """Charge a card.

    Args:
        amount: Cents.
    """
    RUNS.append(f"charge {amount}")
    return f"charged {amount}"


model = FakeModel([call("tu-1", "charge", {"amount": 500}), call("tu-2", "charge", {"amount": 250}), text("Charged 750 in total.")])
agent = Agent(model=model, tools=[charge], checkpointing=True, callback_handler=None)
result = agent("Charge 5 then 2.50")
pauses = []
while result.stop_reason == "checkpoint":
    checkpoint = result.checkpoint
    pauses.append({"position": checkpoint.position, "cycle_index": checkpoint.cycle_index, "tools_run": list(RUNS)})
    stored = json.dumps(checkpoint.to_dict())
    dump("checkpoint.dict", json.loads(stored))
    result = agent({"checkpointResume": {"checkpoint": Checkpoint.from_dict(json.loads(stored)).to_dict()}})
dump("pauses", pauses)
show_result("result", result)
dump("result.checkpoint", result.checkpoint)
dump("tool_runs", RUNS)
show_messages("agent", agent)

try:
    Agent(model=FakeModel([]), callback_handler=None)(
        {"checkpointResume": {"checkpoint": {"position": "after_model", "cycle_index": 0, "schema_version": "1.0"}}}
    )
except ValueError as exc:
    dump("not_checkpointing.error", type(exc).__name__)
try:
    Checkpoint.from_dict({"position": "after_model", "cycle_index": 0, "schema_version": "0.1"})
except Exception as exc:
    dump("bad_version.error", type(exc).__name__)
