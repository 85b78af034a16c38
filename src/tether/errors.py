"""One exception hierarchy, rooted at :class:`TetherError`.

Every message names the offending field, run id or file and says what to do about it.
"""

from __future__ import annotations

from typing import Any


class TetherError(Exception):
    """Base class of every error Tether raises on purpose."""


class ConfigurationError(TetherError, ValueError):
    """The agent, a tool or a model was configured with an invalid value."""


class MissingExtraError(TetherError, ImportError):
    """An optional part of Tether was imported without the package it needs; the message names
    the ``pip install 'tether[...]'`` line that installs it."""


class BudgetPriceError(ConfigurationError):
    """A budget sets ``max_cost_usd`` but the model has no known price (pass ``prices=``)."""


class StateError(TetherError, ValueError):
    """A value put into agent state, app data or a run is not JSON."""


class PromptError(TetherError, ValueError):
    """A prompt has an invalid shape or cannot be accepted in the run's current status."""


class AgentBusyError(PromptError):
    """The agent is already running an invocation (agents run one at a time)."""


class PromptShapeError(PromptError, TypeError):
    """A prompt mixes control blocks (``checkpointResume``, ``interruptResponse``) with other
    content, or repeats a ``checkpointResume`` block.

    Also a ``TypeError``, which Strands raises for these prompts, so code written for Strands
    (``except TypeError``) and for Tether (``except PromptError``) both catch it.
    """


class ShapeError(TetherError, ValueError):
    """A value does not have the shape Tether requires: what the validators and checked copies raise.

    ``path`` says where, as keys and indexes from the root the caller named (``["snapshot",
    "data", "messages", 3, "content", 0]``); ``problem`` says what is wrong there (``"must be a
    string"``); ``str(error)`` is the whole sentence, ``"<path>: <problem>"`` unless the raiser
    words it otherwise (``message``).

    The validators (:func:`~tether._messages.validate_messages`, ``check_message``,
    :func:`~tether.checkpoint.check_metrics`, the checked JSON copies of :mod:`tether._json`,
    ...) do not know whose input they check, so they raise this. A caller whose input it is
    converts it, in one place, to the error of its context, keeping the sentence: ``raise
    SnapshotError(str(exc)) from None`` for a snapshot, :class:`ConfigurationError` for an
    agent's arguments, :class:`StateError` for agent state, and so on. A ``ShapeError`` that
    reaches the caller unconverted is still a ``ValueError`` naming the path.
    """

    def __init__(self, path: list[Any], problem: str, *, message: str | None = None) -> None:
        super().__init__(f"{json_path(path)}: {problem}" if message is None else message)
        self.path = path
        self.problem = problem

    def under(self, prefix: list[Any]) -> ShapeError:
        """The same problem with ``prefix`` prepended to its path (worded ``"<path>: <problem>"``).

        Validators of nested parts raise with paths relative to the part they check; the caller
        that knows where the part sits makes the path absolute with this.
        """
        return ShapeError(prefix + self.path, self.problem)


class ModelError(TetherError):
    """A model call failed."""


class ModelThrottledError(ModelError):
    """The provider rate-limited the call; the loop retries with backoff."""

    def __init__(self, message: str = "model throttled", *, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


class ContextWindowOverflowError(ModelError):
    """The request exceeded the model's context window; the conversation manager reduces it."""


class ModelAuthError(ModelError):
    """Credentials are missing or invalid; the message names what to set."""


class ModelResponseError(ModelError):
    """The model produced output that cannot be turned into a valid message."""


class ReplyCutOffError(ModelResponseError):
    """The model's reply reached its output-token cap (``max_tokens``) before it was complete.

    ``max_tokens`` is the cap it hit; raise the model's cap (``LlamaCppModel(max_tokens=...)``,
    ``tether run/resume --max-tokens N``) and resume the run.
    """

    def __init__(self, message: str, *, max_tokens: int | None = None) -> None:
        super().__init__(message)
        self.max_tokens = max_tokens


class ScriptExhaustedError(ModelError):
    """A :class:`~tether.models.ScriptedModel` was called more times than it has responses."""


class ToolError(TetherError):
    """A tool definition is invalid (raised at definition time, never for a tool's run)."""


class ToolNameClashError(ToolError, ConfigurationError):
    """Two tools of one agent have the same name (e.g. a tool of an MCP server and a plain tool).

    A :class:`ToolError` (what the registry always raised for it) and a
    :class:`ConfigurationError` (the agent's tools are misconfigured); rename one, or give the
    tool source a ``prefix=``.
    """


class TransactionUnavailableError(ConfigurationError):
    """``ToolContext.transaction()`` was called where no store can commit a tool's effects with
    its result: a run without a ``run_id``, a run on a store other than
    :class:`~tether.durable.postgres.PostgresStore`, a Temporal activity. The message names the
    run and the store."""


class StructuredOutputError(TetherError):
    """The model did not produce valid structured output, even after a corrective turn."""


class ContextWindowExhaustedError(TetherError):
    """The conversation cannot be reduced further and still overflows the context window."""


class SnapshotError(TetherError, ValueError):
    """A snapshot is malformed, from an unsupported schema version, or cannot be applied."""


SnapshotException = SnapshotError
"""Alias of :class:`SnapshotError`, for users coming from SDKs that use that name."""


class CheckpointError(TetherError, ValueError):
    """A checkpoint is malformed or cannot be resumed by this agent."""


CheckpointException = CheckpointError
"""Alias of :class:`CheckpointError`, the name Strands uses."""


class CheckpointResumeError(CheckpointError, KeyError):
    """A ``checkpointResume`` block has no ``checkpoint`` key.

    Also a ``KeyError``, which Strands raises for it, so both kinds of ``except`` catch it.
    """

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class InterruptError(PromptError):
    """An interrupt response is invalid for the run's interrupt state (a prompt error: answers
    are a prompt, and every entry point refuses them with this class, :mod:`tether.answers`)."""


class IncompatibleResumeError(TetherError):
    """A resume was refused: the agent's code changed in a way the run's pending work cannot
    survive (a pending call's tool is gone, a required parameter was added or removed under it,
    its effect contract weakened). The message names every difference; nothing was written.

    ``verdict`` is the :class:`tether.manifest.Verdict` (its ``blocking`` differences are the
    ones to migrate or to pass in ``allow=[...]``).
    """

    def __init__(self, message: str, *, verdict: Any = None) -> None:
        super().__init__(message)
        self.verdict = verdict

    @property
    def differences(self) -> list[Any]:
        """The differences that refused the resume (:class:`tether.manifest.Difference`)."""
        return [] if self.verdict is None else list(self.verdict.blocking)


class HandleRejectedError(TetherError):
    """A handle a tool call keeps in its run while it waits on another system (an MCP
    ``requestState``, an MCP task id) is malformed, or that system refused it. The turn stops
    with this error; the run keeps the handle, the answers and its messages, so a resume tries
    again once the system accepts it (or the run is cancelled).

    Attributes:
        run_id: The run (None outside a durable run).
        tool_use_id: The tool call that keeps the handle.
        field: Where the handle lives in the run, e.g.
            ``state["tether.mcp"]["calls"]["t1"]["requestState"]``.
    """

    def __init__(self, message: str, *, run_id: str | None, tool_use_id: str, field: str) -> None:
        super().__init__(message)
        self.run_id = run_id
        self.tool_use_id = tool_use_id
        self.field = field


class ResultError(TetherError, TypeError):
    """A dict given to ``AgentResult.from_dict`` is not a serialized result, or a field of one
    is malformed. Also a ``TypeError``, which Strands raises for it."""


class StoreError(TetherError):
    """A run store holds corrupt data, a newer schema, or refused an operation."""


class LeaseLostError(StoreError):
    """This writer no longer owns the run: its lease was broken (``tether unlock``) or taken
    over after it was lost (a terminated database session, a removed lock file). Nothing was
    written; stop, and let the run's current owner go on (resume it if it is stalled)."""


class RunReplacedError(LeaseLostError):
    """The run this writer works on was deleted and a new run was created with the same id (a
    new *incarnation*, see :mod:`tether.durable.incarnation`). Nothing was written: the rows,
    blobs and revision the writer knows belong to the deleted run. Reload the run by its id to
    work on the new one."""


class RowTooLargeError(StoreError):
    """A row is larger than the store's ``max_row_bytes``: nothing was written. ``table`` and
    ``key`` name the row (``results`` and the toolUseId for a tool result, ``messages`` and the
    seq for a message); the message names the tool when a tool's output is the cause."""

    def __init__(self, message: str, *, table: str = "", key: str = "", size: int = 0, limit: int = 0) -> None:
        super().__init__(message)
        self.table, self.key, self.size, self.limit = table, key, size, limit


class PayloadTooLargeError(TetherError, ValueError):
    """A value is larger than the hard limit for one value of a run (``max_value_bytes`` of
    the Temporal worker and client): nothing was stored. The message names the field (e.g.
    ``state['report']``, a tool result, an interrupt reason); keep such data outside the run
    and store a reference to it instead."""


class RunEndedError(TetherError):
    """The run has ended (completed, failed, cancelled, terminated or timed out), so it will
    never stop for interrupts again; read its result instead."""


class ForkError(TetherError, ValueError):
    """A fork that cannot be made as asked (``TetherClient.fork``): the step is not one of the
    run's, the new run id is taken, or the run is not an agent run whose history this code can
    replay. The message names the run and the step; nothing was started."""


class CompensationError(TetherError):
    """A durable run cannot be compensated as asked (an unknown trigger, a damaged compensation
    record), or a compensated run was asked to go on: its effects were undone, so it is over."""


class RequestError(TetherError, ValueError):
    """A request to ``tether serve`` that cannot be carried out (malformed JSON, an unknown agent
    or run, an invalid interrupt answer, a body over the limit): answered with ``status`` and a
    JSON error naming the problem; nothing stored was changed."""

    def __init__(self, message: str, *, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


class RunNotFoundError(StoreError, LookupError):
    """No run with the given id exists in the store."""


class RunLockedError(StoreError):
    """Another live owner holds the run."""


def json_path(path: list[Any]) -> str:
    """Render a path like ``["data", "messages", 3, "content", 0]`` as ``data.messages[3].content[0]``.

    A key no UTF-8 text can hold (a lone surrogate) is written escaped (``\\ud800``), so the
    message that names it can always be printed, logged and sent.
    """
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            text = str(part).encode("utf-8", "backslashreplace").decode("utf-8")
            out += f".{text}" if out else text
    return out or "<root>"


class CrashTestError(TetherError, AssertionError):
    """A crashtest found crash points whose resumed run differed from the reference run."""


class ContractViolationError(TetherError, AssertionError):
    """The resume contract found a property violated (the message gives the smallest counterexample)."""


class CassetteError(TetherError, ValueError):
    """A cassette file cannot be read, is not a Tether cassette, or is damaged (the message names
    the file and the interaction); re-record it."""


class CassetteMismatchError(TetherError):
    """A model request differs from the one a cassette recorded (the message names the first differing field)."""
