"""Agents as tools: results, streaming with a path, interrupts across one and two levels,
usage roll-up, parallel calls, kept conversations, snapshots and durable child runs."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from tether import Agent, tool
from tether.agent_tool import STATE_KEY, AgentTool
from tether.durable import SQLiteStore
from tether.durable.ids import child_run_id
from tether.errors import ConfigurationError, LeaseLostError
from tether.models import ScriptedModel
from tether.models.scripted import tool_call, tool_calls
from tether.tools.context import ToolContext
from tether.types import Message

from ._texts import first_user_text, last_tool_text


def echo_child(name: str = "researcher", calls: int = 10) -> Agent:
    """A child answering ``found: <its task>`` in one model call."""
    script = [lambda messages: f"found: {first_user_text(messages)}" for _ in range(calls)]
    return Agent(model=ScriptedModel(script), name=name, description="Researches a topic.")


def parent_with(child: Agent | AgentTool, *inputs: str, name: str = "researcher") -> Agent:
    """A parent calling the child tool once per input (one cycle each), then answering with
    the last tool result."""
    script: list[Any] = [tool_call(name, {"input": text}) for text in inputs]
    script.append(lambda messages: f"parent: {last_tool_text(messages)}")
    return Agent(model=ScriptedModel(script, stateful=True), tools=[child], name="lead")


def answer(*pairs: tuple[str, Any]) -> list[dict[str, Any]]:
    return [{"interruptResponse": {"interruptId": ident, "response": value}} for ident, value in pairs]


# -- building -----------------------------------------------------------------------------


def test_an_agent_in_tools_becomes_a_tool_with_its_name_and_description() -> None:
    parent = Agent(tools=[echo_child()])
    assert parent.tool_names == ["researcher"]
    spec = parent.tool_registry.specs[0]
    assert spec["description"] == "Researches a topic."
    assert spec["inputSchema"]["json"]["required"] == ["input"]


def test_an_agent_without_a_name_is_refused_at_construction() -> None:
    unnamed = Agent(model=ScriptedModel(["x"]))
    with pytest.raises(ConfigurationError, match=r"tools\[1\] is an Agent without a name"):
        Agent(tools=[lambda: None, unnamed])
    with pytest.raises(ConfigurationError, match="needs a name"):
        unnamed.as_tool()
    assert unnamed.as_tool(name="helper").tool_name == "helper"
    with pytest.raises(ConfigurationError, match="not a valid tool name"):
        unnamed.as_tool(name="has space")


# -- running ------------------------------------------------------------------------------


def test_sync_call_returns_the_childs_final_text_as_the_tool_result() -> None:
    parent = parent_with(echo_child(), "tides")
    result = parent("research tides")
    assert result.stop_reason == "end_turn"
    assert str(result) == "parent: found: tides"
    assert STATE_KEY not in parent.state  # nothing left behind by a finished call


def test_async_call_and_a_fresh_conversation_per_call() -> None:
    seen: list[int] = []

    def reply(messages: list[Message]) -> str:
        seen.append(len(messages))
        return f"found: {first_user_text(messages)}"

    child = Agent(model=ScriptedModel([reply, reply]), name="researcher")
    parent = parent_with(child, "a", "b")
    result = asyncio.run(parent.invoke_async("two topics"))
    assert str(result) == "parent: found: b"
    assert seen == [1, 1]  # each call starts from an empty conversation
    assert child.messages == []  # the configured child itself never runs


def test_keep_conversation_continues_the_child_across_calls_through_the_parents_state() -> None:
    seen: list[int] = []

    def reply(messages: list[Message]) -> str:
        seen.append(len(messages))
        return f"call {len(seen)}"

    child = Agent(model=ScriptedModel([reply, reply]), name="researcher")
    parent = parent_with(child.as_tool(keep_conversation=True), "a", "b")
    snapshot_between: dict[str, Any] = {}

    def after_first(messages: list[Message]) -> Message:
        snapshot_between.update(json.loads(json.dumps(parent.state.get(STATE_KEY))))
        return tool_call("researcher", {"input": "b"})

    parent.model = ScriptedModel([tool_call("researcher", {"input": "a"}), after_first, "done"])
    assert str(parent("go")) == "done"
    assert seen == [1, 3]  # the second call saw the first call's question and answer
    kept = snapshot_between["conversations"]["researcher"]["data"]["messages"]
    assert [m["role"] for m in kept] == ["user", "assistant"]  # plain JSON in the parent's state


def test_child_events_stream_in_the_parents_stream_with_a_path_two_levels_deep() -> None:
    searcher = echo_child("searcher")
    researcher = Agent(
        model=ScriptedModel([tool_call("searcher", {"input": "deep"}), lambda m: f"summary of {last_tool_text(m)}"]),
        tools=[searcher],
        name="researcher",
    )
    parent = parent_with(researcher, "tides")

    async def collect() -> list[dict[str, Any]]:
        return [dict(event) async for event in parent.stream_async("go")]

    events = collect_events = asyncio.run(collect())
    paths = {tuple(e.get("path", ())) for e in events}
    assert paths == {(), ("researcher",), ("researcher", "searcher")}
    deltas = "".join(e["text"] for e in events if e["type"] == "text_delta" and e.get("path") == ["researcher", "searcher"])
    assert deltas == "found: deep"
    child_tools = [e["toolUse"]["name"] for e in collect_events if e["type"] == "tool_start" and e.get("path") == ["researcher"]]
    assert child_tools == ["searcher"]
    assert [e["type"] for e in events].count("result") == 1  # the children's results are not forwarded
    assert events[-1]["type"] == "result" and str(events[-1]["result"]) == "parent: summary of found: deep"


def test_usage_and_model_calls_roll_up_into_the_parent() -> None:
    parent = parent_with(echo_child(), "a", "b")  # parent: 3 model calls, child: 1 per call
    result = parent("go")
    assert result.metrics.model_call_count == 5
    assert result.metrics.usage == {"input_tokens": 50, "output_tokens": 25, "total_tokens": 75}
    assert result.metrics.invocation.usage["total_tokens"] == 75
    assert result.metrics.tool_call_count == 2  # the parent's own tool calls only


def test_a_child_that_fails_is_an_error_result_the_parent_model_reads() -> None:
    child = Agent(model=ScriptedModel([RuntimeError("model down")]), name="researcher")
    parent = parent_with(child, "x")
    result = parent("go")
    assert result.stop_reason == "end_turn"
    text = last_tool_text(parent.messages)
    assert "agent 'researcher' failed" in text and "model down" in text
    assert parent.messages[-2]["content"][0]["toolResult"]["status"] == "error"


def test_parallel_calls_of_one_child_run_at_the_same_time_on_their_own_runners() -> None:
    both_running = asyncio.Barrier(2)

    @tool
    async def lookup(topic: str) -> str:
        """Look a topic up."""
        await both_running.wait()  # returns only once both calls are inside the tool at once
        return topic.upper()

    def child_step(messages: list[Message]) -> Message:
        return tool_call("lookup", {"topic": first_user_text(messages)})

    script: list[Any] = [child_step, child_step, lambda m: f"got {last_tool_text(m)}", lambda m: f"got {last_tool_text(m)}"]
    child = Agent(model=ScriptedModel(script), tools=[lookup], name="researcher")
    parent = Agent(
        model=ScriptedModel([tool_calls([("researcher", {"input": "a"}), ("researcher", {"input": "b"})]), "both"]),
        tools=[child],
    )
    assert str(parent("go")) == "both"
    results = sorted(b["toolResult"]["content"][0]["text"] for b in parent.messages[-2]["content"])
    assert results == ["got A", "got B"]


# -- interrupts ---------------------------------------------------------------------------


def approving_child(log: list[str], name: str = "researcher") -> Agent:
    @tool
    def publish(title: str, context: ToolContext) -> str:
        """Publish, once a human approves."""
        log.append(f"ask {title}")
        verdict = context.interrupt("approve", {"title": title})
        log.append(f"publish {title}: {verdict}")
        return f"published {title} ({verdict})"

    script = [tool_call("publish", {"title": "T"}), lambda m: f"child: {last_tool_text(m)}"]
    return Agent(model=ScriptedModel(script, stateful=True), tools=[publish], name=name)


def test_a_childs_interrupt_is_the_parents_and_its_answer_resumes_the_child() -> None:
    log: list[str] = []
    parent = parent_with(approving_child(log), "write")
    stopped = parent("go")
    assert stopped.stop_reason == "interrupt"
    [interrupt] = stopped.interrupts
    assert interrupt.name == "researcher/approve" and interrupt.reason == {"title": "T"}
    done = parent(answer((interrupt.id, "yes")))
    assert done.stop_reason == "end_turn"
    assert str(done) == "parent: child: published T (yes)"
    assert log == ["ask T", "ask T", "publish T: yes"]  # the child's tool re-ran once, with the answer
    assert STATE_KEY not in parent.state
    assert done.metrics.model_call_count == 4  # 2 parent + 2 child calls, counted once


def test_the_parents_snapshot_carries_the_interrupted_child_to_a_fresh_process() -> None:
    log: list[str] = []
    parent = parent_with(approving_child(log), "write")
    interrupt = parent("go").interrupts[0]
    text = json.dumps(parent.take_snapshot(preset="all").to_dict())  # plain JSON, child included

    fresh_log: list[str] = []
    fresh = parent_with(approving_child(fresh_log), "write")
    fresh.load_snapshot(json.loads(text))
    done = fresh(answer((interrupt.id, "ok")))
    assert str(done) == "parent: child: published T (ok)"
    assert fresh_log == ["ask T", "publish T: ok"]  # the child continued: its first model call was not redone


def test_a_parallel_call_that_finishes_first_does_not_lose_the_interrupted_ones_state() -> None:
    # Two agent tools in one cycle: "quick" finishes while "researcher" stops on its
    # interrupt. Finishing a call once dropped the whole bookkeeping key when it held no other
    # entry yet, and the interrupted call then wrote its entry into the dropped dict: answering
    # restarted the child from scratch.
    log: list[str] = []
    gate = asyncio.Event()

    @tool
    async def slow_title(topic: str) -> str:
        """Wait until the quick child has finished."""
        await gate.wait()
        return topic

    def child_model(messages: list[Message]) -> Any:
        log.append("child model")
        return tool_call("publish", {"title": "T"})

    publish = approving_child(log).tool_registry.get("publish")
    script = [tool_call("slow_title", {"topic": "T"}), child_model, lambda m: f"child: {last_tool_text(m)}"]
    researcher = Agent(model=ScriptedModel(script, stateful=True), tools=[slow_title, publish], name="researcher")

    def quick_answer(messages: list[Message]) -> str:
        gate.set()
        return "quick done"

    quick = Agent(model=ScriptedModel([quick_answer]), name="quick")
    calls = tool_calls([("researcher", {"input": "a"}), ("quick", {"input": "b"})])
    parent = Agent(model=ScriptedModel([calls, "both"], stateful=True), tools=[researcher, quick], name="lead")
    stopped = parent("go")
    [interrupt] = stopped.interrupts
    assert list(parent.state.get(STATE_KEY)["calls"]) == ["tooluse_1_0"]  # the interrupted call's child is kept
    fresh = Agent(model=ScriptedModel([calls, "both"], stateful=True), tools=[researcher, quick], name="lead")
    fresh.load_snapshot(parent.take_snapshot(preset="all"))
    done = fresh(answer((interrupt.id, "yes")))
    assert str(done) == "both"
    assert log == ["child model", "ask T", "ask T", "publish T: yes"]  # the child continued where it stopped


def test_interrupts_cross_two_levels() -> None:
    log: list[str] = []
    middle = Agent(
        model=ScriptedModel([tool_call("editor", {"input": "check"}), lambda m: f"middle: {last_tool_text(m)}"], stateful=True),
        tools=[approving_child(log, "editor")],
        name="researcher",
    )
    parent = parent_with(middle, "write")
    stopped = parent("go")
    [interrupt] = stopped.interrupts
    assert interrupt.name == "researcher/editor/approve" and interrupt.reason == {"title": "T"}
    text = json.dumps(parent.take_snapshot(preset="all").to_dict())
    fresh = parent_with(
        Agent(
            model=ScriptedModel([tool_call("editor", {"input": "check"}), lambda m: f"middle: {last_tool_text(m)}"], stateful=True),
            tools=[approving_child(log, "editor")],
            name="researcher",
        ),
        "write",
    )
    fresh.load_snapshot(json.loads(text))
    done = fresh(answer((interrupt.id, "fine")))
    assert str(done) == "parent: middle: child: published T (fine)"
    assert log == ["ask T", "ask T", "publish T: fine"]


# -- durable nesting ----------------------------------------------------------------------


def test_with_a_store_each_call_is_a_child_run_named_after_the_parent_and_the_tool_use(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "runs.db")
    parent = parent_with(echo_child(), "a", "b")
    parent.store = store
    result = parent("go", run_id="lead-1")
    assert str(result) == "parent: found: b"
    ids = [block["toolUse"]["toolUseId"] for m in parent.messages for block in m["content"] if "toolUse" in block]
    runs = {summary.run_id: summary for summary in store.list_runs()}
    assert set(runs) == {"lead-1", *(child_run_id("lead-1", i) for i in ids)}
    for ident in ids:
        child = runs[child_run_id("lead-1", ident)]
        assert child.parent_run_id == "lead-1" and child.status == "finished"
    stored = store.load(child_run_id("lead-1", ids[1]))
    assert stored is not None and stored.messages[-1]["content"] == [{"text": "found: b"}]


def test_a_durable_childs_interrupt_is_answered_through_the_parent_in_a_fresh_agent(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "runs.db")
    log: list[str] = []
    parent = parent_with(approving_child(log), "write")
    parent.store = store
    interrupt = parent("go", run_id="lead").interrupts[0]
    calls = parent.state.get(STATE_KEY)["calls"]
    [(tool_use_id, entry)] = calls.items()
    assert entry["run_id"] == child_run_id("lead", tool_use_id) and "snapshot" not in entry  # the parent only names it

    fresh = parent_with(approving_child(log), "write")
    fresh.store = store
    done = fresh.resume("lead", answer((interrupt.id, "go ahead")))
    assert str(done) == "parent: child: published T (go ahead)"
    assert log == ["ask T", "ask T", "publish T: go ahead"]
    child = store.load(child_run_id("lead", tool_use_id))
    assert child is not None and child.head["status"] == "finished"


class Died(BaseException):
    """Stands for the process dying inside a child's tool (nothing catches it, nothing is written)."""


def test_a_childs_non_idempotent_call_in_doubt_after_a_crash_is_asked_through_the_parent(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "runs.db")
    effects: list[str] = []

    def build(die: bool) -> Agent:
        @tool(idempotent=False)
        def charge(amount: int, context: ToolContext) -> str:
            """Charge a card."""
            effects.append(context.idempotency_key)
            if die:
                raise Died
            return f"charged {amount}"

        script = [tool_call("charge", {"amount": 5}, tool_use_id="c1"), lambda m: f"child: {last_tool_text(m)}"]
        child = Agent(model=ScriptedModel(script, stateful=True), tools=[charge], name="billing")
        parent = parent_with(child, "bill", name="billing")
        parent.store = store
        return parent

    with pytest.raises(Died):
        build(die=True)("go", run_id="shop")
    stopped = build(die=False).resume("shop")
    [interrupt] = stopped.interrupts
    assert interrupt.name == "billing/tether.in_doubt"
    assert interrupt.reason["idempotency_key"] == effects[0]  # type: ignore[index]
    fresh = build(die=False)
    done = fresh.resume("shop", answer((interrupt.id, "rerun")))
    assert str(done) == "parent: child: charged 5"
    assert effects == [effects[0], effects[0]]  # re-run once, by decision, with the same key
    [call] = [u for u in fresh.messages[1]["content"] if "toolUse" in u]
    assert effects[0] == f"{child_run_id('shop', call['toolUse']['toolUseId'])}/c1"


# -- checkpoints --------------------------------------------------------------------------


def checkpointed(log: list[str], store: SQLiteStore | None = None) -> Agent:
    """A parent (checkpointing) calling a child (checkpointing) and a plain tool in one cycle."""

    @tool
    def lookup(topic: str) -> str:
        """Look a topic up."""
        log.append(f"lookup {topic}")
        return topic.upper()

    @tool
    def note(text: str) -> str:
        """Take a note."""
        log.append(f"note {text}")
        return "noted"

    def child_first(messages: list[Message]) -> Message:
        log.append("child model 1")
        return tool_call("lookup", {"topic": first_user_text(messages)})

    def child_last(messages: list[Message]) -> str:
        log.append("child model 2")
        return f"found {last_tool_text(messages)}"

    child = Agent(model=ScriptedModel([child_first, child_last], stateful=True), tools=[lookup], name="researcher", checkpointing=True)
    script: list[Any] = [
        tool_calls([("note", {"text": "start"}), ("researcher", {"input": "tides"})]),
        lambda m: "parent: " + ", ".join(str(b["toolResult"]["content"][0]["text"]) for b in m[-1]["content"]),
    ]
    return Agent(model=ScriptedModel(script, stateful=True), tools=[note, child], checkpointing=True, store=store)


def test_a_childs_checkpoint_pauses_the_parent_whose_checkpoint_carries_it_to_fresh_agents() -> None:
    log: list[str] = []
    result = checkpointed(log)("go")
    carried = 0
    while result.stop_reason == "checkpoint":
        assert result.checkpoint is not None
        text = json.dumps(result.checkpoint.to_dict())  # plain JSON: a fresh process could resume it
        carried += "checkpointResume" not in text and '"tether.agent_tools"' in text
        fresh = checkpointed(log)  # a new parent and a new child each time
        result = fresh({"checkpointResume": {"checkpoint": json.loads(text)}})
    assert str(result) == "parent: noted, found TIDES"
    assert carried == 2  # the child paused twice (after its model call, after its tools): so did the parent
    assert log == ["note start", "child model 1", "lookup tides", "child model 2"]  # nothing redone
    assert result.metrics.model_call_count == 4


def test_a_durable_childs_checkpoint_pauses_the_parent_and_resume_continues_both(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "runs.db")
    log: list[str] = []
    result = checkpointed(log, store)("go", run_id="cp")
    statuses: set[str] = set()
    while result.stop_reason == "checkpoint":
        statuses.update(s.status for s in store.list_runs() if s.parent_run_id == "cp")
        result = checkpointed(log, store).resume("cp")
    assert str(result) == "parent: noted, found TIDES"
    assert "paused" in statuses  # the child run itself paused at its checkpoints
    assert log == ["note start", "child model 1", "lookup tides", "child model 2"]
    assert all(s.status == "finished" for s in store.list_runs())


def test_cancelling_the_parent_cancels_the_running_child() -> None:
    holder: list[Agent] = []
    seen: list[str] = []

    @tool
    def slow_part(context: ToolContext) -> str:
        """A step during which the user cancels the whole run."""
        holder[0].cancel()  # as from another thread: the parent is running
        return "part done"

    def child_step(messages: list[Message]) -> Message:
        seen.append("child model 1")
        return tool_call("slow_part", {})

    def child_more(messages: list[Message]) -> str:
        seen.append("child model 2")  # must not happen: the child was cancelled
        return "never"

    child = Agent(model=ScriptedModel([child_step, child_more]), tools=[slow_part], name="researcher")
    parent = parent_with(child, "x")
    holder.append(parent)
    result = parent("go")
    assert result.stop_reason == "cancelled"
    assert seen == ["child model 1"]
    assert "was cancelled" in last_tool_text(parent.messages)
    assert not parent._children  # no runner is left registered


def test_a_durable_interrupt_two_levels_deep_resumes_through_fresh_agents(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "runs.db")
    log: list[str] = []

    def build() -> Agent:
        middle = Agent(
            model=ScriptedModel([tool_call("editor", {"input": "check"}), lambda m: f"middle: {last_tool_text(m)}"], stateful=True),
            tools=[approving_child(log, "editor")],
            name="researcher",
        )
        parent = parent_with(middle, "write")
        parent.store = store
        return parent

    [interrupt] = build()("go", run_id="top").interrupts
    assert interrupt.name == "researcher/editor/approve"
    runs = {s.run_id: s for s in store.list_runs()}
    [middle_id] = [r for r, s in runs.items() if s.parent_run_id == "top"]
    [editor_id] = [r for r, s in runs.items() if s.parent_run_id == middle_id]
    assert middle_id.startswith("top.") and editor_id.startswith(middle_id + ".")
    assert {runs[i].status for i in ("top", middle_id, editor_id)} == {"interrupted"}
    done = build().resume("top", answer((interrupt.id, "fine")))
    assert str(done) == "parent: middle: child: published T (fine)"
    assert log == ["ask T", "ask T", "publish T: fine"]
    assert {s.status for s in store.list_runs()} == {"finished"}


def test_a_child_run_fenced_off_stops_the_parent_with_lease_lost(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "runs.db")
    ran: list[str] = []

    @tool
    def first(context: ToolContext) -> str:
        """Runs, then an operator takes the child run over."""
        ran.append("first")
        assert context.run_id is not None
        store.break_lease(context.run_id)  # `tether unlock` of the child run while its tool runs
        return "ok"

    @tool
    def second() -> str:
        """Must never run: the child's lease is lost."""
        ran.append("second")
        return "ok"

    child = Agent(model=ScriptedModel([tool_call("first"), tool_call("second"), "done"]), tools=[first, second], name="researcher")
    parent = parent_with(child, "x")
    parent.store = store
    with pytest.raises(LeaseLostError):  # not an error result the parent's model would read
        parent("go", run_id="boss")
    assert ran == ["first"]


def test_the_old_import_paths_name_the_same_objects() -> None:
    import tether.multiagent
    import tether.multiagent.agent_tool as old

    assert tether.multiagent.AgentTool is AgentTool and old.AgentTool is AgentTool and old.STATE_KEY == STATE_KEY
