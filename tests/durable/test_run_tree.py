"""A run's tree of nested runs: deleted with it, and never adopted by a new run of the same id.

A multi-agent run (an agent using agents as tools, a graph, a swarm) stores each child as a run
of its own, with a deterministic id (``child_run_id``) and its parent in ``parent_run_id``.
``delete_run`` takes the whole tree; and a child whose head records another incarnation of its
parent (left behind by an older Tether, a copied store, a crash) is stale: a new run of the
parent id runs the child afresh instead of reading its old answer. On every store.
"""

from __future__ import annotations

from typing import Any

import pytest

from tether import Agent, tool
from tether.durable import MemoryStore, RunStore
from tether.errors import RunLockedError
from tether.models import ScriptedModel, tool_call
from tether.multiagent import GraphBuilder, Swarm
from tether.tools.context import ToolContext

from .._texts import first_user_text, last_tool_text


def researcher() -> Agent:
    """Answers ``researched: <its task>``; counts nothing, so a stale answer shows as the old task."""
    return Agent(model=ScriptedModel([lambda m: f"researched: {first_user_text(m)}"] * 4, stateful=True), name="researcher")


def lead(store: RunStore, child: Agent | None = None) -> Agent:
    """Asks the researcher about ``topic <its task>``, then answers with what it found."""
    script: list[Any] = [
        lambda m: tool_call("researcher", {"input": f"topic {first_user_text(m)}"}),
        lambda m: f"lead: {last_tool_text(m)}",
    ]
    return Agent(model=ScriptedModel(script, stateful=True), tools=[child or researcher()], name="lead", store=store)


def graph_of(store: RunStore) -> Any:
    builder = GraphBuilder()
    builder.add_node(researcher(), "research")
    builder.set_entry_point("research")
    return builder.build(store=store)


def outer_graph(store: RunStore) -> Any:
    """A graph whose node ``inner`` is a graph, and whose node ``lead`` uses an agent tool."""
    inner = GraphBuilder()
    inner.add_node(researcher(), "research")
    inner.set_entry_point("research")
    builder = GraphBuilder()
    builder.add_node(inner.build(), "inner")
    builder.add_node(lead(store), "lead")
    builder.add_edge("inner", "lead")
    builder.set_entry_point("inner")
    return builder.build(store=store)


def swarm_of(store: RunStore) -> Swarm:
    return Swarm([researcher()], store=store)


def ids(store: RunStore) -> set[str]:
    return {run.run_id for run in store.list_runs()}


def copy_run(source: RunStore, target: RunStore, run_id: str, *, legacy: bool = False) -> None:
    """Write ``source``'s run ``run_id`` into ``target`` as it is (a copied store, or rows an older
    Tether left behind), as a new run at revision 1; ``legacy``: as written before incarnations."""
    stored = source.load(run_id)
    assert stored is not None
    head = {**stored.head, "rev": 1}
    if legacy:
        head.pop("incarnation", None)
        head.pop("parent_incarnation", None)
    target.write(run_id, head, stored.messages, stored.results)


def asking_graph(log: list[str], store: RunStore) -> Any:
    """One node, ``ask``, whose tool asks a human before it answers."""

    @tool
    def approve(ctx: ToolContext) -> str:
        """Ask a human."""
        log.append(f"approved: {ctx.interrupt('approval', 'ok?')}")
        return "approved"

    builder = GraphBuilder()
    model = ScriptedModel([tool_call("approve", {}), "asked"], stateful=True)
    builder.add_node(Agent(model=model, tools=[approve], name="ask"), "ask")
    builder.set_entry_point("ask")
    return builder.build(store=store)


# -- deletion takes the tree -------------------------------------------------------------------


def test_deleting_an_agent_run_deletes_its_agent_tool_children(store: RunStore) -> None:
    assert str(lead(store)("ALPHA", run_id="daily")) == "lead: researched: topic ALPHA"
    Agent(model=ScriptedModel(["kept"]), store=store)("hi", run_id="daily.v2")  # a look-alike id, not a child
    children = {run.run_id for run in store.list_runs() if run.parent_run_id == "daily"}
    assert len(children) == 1 and all(c.startswith("daily.tooluse") for c in children)
    store.delete_run("daily")
    assert ids(store) == {"daily.v2"}
    for child in children:
        assert store.head(child) is None and store.load(child) is None


def test_deleting_a_graph_deletes_node_runs_nested_graphs_and_their_agent_tools_two_deep(store: RunStore) -> None:
    result = outer_graph(store)("ALPHA", run_id="g")
    assert result.status == "completed"
    runs = {run.run_id: run.parent_run_id for run in store.list_runs()}
    tool_child = next(r for r, p in runs.items() if p == "g.lead:1")
    assert runs == {
        "g": None,
        "g.inner:1": "g",
        "g.inner:1.research:1": "g.inner:1",
        "g.lead:1": "g",
        tool_child: "g.lead:1",
    }
    store.delete_run("g")
    assert ids(store) == set()


def test_deleting_a_swarm_deletes_its_member_runs(store: RunStore) -> None:
    assert str(swarm_of(store)("ALPHA", run_id="s")) == "researched: ALPHA"
    assert ids(store) == {"s", "s.researcher:1"}
    store.delete_run("s")
    assert ids(store) == set()


def test_deleting_a_child_deletes_its_own_tree_and_leaves_the_parent(store: RunStore) -> None:
    outer_graph(store)("ALPHA", run_id="g")
    store.delete_run("g.inner:1")
    assert ids(store) == {"g", "g.lead:1", *(r.run_id for r in store.list_runs() if r.parent_run_id == "g.lead:1")}
    assert "g.inner:1.research:1" not in ids(store)


def test_a_tree_with_a_live_owner_anywhere_is_not_deleted_at_all(store: RunStore) -> None:
    outer_graph(store)("ALPHA", run_id="g")
    before = ids(store)
    with store.lease("g.inner:1.research:1"):
        with pytest.raises(RunLockedError):
            store.delete_run("g")
        assert ids(store) == before  # nothing deleted: one transaction, after every lease is taken
    store.delete_run("g")
    assert ids(store) == set()


# -- a new run of a deleted id runs its children afresh ------------------------------------------


def test_rerunning_a_deleted_agent_run_with_a_new_task_runs_its_agent_tool_again(store: RunStore) -> None:
    assert str(lead(store)("ALPHA", run_id="daily")) == "lead: researched: topic ALPHA"
    store.delete_run("daily")
    assert str(lead(store)("BETA", run_id="daily")) == "lead: researched: topic BETA"


def test_rerunning_a_deleted_graph_run_with_a_new_task_runs_its_nodes_again(store: RunStore) -> None:
    assert graph_of(store)("ALPHA", run_id="g").results["research"].text == "researched: ALPHA"
    store.delete_run("g")
    assert graph_of(store)("BETA", run_id="g").results["research"].text == "researched: BETA"


def test_rerunning_a_deleted_swarm_run_with_a_new_task_runs_its_members_again(store: RunStore) -> None:
    assert str(swarm_of(store)("ALPHA", run_id="s")) == "researched: ALPHA"
    store.delete_run("s")
    assert str(swarm_of(store)("BETA", run_id="s")) == "researched: BETA"


@pytest.mark.parametrize("kind", ["agent tool", "graph node", "nested graph", "swarm member"])
def test_a_stale_child_left_in_the_store_is_never_adopted(store: RunStore, kind: str) -> None:
    """Child rows of an earlier incarnation of the parent id (what an older Tether's delete, a
    crash or a copied store leaves) are replaced by a fresh child run, never read."""
    old = MemoryStore()
    if kind == "agent tool":
        lead(old)("ALPHA", run_id="p")
    elif kind == "graph node":
        graph_of(old)("ALPHA", run_id="p")
    elif kind == "nested graph":
        outer_graph(old)("ALPHA", run_id="p")
    else:
        swarm_of(old)("ALPHA", run_id="p")
    for run in old.list_runs():
        if run.run_id != "p":
            copy_run(old, store, run.run_id)  # the children, without their parent
    stale = ids(store)
    if kind == "agent tool":
        assert str(lead(store)("BETA", run_id="p")) == "lead: researched: topic BETA"
    elif kind == "graph node":
        assert graph_of(store)("BETA", run_id="p").results["research"].text == "researched: BETA"
    elif kind == "nested graph":
        assert outer_graph(store)("BETA", run_id="p").status == "completed"
        inner = store.load("p.inner:1.research:1")
        assert inner is not None and inner.messages[-1]["content"][0]["text"] == "researched: BETA"
    else:
        assert str(swarm_of(store)("BETA", run_id="p")) == "researched: BETA"
    assert stale <= ids(store)  # the same ids, now of the new incarnation
    parent = store.head("p")
    assert parent is not None
    for run_id in stale:
        head = store.head(run_id)
        assert head is not None and head.get("parent_incarnation") is not None


def test_a_child_of_a_run_written_before_incarnations_is_still_resumed(store: RunStore) -> None:
    """Heads without an incarnation (stored before it existed) are legacy: a legacy parent keeps
    adopting its children, so a run in flight across the upgrade resumes as before (here: the
    node's run waits for an answer; a fresh node run would ask again instead of taking it)."""
    log: list[str] = []
    old = MemoryStore()
    first = asking_graph(log, old)("refund", run_id="g")
    assert first.status == "interrupted"
    for run in old.list_runs():
        copy_run(old, store, run.run_id, legacy=True)
    assert all("incarnation" not in (store.head(run_id) or {"incarnation": 1}) for run_id in ids(store))
    done = asking_graph(log, store).resume("g", [{"interruptResponse": {"interruptId": i.id, "response": "yes"}} for i in first.interrupts])
    assert done.status == "completed" and log == ["approved: yes"]
    assert str(done.results["ask"]) == "asked"
