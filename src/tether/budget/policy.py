"""`BudgetPolicy`: the budget of one invocation as the loop core checks it (plain values).

The core asks :meth:`BudgetPolicy.gate_model_call` before every model call and
:meth:`BudgetPolicy.gate_tools` before every round of tool calls. A call that would exceed a
limit is not made: the gate names the limit, and the invocation stops with
``stop_reason="budget_exhausted"``. Otherwise the model call's ``max_tokens`` is set to what the
output-token and cost limits leave (so a provider that honours it cannot overrun them).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import NamedTuple

from ..errors import BudgetPriceError
from .limits import Budget
from .prices import ModelPrice, price_of
from .spend import Spend


class Gate(NamedTuple):
    """The decision about one model call: ``exhausted`` names the limit that refuses it (None: the
    call may be made), ``max_tokens`` caps its output (None: no cap)."""

    exhausted: str | None
    max_tokens: int | None = None


@dataclass(frozen=True)
class BudgetPolicy:
    """A budget, the price of the model it spends on, and the estimated tokens every request
    carries besides its messages (the tool specs).

    Attributes:
        budget: The limits.
        price: The model's price (None: unknown, allowed only without ``max_cost_usd``; then no
            cost is counted).
        fixed_tokens: Estimated input tokens of the tool specs sent with every call.
    """

    budget: Budget
    price: ModelPrice | None = None
    fixed_tokens: int = 0

    def gate_model_call(self, spend: Spend, input_estimate: int) -> Gate:
        """May a model call whose input is estimated at ``input_estimate`` tokens be made?"""
        budget = self.budget
        if budget.max_model_calls is not None and spend.model_calls >= budget.max_model_calls:
            return Gate("max_model_calls")
        if budget.max_wall_s is not None and spend.wall_s >= budget.max_wall_s:
            return Gate("max_wall_s")
        if budget.max_input_tokens is not None and spend.input_tokens + input_estimate > budget.max_input_tokens:
            return Gate("max_input_tokens")
        cap: int | None = None
        if budget.max_output_tokens is not None:
            cap = budget.max_output_tokens - spend.output_tokens
            if cap < 1:
                return Gate("max_output_tokens")
        if budget.max_cost_usd is not None:
            price = self.price
            assert price is not None  # budget_policy refuses max_cost_usd without a price
            left = budget.max_cost_usd - spend.cost_usd - price.cost(input_estimate, 0)
            if price.output_per_mtok > 0:
                affordable = int(left * 1_000_000 / price.output_per_mtok)
                if affordable < 1:
                    return Gate("max_cost_usd")
                cap = affordable if cap is None else min(cap, affordable)
            elif left < 0:
                return Gate("max_cost_usd")
        return Gate(None, cap)

    def gate_tools(self, spend: Spend, calls: int) -> str | None:
        """The limit refusing a round of ``calls`` tool calls (None: they may run). A round runs
        whole or not at all."""
        budget = self.budget
        if budget.max_wall_s is not None and spend.wall_s >= budget.max_wall_s:
            return "max_wall_s"
        if budget.max_tool_calls is not None and spend.tool_calls + calls > budget.max_tool_calls:
            return "max_tool_calls"
        return None

    def cost(self, input_tokens: int, output_tokens: int) -> float | None:
        """The dollars of a call (None: the model's price is unknown)."""
        return None if self.price is None else self.price.cost(input_tokens, output_tokens)


def budget_policy(
    budget: Budget | None, model_id: str | None, prices: Mapping[str, ModelPrice] | None = None, *, fixed_tokens: int = 0
) -> BudgetPolicy | None:
    """The policy of an invocation with ``budget`` on model ``model_id`` (None without a budget).

    Args:
        budget: The invocation's budget.
        model_id: The model's id (None: no model yet; then ``max_cost_usd`` cannot be priced).
        prices: Prices that win over the built-in table.
        fixed_tokens: Estimated input tokens of the tool specs.

    Raises:
        BudgetPriceError: ``max_cost_usd`` is set and the model has no known price.
    """
    if budget is None:
        return None
    price = None if model_id is None else price_of(model_id, prices)
    if budget.max_cost_usd is not None and price is None:
        raise BudgetPriceError(
            f"Budget.max_cost_usd is set but model {model_id!r} has no known price; pass "
            f"prices={{{model_id!r}: tether.ModelPrice(input_per_mtok=..., output_per_mtok=...)}} to the agent "
            "(US dollars per million tokens)"
        )
    return BudgetPolicy(budget, price, fixed_tokens)


__all__ = ["BudgetPolicy", "Gate", "budget_policy"]
