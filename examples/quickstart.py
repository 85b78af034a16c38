"""Quickstart: an agent with two tools, a checkpoint taken mid-run, and a resume from JSON.

Runs offline on the scripted model (a real local model arrives with the providers); the loop,
tools, checkpoints and snapshots are the real thing.
"""

from __future__ import annotations

import json

from tether import Agent, Checkpoint, ScriptedModel, tool
from tether.models import tool_call


@tool
def multiply(a: float, b: float) -> float:
    """Multiply two numbers.

    Args:
        a: The first factor.
        b: The second factor.
    """
    return a * b


@tool
def add(a: float, b: float) -> float:
    """Add two numbers.

    Args:
        a: The first term.
        b: The second term.
    """
    return a + b


def script() -> ScriptedModel:
    """The model's side of the conversation, scripted (stateful: the position lives in model_state)."""
    return ScriptedModel(
        [
            tool_call("multiply", {"a": 12, "b": 34}, text="First the product."),
            tool_call("add", {"a": 408, "b": 5}, text="Now add five."),
            "12 * 34 + 5 = 413.",
        ],
        stateful=True,
    )


def main() -> str:
    # Run until the first checkpoint after the tools of a cycle, then stop.
    agent = Agent(model=script(), tools=[multiply, add], system_prompt="You are a careful calculator.", checkpointing=["after_tools"])
    result = agent("What is 12 * 34 + 5?")
    assert result.checkpoint is not None
    print(f"paused: {result.stop_reason} at {result.checkpoint.position}, cycle {result.checkpoint.cycle_index}")

    # The checkpoint is plain JSON: store it anywhere, resume in a fresh agent (or process).
    stored = json.dumps(result.checkpoint.to_dict())
    fresh = Agent(model=script(), tools=[multiply, add], checkpointing=["after_tools"])
    while True:
        checkpoint = Checkpoint.from_dict(json.loads(stored))
        result = fresh({"checkpointResume": {"checkpoint": checkpoint.to_dict()}})
        if result.stop_reason != "checkpoint":
            break
        assert result.checkpoint is not None
        print(f"paused: {result.stop_reason} at {result.checkpoint.position}, cycle {result.checkpoint.cycle_index}")
        stored = json.dumps(result.checkpoint.to_dict())

    print(f"answer: {result}")
    usage = result.metrics.usage
    print(f"cycles={result.metrics.cycle_count} tool_calls={result.metrics.tool_call_count} tokens={usage['total_tokens']}")

    # A snapshot of the whole agent, as JSON.
    snapshot = fresh.take_snapshot(preset="session", app_data={"user": "demo"})
    print(f"snapshot: {len(json.dumps(snapshot.to_dict()))} bytes, {len(fresh.messages)} messages")
    return str(result)


if __name__ == "__main__":
    main()
