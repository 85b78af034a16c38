"""`Budget`: validation, what is left, nested budgets."""

from __future__ import annotations

import math

import pytest

from tether import Budget, ConfigurationError, Spend


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("max_input_tokens", -1),
        ("max_output_tokens", 1.5),
        ("max_tool_calls", True),
        ("max_model_calls", "3"),
        ("max_cost_usd", -0.01),
        ("max_cost_usd", math.inf),
        ("max_wall_s", math.nan),
    ],
)
def test_a_bad_limit_is_a_configuration_error_naming_it(name: str, value: object) -> None:
    with pytest.raises(ConfigurationError, match=f"Budget.{name} "):
        Budget(**{name: value})  # type: ignore[arg-type]


def test_left_subtracts_the_spend_and_never_goes_below_zero() -> None:
    budget = Budget(max_input_tokens=1000, max_output_tokens=100, max_cost_usd=1.0, max_tool_calls=5, max_wall_s=10.0)
    spend = Spend(input_tokens=400, output_tokens=150, cost_usd=0.25, tool_calls=2, model_calls=9, wall_s=4.5)
    left = budget.left(spend)
    assert left == Budget(max_input_tokens=600, max_output_tokens=0, max_cost_usd=0.75, max_tool_calls=3, max_wall_s=5.5)
    assert left.max_model_calls is None  # an unset limit stays unset


def test_widened_adds_what_the_parent_already_counted() -> None:
    left = Budget(max_input_tokens=600, max_cost_usd=0.5)
    assert left.widened(Spend(input_tokens=50, cost_usd=0.25, model_calls=3)) == Budget(max_input_tokens=650, max_cost_usd=0.75)


def test_less_takes_a_reservation_out_and_never_goes_below_zero() -> None:
    budget = Budget(max_output_tokens=100, max_cost_usd=1.0, max_tool_calls=5)
    assert budget.less(Budget(max_tool_calls=2, max_cost_usd=1.5, max_model_calls=3)) == Budget(
        max_output_tokens=100, max_cost_usd=0.0, max_tool_calls=3
    )


def test_split_divides_each_limit_rounding_counts_down_and_keeps_the_named_ones_whole() -> None:
    budget = Budget(max_output_tokens=101, max_cost_usd=0.9, max_model_calls=5, max_wall_s=30.0)
    share = budget.split(3, whole=("max_wall_s",))
    assert share.max_cost_usd == pytest.approx(0.3)
    assert share == Budget(max_output_tokens=33, max_cost_usd=share.max_cost_usd, max_model_calls=1, max_wall_s=30.0)
    assert 3 * share.max_output_tokens <= 101 and 3 * share.max_model_calls <= 5  # type: ignore[operator]
    assert budget.split(1) is budget and budget.split(2).max_wall_s == 15.0


def test_tightest_takes_the_smaller_limit_of_each() -> None:
    mine = Budget(max_input_tokens=100, max_cost_usd=2.0)
    theirs = Budget(max_input_tokens=300, max_cost_usd=1.0, max_tool_calls=4)
    assert mine.tightest(theirs) == Budget(max_input_tokens=100, max_cost_usd=1.0, max_tool_calls=4)
    assert mine.tightest(None) is mine


def test_json_round_trip_and_unknown_keys() -> None:
    budget = Budget(max_output_tokens=7, max_wall_s=1.5)
    assert budget.to_dict() == {"max_output_tokens": 7, "max_wall_s": 1.5}
    assert Budget.from_dict(budget.to_dict()) == budget
    with pytest.raises(ConfigurationError, match=r"settings.budget has unknown limits \['max_dollars'\]"):
        Budget.from_dict({"max_dollars": 1}, "settings.budget")
