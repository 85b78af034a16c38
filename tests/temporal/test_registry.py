"""The agent registry and the import boundary of the temporal extra."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tether import Agent, ConfigurationError, ScriptedModel, tool
from tether.multiagent import Graph, GraphBuilder, Swarm
from tether.temporal import AgentRegistry


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def test_factories_are_found_by_name_and_errors_name_the_agent() -> None:
    registry = AgentRegistry()

    @registry.register("echo")
    def echo(config: dict[str, object]) -> Agent:
        return Agent(model=ScriptedModel([str(config.get("reply", "hi"))]), name="echo")

    assert registry.names == ["echo"] and "echo" in registry
    assert registry.build("echo", {"reply": "yo"}).name == "echo"
    with pytest.raises(ConfigurationError, match=r"no factory named 'nope'.*known: echo"):
        registry.build("nope")
    with pytest.raises(ConfigurationError, match="already registered"):
        registry.register("echo", echo)
    with pytest.raises(ConfigurationError, match="config of agent 'echo'"):
        registry.build("echo", {"reply": object()})
    registry.register("broken", lambda config: "not an agent")  # type: ignore[arg-type,return-value]
    with pytest.raises(ConfigurationError, match="'broken' returned str, not an Agent"):
        registry.build("broken")
    with pytest.raises(ConfigurationError, match="without '/'"):
        registry.register("a/b", echo)


def test_nested_names_resolve_agent_tools_graph_nodes_and_swarm_members() -> None:
    registry = AgentRegistry()
    seen: list[object] = []

    def researcher() -> Agent:
        return Agent(model=ScriptedModel(["found"]), name="researcher", system_prompt="Research.")

    @registry.register("lead")
    def lead(config: dict[str, object]) -> Agent:
        seen.append(config)
        return Agent(model=ScriptedModel(["ok"]), tools=[researcher(), add], name="lead")

    @registry.register_graph("pipeline")
    def pipeline(config: dict[str, object]) -> Graph:
        builder = GraphBuilder()
        builder.add_node(researcher(), "research")
        builder.add_node(str.upper, "shout")
        builder.add_edge("research", "shout")
        return builder.build()

    @registry.register_swarm("team")
    def team(config: dict[str, object]) -> Swarm:
        return Swarm([researcher(), Agent(model=ScriptedModel(["w"]), name="writer")])

    child = registry.build("lead/researcher", {"k": 1})
    assert (child.name, child.system_prompt) == ("researcher", "Research.")
    assert seen == [{"k": 1}]  # the parent's factory, with the run's config
    assert registry.build("pipeline/research").name == "researcher"
    member = registry.build("team/writer")
    assert member.name == "writer" and "handoff_to_agent" in member.tool_registry.names
    assert isinstance(registry.build_graph("pipeline"), Graph) and isinstance(registry.build_swarm("team"), Swarm)
    assert registry.names == ["lead", "pipeline", "team"]
    for name, message in [
        ("lead/add", "agent 'lead' has no agent tool named 'add'"),
        ("lead/nope", "agent 'lead' has no agent tool named 'nope'"),
        ("pipeline/nope", "the graph has no node 'nope'"),
        ("pipeline/shout", "'pipeline/shout' names a method_descriptor, not an agent"),
        ("team/nope", "the swarm has no member 'nope'"),
        ("pipeline", "'pipeline' names a Graph, not an agent"),
        ("lead/researcher/deeper", "agent 'lead/researcher' has no agent tool named 'deeper'"),
    ]:
        with pytest.raises(ConfigurationError, match=re.escape(message)):
            registry.build(name)
    with pytest.raises(ConfigurationError, match="'lead' names an Agent, not a graph"):
        registry.build_graph("lead")


def test_import_tether_does_not_import_temporalio() -> None:
    code = "import sys, tether; assert 'temporalio' not in sys.modules, 'temporalio imported'"
    subprocess.run([sys.executable, "-c", code], check=True)
