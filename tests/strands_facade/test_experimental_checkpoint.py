"""``tether.strands.experimental.checkpoint``: a checkpointing agent pauses and resumes as Strands'."""

from __future__ import annotations

from typing import Any

import tether.strands as ts
from tether.strands.experimental.checkpoint import CHECKPOINT_SCHEMA_VERSION, Checkpoint

from .test_agent import TOOL_EXCHANGE, TetherFake, plain, strands_fake, word_tools


def _run_to_end(agent: Any) -> tuple[list[tuple[str, str | None]], Any]:
    """Invoke, then resume from every checkpoint with a ``checkpointResume`` block (through JSON)."""
    stops: list[tuple[str, str | None]] = []
    result = agent("hi")
    while result.stop_reason == "checkpoint":
        stops.append((result.stop_reason, result.checkpoint.position))
        result = agent({"checkpointResume": {"checkpoint": result.checkpoint.to_dict()}})
    stops.append((result.stop_reason, None))
    return stops, result


def test_checkpoint_pauses_and_resumes_as_strands() -> None:
    import strands

    model = strands_fake(TOOL_EXCHANGE)
    expected, theirs = _run_to_end(strands.Agent(model=model, tools=word_tools(strands), callback_handler=None, checkpointing=True))
    agent = ts.Agent(model=TetherFake(TOOL_EXCHANGE), tools=word_tools(ts), callback_handler=None, checkpointing=True)
    got, ours = _run_to_end(agent)
    assert got == expected
    assert ("checkpoint", "after_tools") in got
    assert str(ours) == str(theirs)


def test_checkpoints_cross_between_the_packages() -> None:
    from strands.experimental.checkpoint import Checkpoint as StrandsCheckpoint

    agent = ts.Agent(model=TetherFake(TOOL_EXCHANGE), tools=word_tools(ts), callback_handler=None, checkpointing=True)
    result = agent("hi")
    assert isinstance(result.checkpoint, Checkpoint)
    theirs = StrandsCheckpoint.from_dict(result.checkpoint.to_dict())
    assert theirs.position == result.checkpoint.position
    assert Checkpoint.from_dict(theirs.to_dict()).position == result.checkpoint.position
    assert CHECKPOINT_SCHEMA_VERSION == theirs.schema_version
    assert plain(agent.messages[0]) == {"role": "user", "content": [{"text": "hi"}]}


def test_facade_checkpoint_to_dict_is_strands_marker() -> None:
    from tether.checkpoint import Checkpoint as TetherCheckpoint
    from tether.strands.experimental.checkpoint import Checkpoint as FacadeCheckpoint

    full = TetherCheckpoint("after_tools", 2, snapshot={"scope": "agent"}, app_data={"k": 1})
    view = FacadeCheckpoint.of(full)
    assert view.to_dict() == {"position": "after_tools", "cycle_index": 2, "schema_version": "1.0"}
    assert FacadeCheckpoint.from_dict(full.to_dict()).snapshot == {"scope": "agent"}
