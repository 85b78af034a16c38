"""Programs of Strands' own documentation (``programs/docs_examples.py``: a graph, a swarm handing off
with context, agents as tools, structured output, hooks with ``AfterToolCallEvent``, the community
tools calculator, current_time, think, editor and file_read, interrupts, ``checkpointing=True``) run unchanged but for
the one line, and print with the provider what they print without it; killed after the community
tools ran and inside ``think``, the same program finishes without running the answered ones again."""

from __future__ import annotations

import json
from pathlib import Path

from .conftest import kill_at, log_of, open_store, program_env, run_program

SECTIONS = ["graph", "swarm", "tools", "structured", "hooks", "community", "files", "interrupts", "checkpoints"]


def test_the_docs_programs_print_the_same_with_the_provider(tmp_path: Path) -> None:
    expected = run_program("docs_examples.py", "unused", "--plain", env=program_env())
    assert expected.count("== ") == len(SECTIONS)
    store = str(tmp_path / "runs.db")

    assert run_program("docs_examples.py", store, env=program_env()) == expected

    runs = {run.run_id for run in open_store(store).list_runs()}
    for section in SECTIONS:
        assert any(run_id.startswith(f"strands.docs-{section}.") for run_id in runs), section
    assert "strands.docs-swarm.multiagent-default_swarm--coder" in runs  # a node's own run
    assert "strands.docs-tools.default" in runs  # the orchestrator's: each sub-agent call one tool call


def test_killed_inside_think_the_recorded_tools_do_not_run_again(tmp_path: Path) -> None:
    expected = run_program("docs_examples.py", "unused", "--plain", "community_tools", env=program_env())
    store = str(tmp_path / "runs.db")
    env = program_env()
    kill_at("model:think", ["docs_examples.py", store, "community_tools"], env, tmp_path / "ready")
    run_id = "strands.docs-community.default"
    before = open_store(store).load(run_id)
    assert before is not None
    recorded = {result["toolUseId"]: result for m in before.messages for block in m["content"] if (result := block.get("toolResult"))}
    recorded.update(before.results)
    assert {"c-1", "c-2"} <= set(recorded) and "c-3" not in recorded  # calculator and current_time answered, think cut off

    assert run_program("docs_examples.py", store, "community_tools", env=env) == expected

    after = open_store(store).load(run_id)
    assert after is not None and after.head["status"] == "finished"
    final = {result["toolUseId"]: result for m in after.messages for block in m["content"] if (result := block.get("toolResult"))}
    for ident, result in recorded.items():  # current_time's result is the time it ran: the same text, not run again
        assert json.dumps(final[ident], sort_keys=True) == json.dumps(result, sort_keys=True), ident
    steps = open_store(store).history(run_id)
    assert [m["toolUseId"] for step in steps if step.position == "resumed" for m in step.in_doubt] == ["c-3"]


def test_killed_inside_an_agent_tool_the_answered_agent_call_does_not_run_again(tmp_path: Path) -> None:
    """Agents as tools: the orchestrator's run records each sub-agent call as one tool call; killed
    inside the ``as_tool()`` editor, the research call (answered) is not made again, the editor's
    (cut off) is, once."""
    expected = run_program("docs_examples.py", "unused", "--plain", "agents_as_tools", env=program_env())
    store = str(tmp_path / "runs.db")
    log = tmp_path / "effects.jsonl"
    env = program_env(TRIP_LOG=str(log))
    kill_at("model:editor", ["docs_examples.py", store, "agents_as_tools"], env, tmp_path / "ready")
    assert len(log_of(log)) == 1

    assert run_program("docs_examples.py", store, "agents_as_tools", env=env) == expected

    assert len(log_of(log)) == 1  # research_assistant ran once in all
    steps = open_store(store).history("strands.docs-tools.default")
    assert [m["toolUseId"] for step in steps if step.position == "resumed" for m in step.in_doubt] == ["t-2"]
