"""Tether errors across the Temporal boundary, both ways, in one place.

Workflow and activity code turns a :class:`~tether.errors.TetherError` into an
``ApplicationError`` whose ``type`` is the error's class name (non-retryable unless a retry can
fix it: throttling). The client turns such a failure back into the same Tether error class, so
``TetherClient`` callers catch ``InterruptError`` or ``ScriptExhaustedError`` as they would
around a local agent. The way back only ever picks a class from :mod:`tether.errors` by name:
a failure's text never chooses code.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio.exceptions import ApplicationError

from .. import errors as _errors
from ..errors import ModelThrottledError, TetherError


def to_failure(exc: BaseException, what: str | None = None) -> ApplicationError:
    """A non-retryable ``ApplicationError`` for ``exc``, typed with its class name.

    Args:
        exc: The error (a TetherError, or anything no retry can fix).
        what: What failed, prefixed to the message (e.g. "cannot build agent 'x'").
    """
    text = f"{type(exc).__name__}: {exc}"
    return ApplicationError(text if what is None else f"{what}: {text}", str(exc), type=type(exc).__name__, non_retryable=True)


def throttled_failure(exc: ModelThrottledError, delay: timedelta | None = None) -> ApplicationError:
    """A retryable failure for a throttled model call.

    Args:
        exc: The throttling error.
        delay: The wait before the next attempt (see :func:`tether.temporal.retries.throttle_delay`);
            None: the provider's ``retry_after`` if any, else the activity's retry policy.
    """
    if delay is None and exc.retry_after is not None:
        delay = timedelta(seconds=exc.retry_after)
    return ApplicationError(f"model throttled: {exc}", str(exc), type="ModelThrottledError", next_retry_delay=delay)


IN_DOUBT_FAILURE = "TetherInDoubt"
"""The failure type of a non-idempotent tool activity that refused to run again: the call is in doubt."""


def in_doubt_failure(tool_use_id: str, name: str, attempt: int) -> ApplicationError:
    """A non-retryable failure for a non-idempotent tool call whose earlier attempt was lost."""
    return ApplicationError(
        f"tool {name!r} is not idempotent and attempt {attempt - 1} of call {tool_use_id!r} may have run; "
        "not running it again (the workflow reconciles the call or asks through a tether.in_doubt interrupt)",
        type=IN_DOUBT_FAILURE,
        non_retryable=True,
    )


def _tether_classes() -> dict[str, type[TetherError]]:
    found: dict[str, type[TetherError]] = {}
    for value in vars(_errors).values():
        if isinstance(value, type) and issubclass(value, TetherError):
            found[value.__name__] = value
    return found


_CLASSES = _tether_classes()


def from_failure(exc: BaseException) -> TetherError | None:
    """The Tether error a Temporal failure carries (looked up along its causes), or None.

    Raise it ``from exc`` so the Temporal details stay visible.
    """
    cause: BaseException | None = exc
    seen = 0
    while cause is not None and seen < 32:
        if isinstance(cause, ApplicationError) and cause.type in _CLASSES:
            cls = _CLASSES[cause.type]
            message = cause.details[0] if cause.details and isinstance(cause.details[0], str) else cause.message
            return cls(message)
        cause = cause.__cause__ or getattr(cause, "cause", None)
        seen += 1
    return None


__all__ = ["IN_DOUBT_FAILURE", "from_failure", "in_doubt_failure", "throttled_failure", "to_failure"]
