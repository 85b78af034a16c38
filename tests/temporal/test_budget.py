"""Budgets on Temporal: the spend is carried across continue-as-new, the pre-call refusal and
the output cap work in the workflow as they do locally, and agent tools' child workflows receive
their share of what is left and roll their spend up."""

from __future__ import annotations

import pytest
from temporalio.client import Client

from tether import Budget
from tether.multiagent import child_run_id
from tether.temporal import BlobStore, TetherClient

from .fixtures import history_stats, running_worker

CALL_COST = (30 * 10.0 + 5 * 100.0) / 1e6  # each call reports (30, 5) tokens at $10/$100 per million


async def test_the_spend_survives_continue_as_new_and_the_budget_stops_the_run(client: Client, blobs: BlobStore, task_queue: str) -> None:
    tc = TetherClient(client, blobs, task_queue, options={"cycles_per_execution": 2})
    budget = Budget(max_model_calls=7, max_cost_usd=1.0)
    async with running_worker(client, task_queue, blobs):
        handle = await tc.start("budgeted", "Tick.", run_id="budget-1", config={"cycles": 20, "budget": budget.to_dict()})
        result = await tc.result("budget-1")
        stats = await history_stats(client, "budget-1", handle.result_run_id or "")
    assert stats["runs"] >= 3  # the run continued as new, carrying its spend
    assert result.stop_reason == "budget_exhausted"
    spend = result.metrics.spend
    assert spend.model_calls == 7 and spend.tool_calls == 7
    assert (spend.input_tokens, spend.output_tokens) == (7 * 30, 7 * 5)
    assert spend.cost_usd == pytest.approx(7 * CALL_COST)
    assert spend.wall_s > 0  # workflow time ran


async def test_the_output_cap_reaches_the_model_activity(client: Client, blobs: BlobStore, task_queue: str) -> None:
    tc = TetherClient(client, blobs, task_queue, options={"cycles_per_execution": 2})
    config = {"cycles": 20, "budget": Budget(max_output_tokens=12).to_dict()}
    async with running_worker(client, task_queue, blobs):
        await tc.start("budgeted", "Tick.", run_id="budget-2", config=config)
        result = await tc.result("budget-2")
    # 5 + 5 tokens, then a call capped at the 2 left: the scripted model stops there, as a provider does
    assert result.stop_reason == "max_tokens"
    assert result.metrics.spend.output_tokens == 12 and result.metrics.model_call_count == 3


async def test_agent_tool_child_workflows_share_what_is_left_and_roll_their_spend_up(
    client: Client, blobs: BlobStore, task_queue: str
) -> None:
    tc = TetherClient(client, blobs, task_queue)
    budget = Budget(max_model_calls=7, max_cost_usd=1.0)
    async with running_worker(client, task_queue, blobs):
        await tc.start("budget_lead", "Go.", run_id="budget-3", config={"budget": budget.to_dict()})
        result = await tc.result("budget-3")
        children = [await tc.result(child_run_id("budget-3", f"tooluse_1_{i}")) for i in range(2)]
    # the two children ran at once with 3 of the 6 model calls left each (before, each ran with its
    # agent's own budget, none: both finished their 4 calls, and the run made 9)
    assert [child.stop_reason for child in children] == ["budget_exhausted", "budget_exhausted"]
    assert [child.metrics.spend.model_calls for child in children] == [3, 3]
    assert result.stop_reason == "budget_exhausted"  # and the parent's next call was refused
    spend = result.metrics.spend
    assert spend.model_calls == 7 and (spend.input_tokens, spend.output_tokens) == (7 * 30, 7 * 5)
    assert spend.cost_usd == pytest.approx(7 * CALL_COST)  # the children's cost rolled up
    assert spend.tool_calls == 2 + 2 * 3  # its own two calls and the children's steps
