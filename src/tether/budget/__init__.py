"""Budgets: bound what a run may spend across pauses, resumes, processes and nested runs.

A :class:`Budget` caps a run's input and output tokens, its cost in US dollars, its tool calls,
its model calls and the seconds it actually runs. What a run has spent (:class:`Spend`) is read
from its metrics, which are part of the run's JSON state, so the spend survives every way a
run stops and goes on. The loop core checks the budget before every model call and every
round of tool calls (:class:`BudgetPolicy`); a call that would exceed it is not made and the
invocation stops with ``stop_reason="budget_exhausted"``, resumable once the budget is raised.
See the Budgets guide (``docs/guides/budgets.md``).
"""

from __future__ import annotations

from .estimate import CHARS_PER_TOKEN, estimate_tokens
from .limits import LIMIT_NAMES, Budget
from .policy import BudgetPolicy, Gate, budget_policy
from .prices import PRICES, ModelPrice, price_of
from .spend import Spend, add_cost, add_wall, spend_of

__all__ = [
    "CHARS_PER_TOKEN",
    "LIMIT_NAMES",
    "PRICES",
    "Budget",
    "BudgetPolicy",
    "Gate",
    "ModelPrice",
    "Spend",
    "add_cost",
    "add_wall",
    "budget_policy",
    "estimate_tokens",
    "price_of",
    "spend_of",
]
