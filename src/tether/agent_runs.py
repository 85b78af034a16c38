"""The durable runs of an agent: resume one, fork one at a step, replay one with another model.

:class:`DurableRuns` is a part of :class:`~tether.Agent` (which supplies ``store`` and the
invocation's event stream); a run's turns are the agent's own invocations with a ``run_id``
(:mod:`tether.durable`).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, cast

from ._sync import run_sync
from .budget import Budget
from .errors import ConfigurationError
from .events import AgentEvent, final_result
from .models.base import Model
from .result import AgentResult
from .types import Message

if TYPE_CHECKING:
    from .agent import Agent
    from .durable.history import Step
    from .durable.store import RunStore


class DurableRuns:
    """``resume``, ``fork`` and ``replay`` of an agent's durable runs, in its store; and the
    agent's side of :class:`~tether.runnable.Runnable` (what the server and Temporal call)."""

    kind: ClassVar[str] = "agent"
    """The shape on the wire (:class:`~tether.runnable.Runnable`)."""

    store: RunStore | None

    def _events(self, *args: Any, **kwargs: Any) -> AsyncGenerator[AgentEvent, None]:
        """One invocation's events (the agent's)."""
        raise NotImplementedError

    def resume(
        self,
        run_id: str,
        responses: list[dict[str, Any]] | None = None,
        *,
        budget: Budget | None = None,
        allow: Iterable[str] | None = None,
    ) -> AgentResult:
        """Finish the interrupted turn of durable run ``run_id`` (in any process).

        A finished run returns its last result without calling the model; ``responses`` are
        ``interruptResponse`` blocks answering the run's interrupts. A run that stopped with
        ``budget_exhausted`` goes on when resumed with a larger ``budget``. The run's manifest is
        judged against this agent first (:mod:`tether.manifest`): an incompatible change raises
        :class:`~tether.errors.IncompatibleResumeError` before anything is written.

        Args:
            run_id: The durable run, in the agent's store.
            responses: ``interruptResponse`` blocks answering its pending interrupts (in-doubt
                questions included), or None.
            budget: The run's budget from now on (default: the agent's ``budget``); what the
                run spent so far counts against it.
            allow: Incompatible differences to accept, by name (``"tool_removed:charge"``) or
                code (``"tool_removed"``), as the error names them.
        """
        return run_sync(self.resume_async(run_id, responses, budget=budget, allow=allow))

    def fork(
        self,
        run_id: str,
        at: int | Step,
        new_run_id: str | None = None,
        edit: Callable[[list[Message]], list[Message]] | dict[str, Any] | None = None,
    ) -> str:
        """Start a new durable run from step ``at`` of ``run_id`` (see ``store.history``); returns its id.

        ``edit`` changes the messages at that step (a callable returning the new list, or a
        message dict replacing the last message). The original run is left untouched; continue
        the fork with ``agent.resume(new_id)`` or ``agent(prompt, run_id=new_id)``.

        Args:
            run_id: The run to fork, in the agent's store.
            at: The step number, or a :class:`~tether.durable.Step` of ``store.history(run_id)``.
            new_run_id: The new run's id (default: ``RUN.fork-N``).
            edit: A callable returning the new message list, or a message replacing the last one.
        """
        from .durable.fork import fork_run

        return fork_run(self._store(), run_id, at, new_run_id=new_run_id, edit=edit)

    def replay(
        self,
        run_id: str,
        at: int | Step,
        model: Model | None = None,
        edit: Callable[[list[Message]], list[Message]] | dict[str, Any] | None = None,
        new_run_id: str | None = None,
    ) -> AgentResult:
        """Fork ``run_id`` at step ``at`` and run the fork on with ``model`` (default: this agent's).

        The recorded model responses and tool results up to the step are replayed from the store
        (nothing is called again); ``edit`` overrides the messages there, as for :meth:`fork`.
        ``result.divergence`` tells where the new run first differs from the original (see
        :mod:`tether.durable.replay`).
        """
        from .durable.replay import replay_run

        return run_sync(replay_run(cast("Agent", self), self._store(), run_id, at, model=model, edit=edit, new_run_id=new_run_id))

    def resume_stream(self, prompt: Any, /, *, run_id: str) -> AsyncGenerator[AgentEvent, None]:
        """The events (deltas included) of continuing durable run ``run_id``, as :meth:`resume_async`
        does (``prompt``: ``interruptResponse`` blocks answering its interrupts, or None)."""
        return self._events(prompt, forward_deltas=True, run_id=run_id, resume=True)

    def owns_state(self, state: Mapping[str, Any]) -> bool:
        """False: an agent's run keeps no description of the agent (the server records the
        registry name it was started under instead)."""
        return False

    def child(self, step: str, where: str | None = None) -> object:
        """The agent of this agent's agent tool ``step`` (a fresh one, as a call of the tool runs).

        Raises:
            ConfigurationError: The agent has no agent tool ``step``.
        """
        from .agent_tool import AgentTool

        tool = cast("Agent", self).tool_registry.get(step)
        if not isinstance(tool, AgentTool):
            raise ConfigurationError(f"agent {where or cast('Agent', self).name!r} has no agent tool named {step!r}")
        return tool.runner()

    def _store(self) -> RunStore:
        """The agent's store, created on first use (``$TETHER_HOME/runs.db``) when none was given."""
        if self.store is None:
            from .durable.runner import default_store

            self.store = default_store()
        return self.store

    async def resume_async(
        self,
        run_id: str,
        responses: list[dict[str, Any]] | None = None,
        *,
        budget: Budget | None = None,
        allow: Iterable[str] | None = None,
    ) -> AgentResult:
        """Async :meth:`resume`.

        Args:
            run_id: The durable run, in the agent's store.
            responses: ``interruptResponse`` blocks answering its pending interrupts, or None.
            budget: The run's budget from now on (see :meth:`resume`).
            allow: Incompatible differences to accept (see :meth:`resume`).
        """
        events = self._events(responses, forward_deltas=False, run_id=run_id, resume=True, budget=budget, allow=allow)
        return cast(AgentResult, await final_result(events))


__all__ = ["DurableRuns"]
