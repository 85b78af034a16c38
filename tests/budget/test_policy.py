"""The budget gate the loop core asks before every model call and tool round."""

from __future__ import annotations

import pytest

from tether import Budget, BudgetPriceError, ConfigurationError, ModelPrice, Spend
from tether.budget import BudgetPolicy, Gate, budget_policy


def test_model_calls_wall_time_and_input_tokens_refuse_a_call() -> None:
    policy = BudgetPolicy(Budget(max_model_calls=2, max_wall_s=5.0, max_input_tokens=100))
    assert policy.gate_model_call(Spend(model_calls=1, wall_s=4.9, input_tokens=60), 40) == Gate(None, None)
    assert policy.gate_model_call(Spend(model_calls=2), 0).exhausted == "max_model_calls"
    assert policy.gate_model_call(Spend(wall_s=5.0), 0).exhausted == "max_wall_s"
    assert policy.gate_model_call(Spend(input_tokens=60), 41).exhausted == "max_input_tokens"


def test_the_output_cap_is_what_the_output_budget_leaves() -> None:
    policy = BudgetPolicy(Budget(max_output_tokens=50))
    assert policy.gate_model_call(Spend(output_tokens=45), 10) == Gate(None, 5)
    assert policy.gate_model_call(Spend(output_tokens=50), 10).exhausted == "max_output_tokens"


def test_the_cost_limit_prices_the_estimated_input_and_caps_the_output() -> None:
    policy = BudgetPolicy(Budget(max_cost_usd=0.01), ModelPrice(input_per_mtok=10.0, output_per_mtok=100.0))
    # 0.01 - 0.004 spent - 200 input tokens * $10/M = 0.004 left: 40 output tokens at $100/M
    assert policy.gate_model_call(Spend(cost_usd=0.004), 200) == Gate(None, 40)
    assert policy.gate_model_call(Spend(cost_usd=0.0099), 200).exhausted == "max_cost_usd"
    both = BudgetPolicy(Budget(max_cost_usd=0.01, max_output_tokens=10), ModelPrice(10.0, 100.0))
    assert both.gate_model_call(Spend(), 0) == Gate(None, 10)  # the smaller cap


def test_a_free_model_never_exhausts_the_cost_limit() -> None:
    policy = BudgetPolicy(Budget(max_cost_usd=0.0), ModelPrice(0.0, 0.0))
    assert policy.gate_model_call(Spend(), 10_000) == Gate(None, None)


def test_a_tool_round_runs_whole_or_not_at_all() -> None:
    policy = BudgetPolicy(Budget(max_tool_calls=3))
    assert policy.gate_tools(Spend(tool_calls=1), 2) is None
    assert policy.gate_tools(Spend(tool_calls=2), 2) == "max_tool_calls"


def test_an_unpriced_model_with_a_cost_limit_is_a_configuration_error() -> None:
    with pytest.raises(BudgetPriceError, match=r"model 'openai:unknown-model' has no known price; pass prices=") as caught:
        budget_policy(Budget(max_cost_usd=1.0), "openai:unknown-model")
    assert isinstance(caught.value, ConfigurationError)
    unpriced = budget_policy(Budget(max_input_tokens=5), "openai:unknown-model")  # no cost limit: fine, no cost counted
    assert unpriced is not None and unpriced.cost(10, 10) is None
    assert budget_policy(None, "scripted") is None
