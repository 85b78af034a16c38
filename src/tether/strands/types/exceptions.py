"""Strands' `strands.types.exceptions`, as Tether errors.

Each class a Strands program catches is a :class:`~tether.errors.TetherError` subclass, and
where Tether raises an equivalent error the Strands class is (or derives from) Tether's, so
``except strands.types.exceptions.X`` catches what Tether raises: the facade agent re-raises
Tether's errors as these classes at its boundary (see :func:`strands_error`). Raising one of
them from a custom model or a tool means to Tether's loop what the Tether error means
(``ModelThrottledException`` is retried, ``ContextWindowOverflowException`` reduces the
conversation).
"""

from __future__ import annotations

from typing import Any

from ...errors import (
    AgentBusyError,
    CheckpointError,
    ContextWindowExhaustedError,
    ContextWindowOverflowError,
    ModelThrottledError,
    SnapshotError,
    StateError,
    StoreError,
    StructuredOutputError,
    TetherError,
    ToolError,
)
from ...mcp.errors import MCPError


class EventLoopException(TetherError):
    """An unexpected error in the agent loop, wrapping the original exception."""

    def __init__(self, original_exception: Exception, request_state: Any = None) -> None:
        self.original_exception = original_exception
        self.request_state = request_state if request_state is not None else {}
        super().__init__(str(original_exception))


class MaxTokensReachedException(TetherError):
    """The model stopped at its output-token limit (``stop_reason == "max_tokens"``).

    As in Strands the partial message is already in ``agent.messages``: call the agent again
    to continue.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)


class ContextWindowOverflowException(ContextWindowOverflowError):
    """The conversation does not fit the model's context window.

    Raised by a model, Tether's loop has the conversation manager reduce the conversation and
    retries; raised to the caller, the conversation could not be reduced enough (it is then
    also a :class:`~tether.errors.ContextWindowExhaustedError`).
    """


class _ContextWindowExhausted(ContextWindowOverflowException, ContextWindowExhaustedError):
    """Tether's ``ContextWindowExhaustedError`` as the facade raises it: both classes."""


class MCPClientInitializationError(MCPError):
    """The MCP client could not start (Strands' ``MCPClientInitializationError``)."""


class ModelThrottledException(ModelThrottledError):
    """The provider rate-limited the call (Tether's loop retries it with backoff)."""

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message, retry_after=retry_after)
        self.message = message


class SessionException(StoreError, ValueError):
    """A session's stored data is damaged, foreign or cannot be applied to this agent.

    The message names the file (or storage key) and the field. Nothing was written. Also a
    ``ValueError``, which Strands raises for a foreign conversation-manager ``__name__``.
    """


SnapshotException = SnapshotError
"""Tether's :class:`~tether.errors.SnapshotError` (already named so for Strands users)."""


class ProviderTokenCountError(TetherError):
    """A provider could not count tokens."""


class ToolProviderException(ToolError):
    """A tool provider failed."""


class StructuredOutputException(StructuredOutputError):
    """The model did not produce valid structured output."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ConcurrencyException(AgentBusyError):
    """The agent is already running an invocation (or a recorded direct tool call)."""


class IdempotencyAbortedError(TetherError):
    """A duplicate invocation waited for one that was aborted."""


class CheckpointException(CheckpointError):
    """A checkpoint cannot be read or resumed (Strands' ``CheckpointException``): a
    :class:`~tether.errors.CheckpointError` under Strands' name, so ``except
    CheckpointException``, ``except CheckpointError`` and ``except ValueError`` all catch it."""


class StateValueError(StateError):
    """A value put into agent state is not JSON: Tether's :class:`~tether.errors.StateError`,
    named ``ValueError`` as what Strands raises there (``type(exc).__name__`` is the same on
    both; ``except ValueError`` and ``except StateError`` both catch it)."""


class CheckpointValueError(CheckpointError):
    """A ``checkpointResume`` prompt given to an agent built without checkpointing: Tether's
    :class:`~tether.errors.CheckpointError`, named ``ValueError`` as what Strands raises there."""


class RaisedSnapshotException(SnapshotError):
    """A snapshot the facade agent cannot take or load: Tether's
    :class:`~tether.errors.SnapshotError` (which :data:`SnapshotException` names, so ``except
    SnapshotException`` catches it), named ``SnapshotException`` as what Strands raises."""


for _cls in (StateValueError, CheckpointValueError):
    _cls.__name__ = _cls.__qualname__ = "ValueError"
RaisedSnapshotException.__name__ = RaisedSnapshotException.__qualname__ = "SnapshotException"


class StorageError(StoreError):
    """A storage read, write, delete or listing failed (the key is named)."""


class AggregateMemoryError(TetherError):
    """Several memory operations failed."""

    def __init__(self, message: str, errors: list[Exception] | None = None) -> None:
        super().__init__(message)
        self.errors = list(errors or ())


def strands_error(exc: BaseException) -> BaseException | None:
    """The Strands-named exception to raise for Tether error ``exc``, or None to raise it as is.

    The new exception is also an instance of ``exc``'s class where it matters (a context
    overflow the manager could not reduce is both ``ContextWindowOverflowException`` and
    ``ContextWindowExhaustedError``), and the caller chains it to ``exc``.
    """
    if isinstance(exc, (ContextWindowOverflowException, ModelThrottledException, StructuredOutputException, ConcurrencyException)):
        return None
    if isinstance(exc, AgentBusyError):
        return ConcurrencyException(str(exc))
    if isinstance(exc, ContextWindowExhaustedError):
        return _ContextWindowExhausted(str(exc))
    if isinstance(exc, ContextWindowOverflowError):
        return ContextWindowOverflowException(str(exc))
    if isinstance(exc, ModelThrottledError):
        return ModelThrottledException(str(exc), retry_after=exc.retry_after)
    if isinstance(exc, StructuredOutputError):
        return StructuredOutputException(str(exc))
    if isinstance(exc, CheckpointError) and not isinstance(exc, (CheckpointException, CheckpointValueError)):
        return CheckpointException(str(exc))
    if isinstance(exc, SnapshotError) and not isinstance(exc, RaisedSnapshotException):
        return RaisedSnapshotException(str(exc))
    if isinstance(exc, StateError) and not isinstance(exc, StateValueError):
        return StateValueError(str(exc))
    return None


__all__ = [
    "AggregateMemoryError",
    "CheckpointException",
    "CheckpointValueError",
    "ConcurrencyException",
    "ContextWindowOverflowException",
    "EventLoopException",
    "IdempotencyAbortedError",
    "MCPClientInitializationError",
    "MaxTokensReachedException",
    "ModelThrottledException",
    "ProviderTokenCountError",
    "RaisedSnapshotException",
    "SessionException",
    "SnapshotException",
    "StateValueError",
    "StorageError",
    "StructuredOutputException",
    "ToolProviderException",
    "strands_error",
]
