"""A Strands Graph with the provider: its state (Strands' ``serialize_state``) is an ordinary Tether
run, written after every node; killed inside a node and started again, the same program resumes
from that node and prints what the uninterrupted program prints, the nodes completed before the
kill not run again."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from .conftest import kill_at, log_of, open_store, program_env, run_program


@pytest.mark.parametrize("cut", ["research", "check", "write"])
def test_a_graph_killed_inside_a_node_resumes_from_it(cut: str, tmp_path: Path) -> None:
    expected = run_program("graph.py", "unused", "--plain", env=program_env(TRIP_LOG=str(tmp_path / "plain.jsonl")))
    store = str(tmp_path / "runs.db")
    log = tmp_path / "effects.jsonl"
    env = program_env(TRIP_LOG=str(log))
    kill_at(f"model:{cut}", ["graph.py", store], env, tmp_path / "ready")

    assert run_program("graph.py", store, env=env) == expected

    calls = Counter(entry["key"] for entry in log_of(log))
    assert calls == {node: 2 if node == cut else 1 for node in ("research", "check", "write")}
    head = open_store(store).head("strands.graph-1.multiagent-default_graph")
    assert head is not None and head["status"] == "finished" and head["strands"]["multi_agent"]["status"] == "completed"
