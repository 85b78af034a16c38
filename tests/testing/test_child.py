"""The crashtest child's tool-start counting (:func:`tether.testing._child.count_starts`)."""

from __future__ import annotations

import json
from pathlib import Path

from tether import Agent
from tether.models import ScriptedModel
from tether.testing._child import count_starts

from .agents import lookup


def _agent() -> Agent:
    call = {"toolUse": {"toolUseId": "t1", "name": "lookup", "input": {"n": 1}}}
    model = ScriptedModel([{"role": "assistant", "content": [call]}, "done"])
    return Agent(model=model, tools=[lookup])  # lookup: one module-level tool object, shared by both agents


def test_a_shared_tool_counts_its_starts_in_the_latest_log(tmp_path: Path) -> None:
    # A process that builds agents for several checks (the Temporal contract's in-process
    # worker) counts each check's starts in that check's log, not in the first one's.
    first, second = tmp_path / "first.log", tmp_path / "second.log"
    count_starts(_agent(), str(first))
    agent = _agent()
    count_starts(agent, str(second))
    agent("go", run_id="second-run")
    assert not first.exists()
    (line,) = second.read_text().splitlines()
    assert json.loads(line)["key"] == "second-run/t1"
