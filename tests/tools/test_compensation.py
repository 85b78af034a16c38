"""``@tool(compensate=...)``: the Undo a compensation receives, and the compensation as part of the
tool's contract (its manifest entry, hence the manifest digest, names it)."""

from __future__ import annotations

from typing import Any

import pytest

from tether import Agent, Undo, tool
from tether.errors import ToolError
from tether.manifest import judge


def cancel(undo: Undo) -> None:
    """A compensation (does nothing here)."""


def cancel_differently(undo: Undo) -> None:
    """Another compensation."""


def agent_with(compensate: Any) -> Agent:
    @tool(compensate=compensate)
    def book(city: str) -> str:
        """Book a room.

        Args:
            city: Where.
        """
        return city

    return Agent(tools=[book])


def test_a_compensation_is_part_of_the_contract_digest() -> None:
    plain, undone, other = agent_with(None).manifest(), agent_with(cancel).manifest(), agent_with(cancel_differently).manifest()
    assert "compensate" not in plain["tools"]["book"]  # a tool without one reads as it did before compensations
    assert undone["tools"]["book"]["compensate"] == f"{__name__}:cancel"
    assert len({plain["digest"], undone["digest"], other["digest"]}) == 3
    verdict = judge(undone, other, [])
    assert verdict.verdict == "compatible"
    assert [d.name for d in verdict.differences] == ["compensation_changed:book"]


def test_compensate_must_be_callable() -> None:
    with pytest.raises(ToolError, match="tool 'book': compensate= must be a callable"):
        agent_with("cancel")


def test_the_undo_names_the_call_and_its_value() -> None:
    result: Any = {"toolUseId": "c1", "status": "success", "content": [{"text": "t"}, {"json": {"booking": 7}}]}
    undo = Undo("r", "c1", "book", {"city": "Oslo"}, result, "r/c1", "r/c1/undo")
    assert (undo.output, undo.in_doubt) == ({"booking": 7}, False)
    doubt = Undo("r", "c1", "book", {"city": "Oslo"}, None, "r/c1", "r/c1/undo")
    assert (doubt.output, doubt.in_doubt) == (None, True)
