"""RetryPolicy (bounded exponential backoff with jitter) and Limits."""

from __future__ import annotations

import random
from typing import Any

import pytest

from tether import ConfigurationError, Limits, RetryPolicy


def test_defaults() -> None:
    policy = RetryPolicy()
    assert policy.max_attempts >= 2 and policy.initial_delay > 0 and policy.max_delay >= policy.initial_delay
    assert Limits() == Limits(max_cycles=None, max_tokens=None, max_overflow_reductions=3)


def test_exponential_and_capped_without_jitter() -> None:
    policy = RetryPolicy(initial_delay=0.5, multiplier=2.0, max_delay=3.0, jitter=0.0)
    assert [policy.delay(k) for k in range(1, 6)] == [0.5, 1.0, 2.0, 3.0, 3.0]


def test_jitter_only_shortens_within_its_fraction() -> None:
    policy = RetryPolicy(initial_delay=1.0, multiplier=2.0, max_delay=100.0, jitter=0.5)
    rng = random.Random(7)
    for attempt in range(1, 8):
        base = min(100.0, 2.0 ** (attempt - 1))
        for _ in range(50):
            wait = policy.delay(attempt, rng=rng)
            assert base * 0.5 <= wait <= base


def test_jitter_spreads_retries() -> None:
    policy = RetryPolicy(initial_delay=1.0, jitter=0.5)
    rng = random.Random(1)
    waits = {round(policy.delay(1, rng=rng), 6) for _ in range(20)}
    assert len(waits) > 10


def test_jitter_is_reproducible_with_a_seeded_rng() -> None:
    policy = RetryPolicy()
    assert [policy.delay(k, rng=random.Random(3)) for k in (1, 2, 3)] == [policy.delay(k, rng=random.Random(3)) for k in (1, 2, 3)]


def test_retry_after_is_honoured_but_capped() -> None:
    policy = RetryPolicy(initial_delay=0.1, max_delay=5.0, jitter=0.0)
    assert policy.delay(1, retry_after=2.0) == 2.0
    assert policy.delay(1, retry_after=60.0) == 5.0
    assert policy.delay(1, retry_after=0.01) == 0.1


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"max_attempts": 0}, "max_attempts"),
        ({"initial_delay": -1}, "delays"),
        ({"max_delay": -1}, "delays"),
        ({"jitter": -0.1}, "jitter"),
        ({"jitter": 1.5}, "jitter"),
        ({"multiplier": 0.5}, "multiplier"),
    ],
)
def test_retry_policy_validation(kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(ConfigurationError, match=field):
        RetryPolicy(**kwargs)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"max_cycles": 0}, "max_cycles"),
        ({"max_cycles": 1.5}, "max_cycles"),
        ({"max_tokens": 0}, "max_tokens"),
        ({"max_tokens": "100"}, "max_tokens"),
        ({"max_overflow_reductions": -1}, "max_overflow_reductions"),
    ],
)
def test_limits_validation(kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(ConfigurationError, match=field):
        Limits(**kwargs)


def test_zero_overflow_reductions_is_allowed() -> None:
    assert Limits(max_overflow_reductions=0).max_overflow_reductions == 0


def test_policies_are_frozen_values() -> None:
    policy = RetryPolicy()
    with pytest.raises(AttributeError):
        policy.max_attempts = 3  # type: ignore[misc]
    assert Limits(max_cycles=2) == Limits(max_cycles=2)
