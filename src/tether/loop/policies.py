"""Retry and limit policies (plain values, part of an agent's configuration)."""

from __future__ import annotations

import random
from dataclasses import dataclass

from ..errors import ConfigurationError


@dataclass(frozen=True)
class RetryPolicy:
    """Bounded exponential backoff with jitter for throttled model calls.

    Attempt ``k`` (1-based) waits ``min(max_delay, initial_delay * multiplier**(k-1))``, reduced
    by up to ``jitter`` (a fraction) at random so that many clients do not retry in lockstep. A
    provider's ``retry_after`` hint is honoured when it is longer, still capped by ``max_delay``.
    Each retry is logged at WARNING (``tether.loop``) with its wait and attempt; the provider
    SDKs' own retries are off, so this is the only retry policy.

    Attributes:
        max_attempts: Calls in all (the first included) before a throttling error is raised.
        initial_delay: Seconds before the first retry.
        max_delay: The longest wait, in seconds (also caps ``retry_after``).
        multiplier: How much each wait grows over the previous one (>= 1).
        jitter: The fraction (0..1) by which a wait is randomly shortened.
    """

    max_attempts: int = 6
    initial_delay: float = 1.0
    max_delay: float = 30.0
    multiplier: float = 2.0
    jitter: float = 0.5

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ConfigurationError(f"RetryPolicy.max_attempts must be >= 1, got {self.max_attempts}")
        if self.initial_delay < 0 or self.max_delay < 0:
            raise ConfigurationError("RetryPolicy delays must be >= 0")
        if self.multiplier < 1:
            raise ConfigurationError(f"RetryPolicy.multiplier must be >= 1 (delays must not shrink), got {self.multiplier}")
        if not 0 <= self.jitter <= 1:
            raise ConfigurationError(f"RetryPolicy.jitter must be within [0, 1], got {self.jitter}")

    def delay(self, attempt: int, retry_after: float | None = None, rng: random.Random | None = None) -> float:
        """Seconds to wait before retry number ``attempt`` (1-based)."""
        base = min(self.max_delay, self.initial_delay * self.multiplier ** (attempt - 1))
        draw = (rng or random).random()
        wait = base * (1.0 - self.jitter * draw)
        if retry_after is not None:
            wait = max(wait, min(self.max_delay, retry_after))
        return wait


@dataclass(frozen=True)
class Limits:
    """Per-invocation limits: model calls (cycles), total tokens, and overflow reductions.

    Attributes:
        max_cycles: Model calls one invocation may make (None: no limit).
        max_tokens: Tokens (input + output) one invocation may use (None: no limit).
        max_overflow_reductions: Times the conversation manager may reduce the conversation
            for one model call that overflows the context window.
    """

    max_cycles: int | None = None
    max_tokens: int | None = None
    max_overflow_reductions: int = 3

    def __post_init__(self) -> None:
        for name in ("max_cycles", "max_tokens"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or value < 1):
                raise ConfigurationError(f"Limits.{name} must be a positive int or None, got {value!r}")
        if not isinstance(self.max_overflow_reductions, int) or self.max_overflow_reductions < 0:
            raise ConfigurationError(f"Limits.max_overflow_reductions must be an int >= 0, got {self.max_overflow_reductions!r}")
