"""The agent's :class:`~tether.RetryPolicy` as Temporal activity retry policies.

An agent retries throttled model calls with bounded exponential backoff and jitter, honouring
a provider's ``retry_after`` hint. On Temporal, a retry is a new activity attempt, so the same
policy is expressed in two halves:

- the activity's ``RetryPolicy`` (initial interval, backoff coefficient, maximum interval,
  maximum attempts) takes the agent's figures, and governs attempts lost to crashes and timeouts;
- a throttled attempt fails with ``next_retry_delay`` set to exactly the delay the agent would
  wait locally (:meth:`RetryPolicy.delay` for that attempt: jitter and ``retry_after``
  included), which Temporal uses instead of its own backoff.

Both halves are pure functions: the first runs in workflow code, the second in the activity.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from temporalio.common import RetryPolicy as ActivityRetryPolicy

from ..loop.policies import RetryPolicy
from .shapes import RetrySettings

MIN_INTERVAL_S = 0.001
"""Temporal reads a zero initial interval as "use the server default" (1 s); a zero delay
becomes this instead."""


def retry_settings(policy: RetryPolicy) -> RetrySettings:
    """The JSON form of an agent's retry policy."""
    return {
        "max_attempts": policy.max_attempts,
        "initial_delay": policy.initial_delay,
        "max_delay": policy.max_delay,
        "multiplier": policy.multiplier,
        "jitter": policy.jitter,
    }


DEFAULT_RETRY: RetrySettings = retry_settings(RetryPolicy())


def activity_retry_policy(settings: RetrySettings | dict[str, Any] | None, attempts: int | None = None) -> ActivityRetryPolicy:
    """The Temporal retry policy of an activity governed by ``settings``.

    Args:
        settings: The agent's retry policy as JSON (None or missing keys: the defaults).
        attempts: Maximum attempts, when not the policy's own (tool calls have their own count;
            a non-idempotent tool gets exactly 1).
    """
    merged = {**DEFAULT_RETRY, **(settings or {})}
    initial = max(float(merged["initial_delay"]), MIN_INTERVAL_S)
    maximum = max(float(merged["max_delay"]), initial)
    count = int(merged["max_attempts"] if attempts is None else attempts)
    return ActivityRetryPolicy(
        initial_interval=timedelta(seconds=initial),
        backoff_coefficient=max(float(merged["multiplier"]), 1.0),
        maximum_interval=timedelta(seconds=maximum),
        maximum_attempts=max(1, count),
    )


def throttle_delay(policy: RetryPolicy, attempt: int, retry_after: float | None) -> timedelta:
    """The wait before the attempt after a throttled ``attempt`` (1-based), as the agent would wait."""
    return timedelta(seconds=max(policy.delay(attempt, retry_after), MIN_INTERVAL_S))


__all__ = ["DEFAULT_RETRY", "RetrySettings", "activity_retry_policy", "retry_settings", "throttle_delay"]
