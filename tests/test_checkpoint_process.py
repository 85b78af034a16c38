"""Checkpoints and interrupts across real processes: stop in one, resume in a fresh one.

Each process builds its agent from scratch (``tests/_checkpoint_worker.py``); only the JSON
files in the work directory connect them. Every tool execution appends a line to a side-effect
log, so "exactly once per tool call" is counted, not assumed.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests import _checkpoint_worker as worker

WORKER = Path(worker.__file__).resolve()


def run_worker(*args: Any) -> None:
    proc = subprocess.run([sys.executable, str(WORKER), *map(str, args)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


def side_effects(workdir: Path) -> list[str]:
    path = workdir / "side_effects.log"
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


def straight_run(workdir: Path) -> dict[str, Any]:
    """The same run in this process, without checkpoints."""
    workdir.mkdir()
    assert worker.main(["straight", str(workdir)]) == 0
    return json.loads((workdir / "final.json").read_text(encoding="utf-8"))  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("cycle", "position", "done_in_a"),
    [(1, "after_model", ["a", "b"]), (2, "after_tools", ["a", "b", "c", "d", "e"])],
)
def test_checkpoint_in_process_a_resumes_in_process_b(tmp_path: Path, cycle: int, position: str, done_in_a: list[str]) -> None:
    work = tmp_path / "work"
    work.mkdir()
    run_worker("first", work, cycle, position)
    checkpoint = json.loads((work / "checkpoint.json").read_text(encoding="utf-8"))
    assert (checkpoint["cycle_index"], checkpoint["position"]) == (cycle, position)
    assert sorted(side_effects(work)) == done_in_a  # process A ran exactly the tools before the checkpoint

    run_worker("resume", work)
    effects = side_effects(work)
    assert Counter(effects) == Counter("abcde")  # every tool call ran exactly once across both processes

    final = json.loads((work / "final.json").read_text(encoding="utf-8"))
    plain = straight_run(tmp_path / "plain")
    assert final["stop_reason"] == plain["stop_reason"] == "end_turn"
    assert final["messages"] == plain["messages"]
    assert final["messages"][-1] == {"role": "assistant", "content": [{"text": "all recorded"}]}
    # metrics cover the whole run, across both processes; `invocation` is process B's last call
    metrics = final["metrics"]
    for key in ("cycle_count", "tool_call_count", "model_call_count", "usage"):
        assert metrics[key] == plain["metrics"][key]
    assert (metrics["cycle_count"], metrics["tool_call_count"]) == (4, 5)
    assert metrics["invocation"]["cycle_count"] == 1 and metrics["invocation"]["tool_call_count"] == 0


def test_interrupt_snapshot_in_process_a_is_answered_in_process_b(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    run_worker("interrupt-first", work)
    stopped = json.loads((work / "interrupts.json").read_text(encoding="utf-8"))
    assert stopped["stop_reason"] == "interrupt"
    assert [(i["name"], i["reason"]) for i in stopped["interrupts"]] == [("approval", {"action": "deploy"})]
    assert sorted(side_effects(work)) == ["approve-start deploy", "before"]

    run_worker("interrupt-answer", work)
    effects = side_effects(work)
    assert effects.count("before") == 1  # finished in process A, not re-run in B
    assert effects[-1] == "approve-done deploy granted"
    final = json.loads((work / "final.json").read_text(encoding="utf-8"))
    assert final["stop_reason"] == "end_turn"
    results = [block["toolResult"]["content"] for block in final["messages"][-2]["content"]]
    assert results == [[{"text": "recorded before"}], [{"text": "deploy: granted"}]]
    assert final["messages"][-1]["content"] == [{"text": "approved and done"}]
    metrics = final["metrics"]  # counted across both processes
    assert (metrics["cycle_count"], metrics["tool_call_count"], metrics["usage"]["total_tokens"]) == (2, 2, 30)
    assert (metrics["invocation"]["cycle_count"], metrics["invocation"]["tool_call_count"]) == (1, 1)
