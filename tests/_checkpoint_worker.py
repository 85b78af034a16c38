"""A worker process for the two-process checkpoint and interrupt tests.

Usage: ``python _checkpoint_worker.py MODE WORKDIR [CYCLE POSITION]``. Every mode builds a fresh
agent from scratch (same scripted model, same tools) so nothing survives between processes but
the files in WORKDIR:

- ``first``: run with checkpoints, stop at the checkpoint (CYCLE, POSITION), write it to
  ``checkpoint.json``;
- ``resume``: a fresh agent resumes ``checkpoint.json`` until the turn ends, writes
  ``final.json`` (messages and metrics);
- ``straight``: the same run without checkpoints, writes ``final.json``;
- ``interrupt-first``: run until a tool interrupts, write ``snapshot.json`` and
  ``interrupts.json``;
- ``interrupt-answer``: a fresh agent loads ``snapshot.json``, answers, writes ``final.json``.

Every tool body appends a line to ``side_effects.log``, so the tests can count executions.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tether import Agent, ScriptedModel, ToolContext, tool
from tether.models.scripted import tool_call, tool_calls
from tether.tools.base import Tool

SCRIPT: list[Any] = [
    tool_calls([("record", {"tag": "a"}), ("record", {"tag": "b"})]),
    tool_call("record", {"tag": "c"}, text="one more"),
    tool_calls([("record", {"tag": "d"}), ("record", {"tag": "e"})]),
    "all recorded",
]

INTERRUPT_SCRIPT: list[Any] = [
    tool_calls([("record", {"tag": "before"}), ("approve", {"action": "deploy"})]),
    "approved and done",
]


def make_tools(workdir: Path) -> list[Tool]:
    """``record(tag)`` and ``approve(action)``; both log every execution to side_effects.log."""
    log = workdir / "side_effects.log"

    def append(line: str) -> None:
        with log.open("a", encoding="utf-8") as handle:
            handle.write(line + "\n")

    @tool
    def record(tag: str) -> str:
        """Record a tag."""
        append(tag)
        return f"recorded {tag}"

    @tool
    def approve(action: str, context: ToolContext) -> str:
        """Ask a human to approve an action."""
        append(f"approve-start {action}")
        verdict = context.interrupt("approval", reason={"action": action})
        append(f"approve-done {action} {verdict}")
        return f"{action}: {verdict}"

    return [record, approve]


def build(workdir: Path, script: list[Any], checkpointing: bool) -> Agent:
    return Agent(model=ScriptedModel(script, stateful=True), tools=make_tools(workdir), checkpointing=checkpointing)


def write_final(workdir: Path, agent: Agent, result: Any) -> None:
    final = {
        "stop_reason": result.stop_reason,
        "messages": agent.messages,
        "metrics": result.metrics.to_dict(),
    }
    (workdir / "final.json").write_text(json.dumps(final), encoding="utf-8")


def main(argv: list[str]) -> int:
    mode, workdir = argv[0], Path(argv[1])
    if mode == "first":
        cycle, position = int(argv[2]), argv[3]
        agent = build(workdir, SCRIPT, checkpointing=True)
        result = agent("record everything")
        while result.checkpoint is not None and (result.checkpoint.cycle_index, result.checkpoint.position) != (cycle, position):
            result = agent({"checkpointResume": {"checkpoint": result.checkpoint.to_dict()}})
        if result.checkpoint is None:
            print(f"no checkpoint at cycle {cycle} {position}", file=sys.stderr)
            return 1
        (workdir / "checkpoint.json").write_text(json.dumps(result.checkpoint.to_dict()), encoding="utf-8")
    elif mode == "resume":
        agent = build(workdir, SCRIPT, checkpointing=True)
        checkpoint = json.loads((workdir / "checkpoint.json").read_text(encoding="utf-8"))
        result = agent({"checkpointResume": {"checkpoint": checkpoint}})
        while result.checkpoint is not None:
            result = agent([{"checkpointResume": {"checkpoint": json.loads(json.dumps(result.checkpoint.to_dict()))}}])
        write_final(workdir, agent, result)
    elif mode == "straight":
        agent = build(workdir, SCRIPT, checkpointing=False)
        write_final(workdir, agent, agent("record everything"))
    elif mode == "interrupt-first":
        agent = build(workdir, INTERRUPT_SCRIPT, checkpointing=False)
        result = agent("deploy, with approval")
        (workdir / "snapshot.json").write_text(json.dumps(agent.take_snapshot(preset="all").to_dict()), encoding="utf-8")
        interrupts = [item.to_dict() for item in result.interrupts]
        (workdir / "interrupts.json").write_text(
            json.dumps({"stop_reason": result.stop_reason, "interrupts": interrupts}), encoding="utf-8"
        )
    elif mode == "interrupt-answer":
        agent = build(workdir, INTERRUPT_SCRIPT, checkpointing=False)
        agent.load_snapshot(json.loads((workdir / "snapshot.json").read_text(encoding="utf-8")))
        pending = json.loads((workdir / "interrupts.json").read_text(encoding="utf-8"))["interrupts"]
        result = agent([{"interruptResponse": {"interruptId": item["id"], "response": "granted"}} for item in pending])
        write_final(workdir, agent, result)
    else:
        print(f"unknown mode {mode!r}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
