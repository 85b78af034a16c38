"""The price table: built-in prices, overrides, local models, unknown ids."""

from __future__ import annotations

import pytest

from tether import ConfigurationError, ModelPrice
from tether.budget import PRICES, price_of
from tether.budget.prices import FREE, checked_prices


def test_builtin_prices_by_id_and_by_longest_prefix() -> None:
    assert price_of("openai:gpt-4o") == PRICES["openai:gpt-4o"]
    assert price_of("openai:gpt-4o-mini-2024-07-18") == PRICES["openai:gpt-4o-mini"]  # not gpt-4o's
    assert price_of("anthropic:claude-sonnet-4-5-20250929") == PRICES["anthropic:claude-sonnet-4"]


def test_bedrock_cross_region_ids_drop_their_prefix() -> None:
    assert price_of("bedrock:us.anthropic.claude-sonnet-4-20250514-v1:0") == PRICES["bedrock:anthropic.claude-sonnet-4"]
    assert price_of("bedrock:amazon.nova-lite-v1:0") == PRICES["bedrock:amazon.nova-lite"]


def test_local_models_are_free_and_unknown_ids_have_no_price() -> None:
    assert price_of("llamacpp:SmolLM2-135M-Instruct") == FREE
    assert price_of("scripted") is None
    assert price_of("openai:some-future-model") is None


def test_given_prices_win_over_the_table() -> None:
    mine = ModelPrice(1.0, 2.0)
    assert price_of("openai:gpt-4o", {"openai:gpt-4o": mine}) is mine
    assert price_of("scripted-x", {"scripted": mine}) is mine  # by prefix too


def test_a_price_costs_per_million_tokens() -> None:
    assert ModelPrice(3.0, 15.0).cost(1_000_000, 2_000) == pytest.approx(3.03)


def test_bad_prices_are_configuration_errors() -> None:
    with pytest.raises(ConfigurationError, match=r"ModelPrice\.output_per_mtok"):
        ModelPrice(1.0, -1.0)
    with pytest.raises(ConfigurationError, match=r"prices\['m'\] must be a tether.ModelPrice"):
        checked_prices({"m": (1.0, 2.0)})  # type: ignore[dict-item]
