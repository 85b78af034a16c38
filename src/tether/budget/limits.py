"""`Budget`: the limits one run (and the runs nested in it) may spend, as plain values."""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from ..errors import ConfigurationError

if TYPE_CHECKING:
    from .spend import Spend

LIMIT_NAMES = ("max_input_tokens", "max_output_tokens", "max_cost_usd", "max_tool_calls", "max_model_calls", "max_wall_s")
"""Every limit of a :class:`Budget`, in the order of its fields."""

_INTS = frozenset({"max_input_tokens", "max_output_tokens", "max_tool_calls", "max_model_calls"})
_SPENT = {
    "max_input_tokens": "input_tokens",
    "max_output_tokens": "output_tokens",
    "max_cost_usd": "cost_usd",
    "max_tool_calls": "tool_calls",
    "max_model_calls": "model_calls",
    "max_wall_s": "wall_s",
}


@dataclass(frozen=True)
class Budget:
    """What a run may spend over its whole life: across invocations, pauses, resumes, processes
    and Temporal, its nested runs (agent tools, graph nodes, swarm members) included.

    A limit left ``None`` is not checked. Tokens are the providers' reported usage figures; the
    cost is priced per model id (:mod:`tether.budget.prices`); wall time counts only the seconds
    the run actually runs (not while it waits for an answer, sits paused or is not loaded).

    Attributes:
        max_input_tokens: Input (prompt) tokens, summed over every model call.
        max_output_tokens: Output tokens, summed over every model call; a call's ``max_tokens``
            is set to what is left, where the provider allows.
        max_cost_usd: US dollars, priced per model id; a model without a known price is a
            configuration error when this is set.
        max_tool_calls: Tool calls (a nested run's included).
        max_model_calls: Model calls (a nested run's included).
        max_wall_s: Seconds the run actually runs.
    """

    max_input_tokens: int | None = None
    max_output_tokens: int | None = None
    max_cost_usd: float | None = None
    max_tool_calls: int | None = None
    max_model_calls: int | None = None
    max_wall_s: float | None = None

    def __post_init__(self) -> None:
        for name in LIMIT_NAMES:
            value = getattr(self, name)
            if value is None:
                continue
            if name in _INTS:
                if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                    raise ConfigurationError(f"Budget.{name} must be an int >= 0 or None, got {value!r}")
            elif not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value) or value < 0:
                raise ConfigurationError(f"Budget.{name} must be a finite number >= 0 or None, got {value!r}")

    @property
    def limits(self) -> dict[str, float]:
        """The limits that are set, by name."""
        return {name: getattr(self, name) for name in LIMIT_NAMES if getattr(self, name) is not None}

    def left(self, spend: Spend) -> Budget:
        """What is left of this budget after ``spend`` (each set limit minus what was spent, never
        below zero): the budget a nested run receives."""
        values: dict[str, Any] = {}
        for name, limit in self.limits.items():
            rest = limit - getattr(spend, _SPENT[name])
            values[name] = max(0, int(rest)) if name in _INTS else max(0.0, float(rest))
        return Budget(**values)

    def widened(self, spend: Spend) -> Budget:
        """This budget with ``spend`` added to each set limit (a nested run's limits in its own
        counters: what its parent has left plus what the parent already counted of it)."""
        values: dict[str, Any] = {}
        for name, limit in self.limits.items():
            extra = getattr(spend, _SPENT[name])
            values[name] = int(limit + extra) if name in _INTS else float(limit + extra)
        return Budget(**values)

    def less(self, other: Budget) -> Budget:
        """This budget with ``other``'s limits taken out of it, limit by limit (never below zero;
        a limit ``other`` leaves ``None`` takes nothing): what is left once ``other`` is reserved,
        e.g. the shares of nested runs still running."""
        values: dict[str, Any] = {}
        for name, limit in self.limits.items():
            rest = limit - (getattr(other, name) or 0)
            values[name] = max(0, int(rest)) if name in _INTS else max(0.0, float(rest))
        return Budget(**values)

    def split(self, ways: int, *, whole: Collection[str] = ()) -> Budget:
        """One of ``ways`` equal shares of this budget: each set limit divided by ``ways``
        (counts rounded down, so the shares never add up to more than the whole), except the
        limits named in ``whole``, which every share keeps whole (wall time, for nested runs
        that run side by side within their parent's measured time).

        Args:
            ways: How many nested runs share the budget at once (1: the whole budget).
            whole: Limits not divided (names from :data:`LIMIT_NAMES`).
        """
        if ways <= 1:
            return self
        values: dict[str, Any] = {}
        for name, limit in self.limits.items():
            if name in whole:
                values[name] = limit
            else:
                values[name] = int(limit) // ways if name in _INTS else float(limit) / ways
        return Budget(**values)

    def tightest(self, other: Budget | None) -> Budget:
        """The smaller of the two budgets, limit by limit (``None`` gives this one)."""
        if other is None:
            return self
        values: dict[str, Any] = {}
        for name in LIMIT_NAMES:
            mine, theirs = getattr(self, name), getattr(other, name)
            values[name] = theirs if mine is None else mine if theirs is None else min(mine, theirs)
        return Budget(**values)

    def to_dict(self) -> dict[str, float]:
        """The set limits as JSON (what :meth:`from_dict` reads)."""
        return self.limits

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str = "budget") -> Budget:
        """A budget from :meth:`to_dict` data.

        Args:
            data: The limits by name.
            where: Names the value in errors.

        Raises:
            ConfigurationError: An unknown key or a bad limit, naming ``where``.
        """
        if not isinstance(data, Mapping):
            raise ConfigurationError(f"{where} must be an object of budget limits, got {type(data).__name__}")
        unknown = sorted(set(data) - set(LIMIT_NAMES))
        if unknown:
            raise ConfigurationError(f"{where} has unknown limits {unknown}; the limits are {list(LIMIT_NAMES)}")
        return cls(**{f.name: data.get(f.name) for f in fields(cls)})


__all__ = ["LIMIT_NAMES", "Budget"]
