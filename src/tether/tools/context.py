"""`ToolContext`: what a tool may know about the call it serves."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..effects.scope import NO_STORE, CallTransaction, EffectScope
from ..errors import ConfigurationError, TransactionUnavailableError
from ..interrupts import InterruptRaiser
from ..types import JSONValue, ToolUse

if TYPE_CHECKING:
    import httpx

    from ..agent import Agent
    from ..budget import Budget
    from ..types import LoopEvent


@dataclass
class ToolContext:
    """Passed to a tool whose parameter is annotated ``ToolContext`` (left out of its schema).

    ``invocation_state`` is the dict the caller passed to the invocation (not persisted);
    ``idempotency_key`` is stable across resumes of the same tool call, so a re-run of an
    in-doubt call can be deduplicated by the system it talks to.

    Attributes:
        tool_use: The call (``toolUseId``, ``name``, ``input``).
        agent: The agent running the call.
        invocation_state: The caller's per-call dict (not persisted).
        run_id: The durable run's id, or None outside a durable run.
        pausable: The caller pauses at checkpoints (``Agent(checkpointing=...)``) and can pause
            in the middle of this call: the tool may raise ``tether.interrupts.PauseSignal``.
        budget: What a nested run of this call may spend (None: the run has no budget): what is
            left of the calling run's budget as the call begins, less the round's own tool
            calls, split evenly among the round's calls of agent tools when they run at once
            (see :meth:`tether.loop.core.LoopCore.round_budget`); an agent tool's child run
            receives it.
    """

    tool_use: ToolUse
    agent: Agent
    invocation_state: dict[str, Any] = field(default_factory=dict)
    run_id: str | None = None
    pausable: bool = False
    budget: Budget | None = None
    _raiser: InterruptRaiser | None = None
    _emit: Callable[[LoopEvent], None] | None = None
    _on_recorded: list[Callable[[], None]] = field(default_factory=list)
    _effects: EffectScope | None = None
    _save: Callable[[], Awaitable[None]] | None = None
    _cancelled: Callable[[], bool] | None = None

    @property
    def idempotency_key(self) -> str:
        """``run_id/toolUseId`` (the tool-use id alone when the run has no id)."""
        tool_use_id = self.tool_use["toolUseId"]
        return f"{self.run_id}/{tool_use_id}" if self.run_id else tool_use_id

    @property
    def http(self) -> httpx.AsyncClient:
        """The invocation's ``httpx.AsyncClient`` (made on first use, closed when the invocation
        ends): its ``POST`` and ``PATCH`` requests carry this call's :attr:`idempotency_key` as
        ``Idempotency-Key``, so a re-run of an in-doubt call is deduplicated by the API (see
        :mod:`tether.effects.http`; needs ``tether[http]``)."""
        if self._effects is None:
            raise ConfigurationError(
                f"tool call {self.tool_use['toolUseId']!r}: this context has no invocation to share an HTTP client with; "
                "use tether.effects.http_client() (it sends the same header)"
            )
        return self._effects.http

    def transaction(self) -> CallTransaction:
        """``async with context.transaction() as conn:``: a psycopg connection in a transaction
        that commits together with the store write recording this call's result, on a durable
        run stored in a :class:`~tether.durable.postgres.PostgresStore` (the PostgreSQL outbox).

        What the tool writes through ``conn`` happens exactly when its result is recorded: a
        crash before that rolls it back and the call runs again; a recorded result means it
        committed. Declare the tool ``@tool(transactional=True)`` so in-doubt handling re-runs
        it without a reconcile. An error result rolls the call's writes back; an exception
        leaving a block undoes that block's statements; the tool must not commit ``conn``
        itself. Several blocks in one call share the transaction; calls of one run take turns
        (a second call's block waits until the first call's result is stored). A synchronous
        tool uses ``with`` instead of ``async with``.

        Raises:
            TransactionUnavailableError: The run is not durable, or its store is not a
                PostgresStore, or the call runs outside the agent's loop (a Temporal activity).
        """
        if self._effects is None:
            raise TransactionUnavailableError(f"tool call {self.tool_use['toolUseId']!r}: {NO_STORE}")
        return self._effects.transaction(self.tool_use["toolUseId"])

    def interrupt(self, name: str, reason: JSONValue = None) -> JSONValue:
        """Ask a human: stops the run the first time, returns the answer after the resume."""
        if self._raiser is None:
            raise RuntimeError("this ToolContext cannot raise interrupts")
        return self._raiser(name, reason)

    async def save(self) -> None:
        """Store the run now, with what this call keeps in the run's state so far, in a durable
        run (a no-op elsewhere): for a handle of work that outlives the process (an MCP task id),
        so a resumed run finds it and waits for that work instead of starting it again (the tool
        says so through :meth:`~tether.tools.base.Tool.keeps_handle`)."""
        if self._save is not None:
            await self._save()

    @property
    def cancel_requested(self) -> bool:
        """Whether the invocation was asked to stop (``agent.cancel()``): a tool that waits on
        another system may give up early (an MCP task is cancelled on its server)."""
        return self._cancelled is not None and self._cancelled()

    def on_recorded(self, apply: Callable[[], None]) -> None:
        """Run ``apply`` when this call's result is recorded in the run, in the same step (and
        the same store write) as the result, and never if the call ends without a result.

        For bookkeeping in the run that belongs to the result, such as an agent tool's roll-up
        of its child's usage: applied while the call was still running, a store write of a
        sibling call's result could record it without the result, and a resumed run, running
        the call again, would apply it twice. (Changes through ``context.agent.state`` need
        nothing of the kind: they are stored with the call's outcome by themselves.)
        """
        self._on_recorded.append(apply)

    def recorded(self) -> list[Callable[[], None]]:
        """What :meth:`on_recorded` registered, in order (the driver runs them)."""
        return list(self._on_recorded)

    def emit(self, event: LoopEvent) -> None:
        """Add ``event`` to the caller's ``stream_async`` while the tool runs (a tool whose class
        sets ``streams_events = True``; a no-op for other tools and where nothing streams, such
        as a Temporal activity). An agent used as a tool forwards its child's events this way."""
        if self._emit is not None:
            self._emit(event)
