"""Budgets on real agents: the pre-call refusal, the output cap, resumes, nested agent tools."""

from __future__ import annotations

from pathlib import Path

import pytest

from tether import Agent, Budget, BudgetPriceError, ModelPrice, ToolContext, tool
from tether.budget import spend_of
from tether.durable import SQLiteStore
from tether.models import ScriptedModel
from tether.models.scripted import tool_call, tool_calls

PRICE = {"priced": ModelPrice(input_per_mtok=10.0, output_per_mtok=100.0)}


@tool
def step(n: int) -> str:
    """One step.

    Args:
        n: The step's number.
    """
    return f"r{n}"


def looping(n: int, *, usage: tuple[int, int] = (100, 10), model_id: str = "priced", last: str | None = None) -> ScriptedModel:
    """A model that calls ``step`` ``n`` times (then says ``last``), recording its requests."""
    script: list[object] = [tool_call("step", {"n": i}) for i in range(n)]
    if last is not None:
        script.append(last)
    model = ScriptedModel(script, usage=usage, model_id=model_id, stateful=True)
    model.record_requests = True
    return model


def test_a_call_the_budget_refuses_is_not_made_and_a_larger_budget_resumes() -> None:
    model = looping(2, last="done")
    agent = Agent(model=model, tools=[step], budget=Budget(max_model_calls=2))
    result = agent("go")
    assert result.stop_reason == "budget_exhausted"
    assert len(model.calls) == 2  # the third call was not made
    assert result.metrics.spend.model_calls == 2 and result.metrics.spend.tool_calls == 2
    resumed = agent(None, budget=Budget(max_model_calls=3))
    assert (resumed.stop_reason, str(resumed)) == ("end_turn", "done")
    assert len(model.calls) == 3
    assert resumed.metrics.spend.model_calls == 3


def test_the_input_estimate_refuses_a_call_before_it_is_made() -> None:
    model = looping(0, last="never")
    agent = Agent(model=model, budget=Budget(max_input_tokens=20))
    result = agent("x" * 200)  # about 60 tokens: more than the budget
    assert result.stop_reason == "budget_exhausted"
    assert model.calls == [] and result.message is None


def test_the_output_cap_is_what_the_budget_leaves() -> None:
    model = looping(1, usage=(50, 30), last="done")
    agent = Agent(model=model, tools=[step], budget=Budget(max_output_tokens=45))
    result = agent("go")
    assert [call.get("max_tokens") for call in model.calls] == [45, 15]
    # the scripted model honours the cap as a provider does: the reply is cut off there
    assert result.stop_reason == "max_tokens" and result.metrics.spend.output_tokens == 45


def test_cost_is_priced_per_model_id_and_accumulates() -> None:
    model = looping(1, usage=(1000, 100), last="done")
    agent = Agent(model=model, tools=[step], budget=Budget(max_cost_usd=1.0), prices=PRICE)
    result = agent("go")
    assert result.stop_reason == "end_turn"
    assert result.metrics.spend.cost_usd == pytest.approx(2 * (1000 * 10 + 100 * 100) / 1e6)
    assert result.metrics.to_dict()["spend"]["cost_usd"] == pytest.approx(0.04)


def test_an_unknown_price_with_a_cost_limit_is_refused_before_anything_runs() -> None:
    with pytest.raises(BudgetPriceError, match="model 'scripted' has no known price"):
        Agent(model=ScriptedModel(["x"]), budget=Budget(max_cost_usd=1.0))
    agent = Agent(model=ScriptedModel(["x"]))
    with pytest.raises(BudgetPriceError, match="model 'scripted' has no known price"):
        agent("hello", budget=Budget(max_cost_usd=1.0))
    assert agent.messages == []  # nothing changed


def test_a_run_without_a_budget_records_no_spend_figures() -> None:
    agent = Agent(model=ScriptedModel(["hi"]))
    result = agent("go")
    assert "spend" not in result.metrics.to_dict()
    assert "input_estimate" not in agent.run_state.cursor.to_dict()


def test_max_tool_calls_refuses_a_round_that_would_exceed_it() -> None:
    model = looping(3, last="done")
    agent = Agent(model=model, tools=[step], budget=Budget(max_tool_calls=2))
    result = agent("go")
    assert result.stop_reason == "budget_exhausted"
    assert result.metrics.tool_call_count == 2 and agent.run_state.cursor.phase == "tools"
    resumed = agent(None, budget=Budget(max_tool_calls=3))
    assert str(resumed) == "done" and resumed.metrics.tool_call_count == 3


class FakeClock:
    """The driver's monotonic clock, advanced only by the test (never asserts on real time)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


def test_wall_time_counts_only_while_the_run_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = FakeClock()
    monkeypatch.setattr("tether.loop.driver.time", clock)

    @tool
    def slow() -> str:
        """Takes five seconds."""
        clock.now += 5.0
        return "ok"

    model = ScriptedModel([tool_call("slow"), tool_call("slow"), "done"])
    agent = Agent(model=model, tools=[slow], budget=Budget(max_wall_s=8.0))
    result = agent("go")
    assert result.stop_reason == "budget_exhausted"  # 10 s ran: the third model call is refused
    assert result.metrics.spend.wall_s == 10.0
    clock.now += 3600.0  # an hour passes while nothing runs
    resumed = agent(None, budget=Budget(max_wall_s=20.0))
    assert str(resumed) == "done" and resumed.metrics.spend.wall_s == 10.0


def test_a_durable_run_keeps_its_spend_across_processes_and_resumes_with_a_larger_budget(tmp_path: Path) -> None:
    def build(budget: Budget) -> tuple[Agent, ScriptedModel]:
        model = looping(3, last="done")
        return Agent(model=model, tools=[step], store=SQLiteStore(tmp_path / "runs.db"), budget=budget, prices=PRICE), model

    agent, _ = build(Budget(max_model_calls=2, max_cost_usd=1.0))
    assert agent("go", run_id="r").stop_reason == "budget_exhausted"
    assert agent.store is not None and agent.store.list_runs()[0].status == "paused"
    again, model = build(Budget(max_model_calls=2, max_cost_usd=1.0))  # a new agent, as in a new process
    assert again.resume("r").stop_reason == "budget_exhausted"
    assert model.calls == []  # the stored spend still refuses the call
    result = again.resume("r", budget=Budget(max_model_calls=10, max_cost_usd=1.0))
    assert (result.stop_reason, str(result)) == ("end_turn", "done")
    assert len(model.calls) == 2
    assert result.metrics.spend.model_calls == 4
    assert result.metrics.spend.cost_usd == pytest.approx(4 * (100 * 10 + 10 * 100) / 1e6)


def test_an_agent_tool_receives_what_is_left_and_its_spend_rolls_up() -> None:
    child = Agent(model=looping(5, last="child done", usage=(20, 2)), tools=[step], name="helper", prices=PRICE)
    parent_model = ScriptedModel([tool_call("helper", {"input": "work"}), "parent done"], usage=(100, 10), model_id="priced")
    parent = Agent(model=parent_model, tools=[child], budget=Budget(max_model_calls=4), prices=PRICE)
    result = parent("go")
    # the parent's first call left 3 model calls: the child made them all and ran out
    texts = [b["toolResult"]["content"][0]["text"] for m in parent.messages for b in m["content"] if "toolResult" in b]
    assert texts == ["Agent 'helper' ran out of budget before it finished."]
    assert result.stop_reason == "budget_exhausted"  # and the parent's own next call was refused
    spend = result.metrics.spend
    assert spend.model_calls == 4
    assert spend.input_tokens == 100 + 3 * 20 and spend.output_tokens == 10 + 3 * 2
    assert spend.tool_calls == 1 + 3  # its own call of the helper and the helper's steps
    assert result.metrics.tool_call_count == 1  # its own tool calls only, as before budgets


def test_parallel_agent_tool_children_share_what_is_left_and_stay_within_it() -> None:
    # Two calls of agent tools in one round run at once; each child would make four model calls.
    child = Agent(model=looping(3, last="child done", usage=(20, 2)), tools=[step], name="helper", prices=PRICE)
    other = Agent(model=looping(3, last="other done", usage=(20, 2)), tools=[step], name="other", prices=PRICE)
    calls = tool_calls([("helper", {"input": "a"}), ("other", {"input": "b"})])
    parent_model = ScriptedModel([calls, "parent done"], usage=(100, 10), model_id="priced")
    parent = Agent(model=parent_model, tools=[child, other], budget=Budget(max_model_calls=7), prices=PRICE)
    result = parent("go")
    # 6 calls were left after the parent's first: 3 each (before, each got all 6 and together made 8)
    texts = sorted(b["toolResult"]["content"][0]["text"] for m in parent.messages for b in m["content"] if "toolResult" in b)
    assert texts == ["Agent 'helper' ran out of budget before it finished.", "Agent 'other' ran out of budget before it finished."]
    assert result.stop_reason == "budget_exhausted"
    spend = result.metrics.spend
    assert spend.model_calls == 7  # within the budget
    assert spend.input_tokens == 100 + 6 * 20 and spend.output_tokens == 10 + 6 * 2


def test_parallel_children_share_output_tokens_and_cost() -> None:
    child = Agent(model=looping(9, last="child done", usage=(20, 40)), tools=[step], name="helper", prices=PRICE)
    calls = tool_calls([("helper", {"input": str(i)}) for i in range(3)])
    parent_model = ScriptedModel([calls, "parent done"], usage=(100, 10), model_id="priced")
    budget = Budget(max_output_tokens=250, max_cost_usd=0.05)
    parent = Agent(model=parent_model, tools=[child], budget=budget, prices=PRICE)
    result = parent("go")
    assert result.stop_reason == "budget_exhausted"
    spend = result.metrics.spend
    # each child got a third of the 240 output tokens and of the $0.048 left; the scripted model
    # honours the lowered max_tokens, so nothing is overrun at all
    assert spend.output_tokens <= 250 and spend.cost_usd <= 0.05
    assert spend.output_tokens > 200  # and the children did spend their shares


def test_a_sequential_round_gives_each_call_what_the_ones_before_it_left() -> None:
    from tether.tools.executors import SequentialToolExecutor

    child = Agent(model=looping(9, last="child done", usage=(20, 2)), tools=[step], name="helper", prices=PRICE)
    calls = tool_calls([("helper", {"input": "a"}), ("helper", {"input": "b"})])
    parent_model = ScriptedModel([calls, "parent done"], usage=(100, 10), model_id="priced")
    budget = Budget(max_model_calls=20, max_tool_calls=8)
    parent = Agent(model=parent_model, tools=[child], budget=budget, prices=PRICE, tool_executor=SequentialToolExecutor())
    result = parent("go")
    assert (result.stop_reason, str(result)) == ("end_turn", "parent done")
    spend = result.metrics.spend
    # the first child got 8 - 2 tool calls (the round's own two are spent already) and made six
    # steps; the second got what was left then: none (before, the first got all 8 and the run made 10)
    assert spend.tool_calls == 8
    assert spend.model_calls == 1 + 7 + 1 + 1  # the parent's, the first child's, the second's, the parent's last


def test_graph_nodes_running_at_once_share_what_is_left_less_what_running_ones_hold(tmp_path: Path) -> None:
    from tether.multiagent import GraphBuilder

    builder = GraphBuilder()
    builder.add_node(Agent(model=looping(0, last="a done"), name="a"), "a")  # one model call, then c starts
    builder.add_node(Agent(model=looping(9, last="b done"), tools=[step], name="b"), "b")  # runs on meanwhile
    builder.add_node(Agent(model=looping(9, last="c done"), tools=[step], name="c"), "c")
    builder.add_edge("a", "c")
    builder.set_budget(Budget(max_model_calls=9))
    store = SQLiteStore(tmp_path / "runs.db")
    result = builder.build(store=store)("work", run_id="g")
    # a and b started together with 4 calls each; when a finished (1 call), c got the 8 left less
    # the 4 b still held (before, c got all 8, and the run made 13)
    assert result.status == "interrupted"  # b and c wait for a larger budget
    assert {n: result.results[n].result.stop_reason for n in ("b", "c")} == {"b": "budget_exhausted", "c": "budget_exhausted"}
    head = store.head("g")
    assert head is not None and spend_of(head["metrics"]).model_calls == 1 + 4 + 4


def test_a_child_never_receives_more_than_its_own_budget() -> None:
    child = Agent(model=looping(5, last="child done"), tools=[step], name="helper", budget=Budget(max_model_calls=1))
    parent = Agent(
        model=ScriptedModel([tool_call("helper", {"input": "work"}), "parent done"]), tools=[child], budget=Budget(max_model_calls=50)
    )
    result = parent("go")
    assert (result.stop_reason, str(result)) == ("end_turn", "parent done")
    assert result.metrics.spend.model_calls == 3


def test_the_spend_travels_in_checkpoints_and_interrupts() -> None:
    budget = Budget(max_model_calls=3)
    first = Agent(model=looping(5, last="done"), tools=[step], budget=budget, checkpointing=["after_tools"])
    paused = first("go")
    assert paused.stop_reason == "checkpoint" and paused.checkpoint is not None
    assert paused.checkpoint.to_dict()["metrics"]["spend"]["wall_s"] > 0
    # another agent (as in another process) resumes from the checkpoint: its spend goes on counting
    second = Agent(model=looping(5, last="done"), tools=[step], budget=budget, checkpointing=["after_tools"])
    result = second([{"checkpointResume": {"checkpoint": paused.checkpoint.to_dict()}}])
    assert result.metrics.spend.model_calls == 2

    @tool
    def ask(context: ToolContext) -> str:
        """Asks a person."""
        return str(context.interrupt("approve", "ok?"))

    model = ScriptedModel([tool_call("ask"), "after"], usage=(10, 1), stateful=True)
    agent = Agent(model=model, tools=[ask], budget=Budget(max_model_calls=1))
    stopped = agent("go")
    assert stopped.stop_reason == "interrupt"
    answer = [{"interruptResponse": {"interruptId": stopped.interrupts[0].id, "response": "yes"}}]
    refused = agent(answer)  # the answer is taken, then the budget refuses the next model call
    assert refused.stop_reason == "budget_exhausted" and refused.metrics.spend.model_calls == 1
    done = agent(None, budget=Budget(max_model_calls=2))
    assert str(done) == "after" and done.metrics.spend.model_calls == 2


def test_a_durable_swarm_turn_receives_what_is_left_and_waits_for_more(tmp_path: Path) -> None:
    from tether.multiagent import Swarm

    store = SQLiteStore(tmp_path / "runs.db")
    member = Agent(model=looping(4, last="all done"), tools=[step], name="worker")
    swarm = Swarm([member], store=store, budget=Budget(max_model_calls=2))
    stopped = swarm("work", run_id="s")
    assert stopped.status == "interrupted"
    assert stopped.results["worker"].result.stop_reason == "budget_exhausted"
    head = store.head("s")
    assert head is not None and spend_of(head["metrics"]).model_calls == 2  # rolled up into the swarm run
    assert swarm.resume("s").status == "interrupted"  # the same budget: still refused
    swarm.budget = Budget(max_model_calls=10)
    done = swarm.resume("s")
    assert done.status == "completed" and str(done.results["worker"].result) == "all done"
    head = store.head("s")
    assert head is not None and spend_of(head["metrics"]).model_calls == 5
