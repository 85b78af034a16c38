"""`Runnable`: an agent, a graph and a swarm are one shape to the server, the Temporal registry
and the CLI (their kind, their run and resume streams, their stored runs, their nested parts)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tether import Agent
from tether.durable import MemoryStore
from tether.errors import ConfigurationError, StateError
from tether.models import ScriptedModel
from tether.multiagent import GraphBuilder, Swarm
from tether.runnable import KINDS, Runnable, kind_of


def agent(name: str, replies: list[Any] | None = None) -> Agent:
    return Agent(model=ScriptedModel(replies or ["ok"]), name=name)


def graph() -> Any:
    builder = GraphBuilder()
    builder.add_node(agent("research"), "research")
    builder.add_node(str.upper, "shout")
    builder.add_edge("research", "shout")
    return builder.build()


def test_each_shape_is_a_runnable_of_its_kind() -> None:
    swarm = Swarm([agent("a"), agent("b")])
    assert [kind_of(agent("x")), kind_of(graph()), kind_of(swarm)] == list(KINDS)
    assert all(isinstance(r, Runnable) for r in (agent("x"), graph(), swarm))
    assert kind_of("an agent") is None and kind_of(object()) is None


def test_child_is_the_nested_part_by_name() -> None:
    lead = Agent(model=ScriptedModel(["ok"]), name="lead", tools=[agent("helper").as_tool("helper")])
    helper = lead.child("helper")
    assert isinstance(helper, Agent) and helper.name == "helper" and helper is not lead.child("helper")
    with pytest.raises(ConfigurationError, match="agent 'lead/x' has no agent tool named 'nope'"):
        lead.child("nope", "lead/x")
    assert isinstance(graph().child("research"), Agent) and graph().child("shout") is str.upper
    with pytest.raises(ConfigurationError, match="no node 'nope'"):
        graph().child("nope")
    member = Swarm([agent("a"), agent("b")]).child("b")
    assert isinstance(member, Agent) and member.name == "b"


def test_owns_state_matches_a_stored_multiagent_run_by_its_spec() -> None:
    store = MemoryStore()
    built = graph()
    built.store = store
    built("task", run_id="g1")
    head = store.head("g1")
    assert head is not None
    assert built.owns_state(head["state"]) and graph().owns_state(head["state"])
    assert not Swarm([agent("a"), agent("b")]).owns_state(head["state"])
    assert not agent("research").owns_state(head["state"])  # an agent's run keeps no spec of it


def test_resume_stream_continues_a_stored_run_for_every_kind() -> None:
    async def last(events: Any) -> Any:
        out = None
        async for event in events:
            out = event
        return out

    store = MemoryStore()
    for runnable, run_id in ((agent("solo", ["hello"]), "a1"), (graph(), "g1")):
        runnable.store = store
        first = asyncio.run(last(runnable.stream_async("go", run_id=run_id)))
        again = asyncio.run(last(runnable.resume_stream(None, run_id=run_id)))
        assert first["type"] == again["type"] == "result"
        assert str(first["result"]) == str(again["result"])  # a finished run returns its result, nothing re-run


def test_a_multiagent_run_cannot_be_cancelled() -> None:
    with pytest.raises(StateError, match="a graph run cannot be cancelled"):
        graph().cancel()
