"""Prices per model id, for a budget's ``max_cost_usd``.

:data:`PRICES` is a small built-in table of list prices (US dollars per million tokens) of
models of the providers Tether ships (OpenAI, Anthropic, Amazon Bedrock), as published when this
table was written; prices change, so pass your own (``Agent(prices={...})``), which win over the
table. Local models (``llamacpp:...``) cost nothing. A model id found nowhere has no price: with
``max_cost_usd`` set that is a configuration error (:func:`~tether.budget.budget_policy`), never a
silent zero.

A model id is looked up as given, then by its longest prefix in the table (``openai:gpt-4o`` prices
``openai:gpt-4o-2024-08-06``); Bedrock ids are looked up without their cross-region prefix
(``us.``, ``eu.``, ``apac.``, ``global.``). Cached input tokens are priced as input tokens.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from ..errors import ConfigurationError


@dataclass(frozen=True)
class ModelPrice:
    """What one model charges, in US dollars per million tokens.

    Attributes:
        input_per_mtok: Dollars per million input tokens.
        output_per_mtok: Dollars per million output tokens.
    """

    input_per_mtok: float
    output_per_mtok: float

    def __post_init__(self) -> None:
        for name in ("input_per_mtok", "output_per_mtok"):
            value = getattr(self, name)
            if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value) or value < 0:
                raise ConfigurationError(f"ModelPrice.{name} must be a finite number >= 0, got {value!r}")

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        """The dollars of a call that used these tokens."""
        return (input_tokens * self.input_per_mtok + output_tokens * self.output_per_mtok) / 1_000_000


FREE = ModelPrice(0.0, 0.0)
"""The price of a model run locally."""

PRICES: Mapping[str, ModelPrice] = {
    # OpenAI (platform.openai.com/docs/pricing)
    "openai:gpt-4o": ModelPrice(2.50, 10.00),
    "openai:gpt-4o-mini": ModelPrice(0.15, 0.60),
    "openai:gpt-4.1": ModelPrice(2.00, 8.00),
    "openai:gpt-4.1-mini": ModelPrice(0.40, 1.60),
    "openai:gpt-4.1-nano": ModelPrice(0.10, 0.40),
    "openai:o3": ModelPrice(2.00, 8.00),
    "openai:o4-mini": ModelPrice(1.10, 4.40),
    "openai:gpt-5": ModelPrice(1.25, 10.00),
    "openai:gpt-5-mini": ModelPrice(0.25, 2.00),
    "openai:gpt-5-nano": ModelPrice(0.05, 0.40),
    # Anthropic (anthropic.com/pricing)
    "anthropic:claude-opus-4-1": ModelPrice(15.00, 75.00),
    "anthropic:claude-opus-4-5": ModelPrice(5.00, 25.00),
    "anthropic:claude-sonnet-4": ModelPrice(3.00, 15.00),
    "anthropic:claude-haiku-4-5": ModelPrice(1.00, 5.00),
    "anthropic:claude-3-5-haiku": ModelPrice(0.80, 4.00),
    # Amazon Bedrock (aws.amazon.com/bedrock/pricing), on-demand
    "bedrock:anthropic.claude-sonnet-4": ModelPrice(3.00, 15.00),
    "bedrock:anthropic.claude-haiku-4-5": ModelPrice(1.00, 5.00),
    "bedrock:anthropic.claude-3-5-haiku": ModelPrice(0.80, 4.00),
    "bedrock:amazon.nova-pro": ModelPrice(0.80, 3.20),
    "bedrock:amazon.nova-lite": ModelPrice(0.06, 0.24),
    "bedrock:amazon.nova-micro": ModelPrice(0.035, 0.14),
}
"""The built-in table: model id (or id prefix) → price."""

LOCAL_PREFIXES = ("llamacpp:",)
"""Model ids of models run in this process: free."""

_BEDROCK_REGIONS = ("us.", "eu.", "apac.", "global.")


def _lookup(model_id: str, table: Mapping[str, ModelPrice]) -> ModelPrice | None:
    found = table.get(model_id)
    if found is not None:
        return found
    best: str | None = None
    for key in table:
        if model_id.startswith(key) and (best is None or len(key) > len(best)):
            best = key
    return None if best is None else table[best]


def price_of(model_id: str, prices: Mapping[str, ModelPrice] | None = None) -> ModelPrice | None:
    """The price of ``model_id``: from ``prices`` (as given, then by longest prefix), else local
    models' zero, else the built-in :data:`PRICES`; None when unknown.

    Args:
        model_id: The model's id (``model.model_id``: ``"openai:gpt-4o"``, ...).
        prices: The caller's prices by model id or id prefix (they win over the table).
    """
    if prices:
        found = _lookup(model_id, prices)
        if found is not None:
            return found
    if model_id.startswith(LOCAL_PREFIXES):
        return FREE
    if model_id.startswith("bedrock:"):
        bare = model_id.removeprefix("bedrock:")
        for region in _BEDROCK_REGIONS:
            if bare.startswith(region):
                model_id = "bedrock:" + bare.removeprefix(region)
                break
    return _lookup(model_id, PRICES)


def checked_prices(prices: Mapping[str, ModelPrice] | None) -> dict[str, ModelPrice]:
    """A copy of a caller's price table, checked.

    Args:
        prices: Model id (or id prefix) → :class:`ModelPrice`.

    Raises:
        ConfigurationError: A key that is not a string or a value that is not a ModelPrice.
    """
    out: dict[str, ModelPrice] = {}
    for key, value in (prices or {}).items():
        if not isinstance(key, str) or not key:
            raise ConfigurationError(f"prices: a key must be a model id string, got {key!r}")
        if not isinstance(value, ModelPrice):
            raise ConfigurationError(f"prices[{key!r}] must be a tether.ModelPrice(input_per_mtok=..., output_per_mtok=...), got {value!r}")
        out[key] = value
    return out


__all__ = ["FREE", "LOCAL_PREFIXES", "PRICES", "ModelPrice", "checked_prices", "price_of"]
