"""A Strands Graph with the provider: its state (Strands' ``serialize_state``) is an ordinary Tether
run, written after every node; killed inside a node and started again, the same program resumes
from that node and prints what the uninterrupted program prints, the nodes completed before the
kill not run again."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from strands import Agent, ToolContext, tool
from strands.hooks import BeforeNodeCallEvent
from strands.multiagent import GraphBuilder, Swarm

from tether.strands.executor import idempotency_key
from tether.strands.session_manager import TetherSessionManager

from .conftest import PROGRAMS, answered, kill_at, log_of, open_store, program_env, run_program, url_of

sys.path.insert(0, str(PROGRAMS))
from _program_kit import ScriptModel


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


TEAM_POINTS = [
    ("swarm", "tool:find_order"),
    ("swarm", "model:triage:2"),  # the handoff recorded, the node not finished: handed off again
    ("swarm", "ended:triage"),  # the node's turn ended, the swarm's state not yet stored: its answer handed back
    ("swarm", "tool:refund"),
    ("swarm", "tool:notify"),
    ("swarm", "model:billing:2"),
    ("graph", "tool:search"),
    ("graph", "ended:research"),
    ("graph", "model:write:1"),
    ("graph", "tool:publish"),
    ("graph", "model:write:2"),
]
TEAM_RUNS = {"swarm": ("ticket-1", "default_swarm"), "graph": ("report-1", "default_graph")}


@pytest.fixture(scope="module")
def team_expected(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Each team program's output without the provider (one run each for the module)."""
    where = tmp_path_factory.mktemp("plain")
    return {kind: run_program("team.py", kind, "unused", "--plain", env=program_env(TRIP_LOG=str(where / kind))) for kind in TEAM_RUNS}


@pytest.mark.parametrize(
    "kind,point,backend",
    [(kind, point, "sqlite") for kind, point in TEAM_POINTS]
    + [("swarm", "model:triage:2", "postgres"), ("graph", "tool:publish", "postgres")],
)
def test_killed_inside_a_node_its_recorded_tools_do_not_run_again(
    kind: str, point: str, backend: str, team_expected: dict[str, str], tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    store = url_of(request.getfixturevalue("pg_conninfo")) if backend == "postgres" else str(tmp_path / "runs.db")
    log = tmp_path / "effects.jsonl"
    env = program_env(TRIP_LOG=str(log))
    kill_at(point, ["team.py", kind, store], env, tmp_path / "ready")
    session, multi = TEAM_RUNS[kind]
    stored = open_store(store)
    recorded: set[str] = set()
    for run in stored.list_runs():
        if run.run_id.startswith(f"strands.{session}.multiagent-{multi}--"):
            loaded = stored.load(run.run_id)
            assert loaded is not None
            recorded |= {f"{run.run_id}/{ident}" for ident in set(loaded.results) | answered(loaded.messages)}
    stored.close()
    before = Counter(entry["key"] for entry in log_of(log))
    cut = log_of(log)[-1]["key"] if point.startswith("tool:") else None  # the call the kill cut off

    assert run_program("team.py", kind, store, env=env) == team_expected[kind], point

    after = Counter(entry["key"] for entry in log_of(log))
    for key, count in after.items():
        if key in recorded:
            assert count == before[key], (point, key, "a recorded call ran again")
        elif key == cut:
            assert count == 2, (point, key)  # cut off inside the call: run once more, same key
        else:
            assert count == before[key] + 1 == 1, (point, key)
    stored = open_store(store)
    head = stored.head(f"strands.{session}.multiagent-{multi}")
    stored.close()
    assert head is not None and head["status"] == "finished" and head["strands"]["multi_agent"]["status"] == "completed"


@pytest.mark.parametrize("ids", [("tu-a", "tu-b"), ("tu-1", "tu-1")])
def test_parallel_graph_nodes_each_get_their_own_idempotency_keys(ids: tuple[str, str], tmp_path: Path) -> None:
    """Two entry nodes run at once and share the graph's ``invocation_state``: each tool still gets
    the key of its own node's run (it was the other node's, or none)."""
    seen: dict[str, str] = {}

    @tool(context=True)
    def work(item: str, tool_context: ToolContext) -> str:
        """Work.

        Args:
            item: The node's name.
        """
        seen[item] = idempotency_key(tool_context)
        return item

    builder = GraphBuilder()
    for name, ident in zip(("a", "b"), ids, strict=True):
        script = [{"tools": [(ident, "work", {"item": name})]}, {"text": "done"}]
        builder.add_node(Agent(name=name, model=ScriptModel(script), tools=[work], callback_handler=None), name)
        builder.set_entry_point(name)
    builder.set_max_node_executions(4)
    with TetherSessionManager("par-1", store=tmp_path / "runs.db") as manager:
        builder.set_session_manager(manager)
        assert builder.build()("go").status.value == "completed"
    assert seen == {name: f"strands.par-1.multiagent-default_graph--{name}/{ident}" for name, ident in zip(("a", "b"), ids, strict=True)}


class Dying(ScriptModel):
    """Dies (a BaseException, as a process being stopped) on its first call."""

    died = False

    async def stream(self, *args: Any, **kwargs: Any) -> Any:
        if not Dying.died:
            Dying.died = True
            raise KeyboardInterrupt
        async for event in super().stream(*args, **kwargs):
            yield event


@pytest.mark.parametrize("dies", ["a", "b"])
def test_a_resumed_graph_is_told_from_a_new_invocation_and_its_usage_accumulates(dies: str, tmp_path: Path) -> None:
    """Hooks (and the program) tell the invocation that resumes a cut-off graph from a new one
    (``manager.resumed(graph)``), also when the crash came before the graph stored a node (Strands
    then starts it over); the resumed graph's usage counts the nodes run before the crash."""

    def build() -> tuple[Any, TetherSessionManager, list[bool]]:
        builder = GraphBuilder()
        for name in ("a", "b"):
            model = (Dying if name == dies else ScriptModel)([{"text": name.upper()}] * 3)
            builder.add_node(Agent(name=name, model=model, callback_handler=None), name)
        builder.add_edge("a", "b")
        builder.set_entry_point("a")
        builder.set_max_node_executions(5)
        manager = TetherSessionManager("resume-1", store=tmp_path / "runs.db")
        graph = builder.set_session_manager(manager).build()
        seen: list[bool] = []
        graph.hooks.add_callback(BeforeNodeCallEvent, lambda event: seen.append(manager.resumed(event.source)))
        return graph, manager, seen

    Dying.died = False
    graph, manager, seen = build()
    with pytest.raises(KeyboardInterrupt):
        graph("go")
    assert seen == ["a", "b"].index(dies) * [False] + [False] and not manager.resumed(graph)
    manager.close()

    graph, manager, seen = build()
    result = graph("go")
    assert [node.node_id for node in result.execution_order] == ["a", "b"]
    assert result.accumulated_usage["totalTokens"] == 30  # with b cut off: node a's 15 from the first process
    assert seen == ([True, True] if dies == "a" else [True]) and manager.resumed(graph)  # b cut off: only b ran again
    graph("again")
    assert seen[-2:] == [False, False] and not manager.resumed(graph)
    manager.close()


def _team(kind: str, dies: bool, manager: TetherSessionManager | None) -> tuple[Any, dict[str, Agent]]:
    """A graph (a -> b) or a swarm (a hands off to b) whose node b's model dies on its first call if ``dies``."""
    if kind == "graph":
        scripts = {"a": [{"text": "A"}], "b": [{"text": "B"}]}
    else:
        scripts = {
            "a": [{"tools": [("h-1", "handoff_to_agent", {"agent_name": "b", "message": "yours"})]}, {"text": "handed"}],
            "b": [{"text": "B"}],
        }
    agents = {
        name: Agent(name=name, model=(Dying if dies and name == "b" else ScriptModel)(script), callback_handler=None)
        for name, script in scripts.items()
    }
    if kind == "swarm":
        return Swarm(list(agents.values()), entry_point=agents["a"], max_handoffs=3, session_manager=manager), agents
    builder = GraphBuilder()
    for name, agent in agents.items():
        builder.add_node(agent, name)
    builder.add_edge("a", "b")
    builder.set_entry_point("a")
    builder.set_max_node_executions(5)
    if manager is not None:
        builder.set_session_manager(manager)
    return builder.build(), agents


def _seen(kind: str, result: Any, agents: dict[str, Agent]) -> dict[str, Any]:
    """What a program can read after the run: the result's structure, each node agent's conversation."""
    seen: dict[str, Any] = {name: [(m["role"], m["content"]) for m in agent.messages] for name, agent in agents.items()}
    if kind == "graph":
        seen["structure"] = (
            result.total_nodes,
            [node.node_id for node in result.entry_points],
            [(source.node_id, target.node_id) for source, target in result.edges],
        )
    return seen


@pytest.mark.parametrize("kind", ["graph", "swarm"])
def test_a_resumed_team_reports_its_structure_and_its_finished_nodes_keep_their_conversations(kind: str, tmp_path: Path) -> None:
    """Resumed after node b was cut off, the result reports the graph's nodes, entry points and edges
    (Strands' own restore leaves them empty), and node a, which finished before the crash and does
    not run again, holds the conversation its turn left, as uninterrupted."""
    team, agents = _team(kind, False, None)
    expected = _seen(kind, team("go"), agents)

    Dying.died = False
    manager = TetherSessionManager("team-1", store=tmp_path / "runs.db")
    team, agents = _team(kind, True, manager)
    with pytest.raises(KeyboardInterrupt):
        team("go")
    manager.close()

    manager = TetherSessionManager("team-1", store=tmp_path / "runs.db")
    team, agents = _team(kind, True, manager)
    assert _seen(kind, team("go"), agents) == expected
    assert manager.resumed(team)
    manager.close()
