"""`TetherSessionManager`: Tether as the durability provider of real strands-agents agents.

One line makes a Strands program durable::

    from strands import Agent
    from tether.strands.session_manager import TetherSessionManager

    agent = Agent(model=..., tools=[...], session_manager=TetherSessionManager("user-42"))
    agent("Book the usual trip")

Each agent of the session is an ordinary Tether run (``strands.<session_id>.<agent_id>``, see
:mod:`tether.strands._run`) in a :class:`~tether.durable.store.RunStore`: every message, state
change, tool start and tool result is written through the native durable write path, fenced by
the run's lease, so ``tether runs/show/view/fork/resume/rm/export`` read it.

**Crash recovery.** The manager records the prompt of the open turn. When the same program is
started again after a crash (kill -9 anywhere) and makes the same call (``agent("same prompt")``),
the cut-off turn is finished instead of a new one started: the stored conversation is restored
without the model's last response, which is handed back in place of a new model call (a
response with tool calls is put back into the history, so Strands runs that cycle's tools through
the agent's tool executor; a final answer is replayed through an ``InvokeModelStage`` middleware).
The program's callback handler gets the recorded responses streamed as a model call streams them
(:mod:`tether.strands._echo`).
The tool executor (:class:`~tether.strands.executor.TetherToolExecutor`, installed around the
agent's own) returns the recorded results and runs only the missing calls; a call that started but
has no recorded result is *in doubt* (see the executor). A pending Strands interrupt is asked
again (the turn's interrupted tools run again and raise it), so the same program answers it as it
did the first time; a turn cut off after its interrupts were answered gets its recorded stops
handed back, one per call, then continues from the record (:mod:`tether.strands._stops`). A
message the program appended to ``agent.messages`` by hand before the cut-off call is restored
once. With ``checkpointing=True`` the restarted turn pauses at the checkpoints the
uninterrupted one paused at from the cut-off point on.

**Telling a resume from a new invocation.** ``invocation_state["tether"]`` (set by the manager in
``BeforeInvocationEvent``, so seen by every later hook, by tools through ``tool_context`` and by the
model) is ``{"run_id", "resumed", "idempotency_keys"}``; ``resumed`` is True for the invocation
that finishes a cut-off turn. :meth:`TetherSessionManager.resumed` tells the same from outside.

**Metrics** (token usage, model calls, tool calls, cycles) accumulate in the run's head across
invocations, resumes and processes: :meth:`TetherSessionManager.metrics`.

**One owner at a time.** The manager holds each run's lease from the agent's initialization until
:meth:`close` (or the end of the process): a second process opening the same session gets
:class:`~tether.errors.RunLockedError` naming the run and ``tether unlock``.
"""

from __future__ import annotations

import copy
import os
from collections.abc import AsyncGenerator, Callable, Iterable
from typing import TYPE_CHECKING, Any, cast

from strands.agent.state import AgentState
from strands.hooks import AfterInvocationEvent, BeforeInvocationEvent, BeforeToolCallEvent, HookRegistry
from strands.middleware import ExecuteToolStage, InvokeModelStage, ModelStopReason
from strands.middleware._agent_stream import AgentStreamStage
from strands.session.session_manager import SessionManager
from strands.types.exceptions import SessionException
from strands.types.session import SessionAgent

from .._json import json_copy
from ..durable.indoubt import InDoubtCall
from ..durable.store import RunStore
from ..errors import PromptError
from ..types import InterruptState
from ._binding import AgentBinding
from ._echo import response_events, turn_responses
from ._mcp import key_mcp_calls
from ._metrics import USAGE_FIELDS, recorded_usage, restore, snapshot
from ._multiagent import MultiAgentRuns
from ._run import FINAL_STOPS, StrandsRun, prompt_key, tool_uses
from ._stops import StopReplay, answered, hand_back, record_answer, record_stop
from ._store import open_store
from .executor import TetherToolExecutor

if TYPE_CHECKING:
    from strands import Agent
    from strands.middleware import InvokeModelContext
    from strands.multiagent.base import MultiAgentBase

Reconcile = Callable[[InDoubtCall], Any]
"""Decides an in-doubt call of a non-idempotent tool: ``tether.durable.RERUN`` or the result to record."""


class TetherSessionManager(SessionManager):
    """Strands' ``SessionManager`` storing each agent of session ``session_id`` as a Tether run.

    Args:
        session_id: The Strands session id (``agent("...")`` with the same id continues it).
        store: Where the runs live: None for Tether's default store (``$TETHER_HOME/runs.db``, else
            the user's data directory: the store ``tether runs`` reads without ``--store``); a path
            or ``sqlite:///`` URL of a SQLite file; a ``postgresql://`` URL; or a ``RunStore``.
        non_idempotent: Names of tools that must not run twice blindly: an in-doubt call of one
            goes to ``reconcile``, or without it stops the turn with a ``tether.in_doubt`` interrupt
            (answer ``"rerun"`` or the result to record). Every other tool is idempotent: an
            in-doubt call runs again with the same idempotency key
            (:func:`tether.strands.executor.idempotency_key`).
        reconcile: Decides an in-doubt call of a non-idempotent tool (see ``non_idempotent``).
    """

    def __init__(
        self,
        session_id: str,
        *,
        store: RunStore | str | os.PathLike[str] | None = None,
        non_idempotent: Iterable[str] = (),
        reconcile: Reconcile | None = None,
    ) -> None:
        if not isinstance(session_id, str) or not session_id:
            raise SessionException(f"session_id must be a non-empty string, got {session_id!r}")
        self.session_id = session_id
        self.store, self._owns_store = open_store(store)
        self.non_idempotent = frozenset(non_idempotent)
        self.reconcile = reconcile
        self._agents: dict[str, AgentBinding] = {}
        self._multi = MultiAgentRuns(self)

    # -- Strands' SessionManager interface -------------------------------------------------

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        """Strands' persistence hooks, plus the turn bookkeeping and the tool-start markers."""
        super().register_hooks(registry, **kwargs)
        registry.add_callback(BeforeInvocationEvent, self._before_invocation)
        registry.add_callback(AfterInvocationEvent, self._after_invocation)
        registry.add_callback(BeforeToolCallEvent, self._before_tool_call)

    def initialize(self, agent: Agent, **kwargs: Any) -> None:
        """Bind ``agent`` to its run: take the lease, restore a stored run, install the executor."""
        if agent.agent_id in self._agents:
            raise SessionException("The `agent_id` of an agent must be unique in a session.")
        run = StrandsRun(self.store, self.session_id, agent.agent_id)
        binding = AgentBinding(agent, run)
        try:
            if run.stored is None:
                self._record_fields(binding)
                run.session.timeline.status = "finished"
                run.write(binding.messages())
            else:
                self._restore(binding)
            agent.tool_executor = TetherToolExecutor(agent.tool_executor, self)
            agent.add_middleware(AgentStreamStage, StopReplay(self.binding))  # once per invocation: hands back recorded stops
            agent.add_middleware(ExecuteToolStage, key_mcp_calls)  # an MCP server reads the call's idempotency key
        except BaseException:
            run.close()
            raise
        self._agents[agent.agent_id] = binding

    def append_message(self, message: Any, agent: Agent, **kwargs: Any) -> None:
        """Store ``message`` (just appended to the agent) with the step it ends."""
        binding = self._binding(agent)
        run = binding.run
        cursor = run.run.cursor
        metrics = run.run.metrics
        position: str | None
        pending: dict[str, int] | None = None
        if message["role"] == "assistant":
            position = "after_model"
            # Strands counts a response's usage just after storing it: the step gets it now
            pending, timing = recorded_usage(message)
            binding.prompt_latest = False
            if message is binding.replayed:
                binding.replayed = None
            else:
                metrics["model_call_count"] += 1
                metrics["model_latency_ms"] = float(metrics.get("model_latency_ms", 0.0)) + timing["latencyMs"]
            uses = tool_uses(message)
            cursor.phase = "tools" if uses else "model"
            cursor.results = {}
            # The idempotent calls are recorded as started with the response (one write fewer per
            # cycle, as native runs do): one that never begins is in doubt after a crash and runs
            # again with the same key, which is what a call that never started does anyway.
            cursor.started = [use["toolUseId"] for use in uses if use["name"] not in self.non_idempotent]
            binding.premarked = set(cursor.started)
        elif any("toolResult" in block for block in message.get("content", [])):
            position = "after_tools"
            cursor.cycle_index += 1
            cursor.results = {}
            cursor.started = []
            cursor.phase = "model"
            metrics["cycle_count"] += 1
        else:
            position = "turn_start" if binding.turn_new else None
            binding.turn_new = False
            cursor.phase = "model"
        self._record_fields(binding, pending)
        if position in ("turn_start", "after_tools"):  # a cycle boundary: Strands' metrics, for a resumed turn
            run.strands["metrics"] = snapshot(agent.event_loop_metrics)
        run.write(binding.messages(), position)

    def redact_latest_message(self, redact_message: Any, agent: Agent, **kwargs: Any) -> None:
        """Strands redacts the message in the agent's history: store the history as it is now
        (a rewritten message starts a new live segment; stored rows are never rewritten)."""
        binding = self._binding(agent)
        turn = binding.run.strands.get("turn")
        if binding.prompt_latest and isinstance(turn, dict) and turn.get("prompt"):
            # The redacted message is the prompt's last one: the turn keeps the redacted prompt (no
            # copy of what was removed stays in the head; a restart is told so: _before_invocation).
            count = len(turn["prompt"])
            turn["prompt"] = prompt_key(binding.agent.messages[-count:])
            turn["redacted"] = True
        binding.run.session.persisted = []  # the redacted message differs from its stored row
        binding.run.write(binding.messages())

    def sync_agent(self, agent: Agent, **kwargs: Any) -> None:
        """Store the agent's state, conversation-manager state, interrupt and model state if they changed."""
        binding = self._agents.get(agent.agent_id)
        if binding is None or binding.agent is not agent or binding.replaying is not None:
            return  # (while recorded stops are handed back, the run is ahead of the agent)
        before = binding.written
        self._record_fields(binding)
        session = binding.run.session
        messages = binding.messages()
        persisted = session.persisted
        # The stored conversation's first and last messages, the same objects at the same length:
        # nothing appended, dropped or rewritten (the session's own test for an append; O(1)).
        unchanged_messages = len(messages) == len(persisted) and (
            not messages or (messages[0] is persisted[0] and messages[-1] is persisted[-1])
        )
        if binding.written == before and unchanged_messages:
            return
        try:
            binding.run.write(messages)
        except BaseException:
            binding.written = before  # not stored: the next sync writes the change again
            raise

    def initialize_multi_agent(self, source: MultiAgentBase, **kwargs: Any) -> None:
        """Bind a graph or swarm and its agent nodes to their runs (see :mod:`tether.strands._multiagent`)."""
        self._multi.initialize(source)

    def sync_multi_agent(self, source: MultiAgentBase, **kwargs: Any) -> None:
        """Store the graph's or swarm's state (Strands' ``serialize_state``) after each node and invocation."""
        self._multi.sync(source)

    # -- the public extras ---------------------------------------------------------------------

    def run_id(self, agent: Agent) -> str:
        """The Tether run id of ``agent`` in this session (``tether show RUN_ID``)."""
        return self._binding(agent).run.run_id

    def resumed(self, agent: Agent | MultiAgentBase) -> bool:
        """True while (and after) ``agent``'s current invocation finishes a turn cut off by a crash
        (for a graph or swarm: resumes an execution cut off by a crash)."""
        multi = self._multi.resumed(agent)
        return multi if multi is not None else self._binding(cast("Agent", agent)).resumed

    def metrics(self, agent: Agent) -> dict[str, Any]:
        """The run's metrics, accumulated over every invocation, resume and process (a copy)."""
        return cast("dict[str, Any]", json_copy(self._binding(agent).run.run.metrics))

    def close(self) -> None:
        """Release every run's lease (and close the store if the manager opened it)."""
        for binding in self._agents.values():
            binding.run.close()
        self._multi.close()
        self._agents.clear()
        if self._owns_store:
            self.store.close()
            self._owns_store = False

    def __enter__(self) -> TetherSessionManager:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- internals -------------------------------------------------------------------------------

    def binding(self, agent: Any) -> AgentBinding | None:
        """The binding of ``agent`` if this manager initialized it (the executor asks)."""
        binding = self._agents.get(getattr(agent, "agent_id", None) or "")
        return binding if binding is not None and binding.agent is agent else self._multi.binding(agent)

    def _binding(self, agent: Agent) -> AgentBinding:
        binding = self.binding(agent)
        if binding is None:
            raise SessionException(f"agent {agent.agent_id!r} was not initialized by this session manager ({self.session_id!r})")
        return binding

    def _record_fields(self, binding: AgentBinding, pending: dict[str, int] | None = None) -> None:
        """Copy the agent's state, conversation-manager, interrupt and model state into the run
        (``pending``: the usage of the model response being stored, which Strands counts right after)."""
        agent = binding.agent
        # What Strands' SessionAgent.from_agent(agent) reads, without building a SessionAgent
        # (its timestamps cost more than the rest, and this runs at every message).
        interrupt_state = agent._interrupt_state.to_dict() if binding.held_interrupts is None else binding.held_interrupts
        fields = {
            "state": _agent_state(binding),
            "conversation_manager_state": agent.conversation_manager.get_state(),
            "interrupt_state": interrupt_state or {},
            "model_state": agent._model_state or {},
        }
        if fields != binding.written:
            binding.written = cast("dict[str, Any]", json_copy(fields))
        run = binding.run.run
        run.state = binding.written["state"]
        run.model_state = binding.written["model_state"]
        table = interrupt_state.get("interrupts") or {}
        view: dict[str, Any] = {  # Tether's view: the interrupts and whether the run waits for answers
            "interrupts": {ident: {key: item.get(key) for key in ("id", "name", "reason", "response")} for ident, item in table.items()},
            "activated": bool(interrupt_state.get("activated")),
        }
        run.interrupt_state = cast("InterruptState", view)
        binding.run.strands["agent"] = binding.written
        usage: dict[str, Any] = dict(agent.event_loop_metrics.accumulated_usage)
        for key, value in (pending or {}).items():
            usage[key] = int(usage.get(key, 0)) + value
        run.metrics["usage"] = {
            "input_tokens": binding.usage_base.get("input_tokens", 0) + int(usage.get("inputTokens", 0)),
            "output_tokens": binding.usage_base.get("output_tokens", 0) + int(usage.get("outputTokens", 0)),
            "total_tokens": binding.usage_base.get("total_tokens", 0) + int(usage.get("totalTokens", 0)),
        }

    def _restore(self, binding: AgentBinding) -> None:
        """Make the agent what its stored run says (Strands' own restore calls, in its order)."""
        agent, run = binding.agent, binding.run
        fields = run.strands.get("agent") or {}
        messages: list[Any] = list(run.run.messages)
        turn = run.strands.get("turn") or {}
        interrupt_state = copy.deepcopy(fields.get("interrupt_state") or {})
        if turn.get("open"):
            binding.recovering = True
            if messages and messages[-1]["role"] == "assistant":
                binding.held = messages.pop()
            if interrupt_state.get("activated"):
                binding.held_interrupts = interrupt_state
                interrupt_state = {**interrupt_state, "activated": False, "pending_tool_execution": None}
        binding.stops = [stop for stop in turn.get("stops") or [] if "answer" in stop] if binding.recovering else []
        binding.crash_interrupts = interrupt_state
        stored_usage: dict[str, Any] = dict(run.run.metrics.get("usage") or {})
        binding.usage_base = {key: int(value) for key, value in stored_usage.items()}
        if binding.held is not None:  # stored with its usage, which the resumed turn counts again (_resume)
            for key, value in recorded_usage(binding.held)[0].items():
                field = USAGE_FIELDS[key]
                binding.usage_base[field] = binding.usage_base.get(field, 0) - value
        carried = run.strands.get("metrics")
        if binding.recovering and isinstance(carried, dict):  # the cut-off turn's result.metrics go on (see _metrics)
            added = restore(agent.event_loop_metrics, carried)
            binding.metrics_restored = True  # usage up to the last cycle boundary: counted (see _multiagent's usage)
            for key, name in (("input_tokens", "inputTokens"), ("output_tokens", "outputTokens"), ("total_tokens", "totalTokens")):
                binding.usage_base[key] = binding.usage_base.get(key, 0) - added[name]  # counted once in the run's metrics
        internal: dict[str, Any] = {"model_state": copy.deepcopy(fields.get("model_state") or {})}
        if interrupt_state:
            internal["interrupt_state"] = interrupt_state
        state = copy.deepcopy(fields.get("state") or {})
        SessionAgent(agent.agent_id, state, {}, internal).initialize_internal_state(agent)
        agent.state = AgentState(state)
        prepend = agent.conversation_manager.restore_from_session(copy.deepcopy(fields.get("conversation_manager_state") or {})) or []
        if prepend and prompt_key(messages[: len(prepend)]) == prompt_key(prepend):
            prepend = []
        if not agent.model.stateful:
            agent.messages = [*prepend, *messages]
            binding.restored = agent.messages if binding.recovering else None
            start, count = (turn.get("added") or (0, 0)) if binding.recovering else (0, 0)
            if count and 0 <= start and start + count <= len(messages):
                # Messages the program appended to ``agent.messages`` by hand before the cut-off
                # call: the restarted program appends them again before making that call, so the
                # agent gets the conversation without them; the resumed call takes the stored one
                # (with them, once) when what the program has is its prefix (``_before_invocation``).
                agent.messages = [*prepend, *messages[:start], *messages[start + count :]]
        binding.written = cast("dict[str, Any]", json_copy(fields)) if fields else {}

    def _before_invocation(self, event: BeforeInvocationEvent) -> None:
        binding = self.binding(event.agent)
        if binding is None:
            return
        binding.reading = event.messages is None
        if binding.reading:  # Agent.structured_output(): it reads the conversation, adds nothing: no turn
            return
        run = binding.run
        new = list(event.messages or [])
        tether = {"run_id": run.run_id, "resumed": False, "idempotency_keys": {}}
        event.invocation_state["tether"] = tether
        binding.resumed = False
        turn = run.strands.get("turn")
        if binding.recovering:
            assert turn is not None  # a turn is open when recovering
            if new and prompt_key(new) != turn.get("prompt") and turn.get("redacted"):
                raise PromptError(
                    f"run {run.run_id!r} (Strands session {self.session_id!r}, agent {binding.agent.agent_id!r}) has a turn cut off "
                    f"by a crash whose prompt was redacted (a guardrail), so the original call cannot be recognised: call the agent "
                    f"without a prompt (agent()) to finish that turn from its redacted conversation "
                    f"(or delete the run with `tether rm {run.run_id}`)"
                )
            if new and prompt_key(new) != turn.get("prompt"):
                raise PromptError(
                    f"run {run.run_id!r} (Strands session {self.session_id!r}, agent {binding.agent.agent_id!r}) has a turn cut off "
                    f"by a crash, started with another prompt ({_brief(turn.get('prompt'))}); make that call again to finish it "
                    f"(or delete the run with `tether rm {run.run_id}`)"
                )
            binding.recovering = False
            restored = binding.restored
            if restored is not None and binding.agent.messages is not restored:
                # the conversation was set again since the restore (``load_snapshot``, Strands'
                # summarizing manager): the stored turn continues it if it is the same, prompt included
                again = [*binding.agent.messages, *new]
                if _plain(again) == _plain(restored[: len(again)]):
                    binding.agent.messages = restored
            binding.restored = None
            event.messages = []
            tether["resumed"] = binding.resumed = True
            if binding.stops:  # the turn stopped for interrupts and was answered before the crash: see _stops
                binding.full = binding.agent.messages
                hand_back(binding)
            else:
                self._resume(binding)
            return
        if binding.replaying is not None:  # the program answers a stop handed back (see _stops)
            tether["resumed"] = binding.resumed = True
            if answered(binding, self.session_id):
                self._resume(binding)
            return
        if new or turn is None or not turn.get("open"):
            run.strands["turn"] = {"open": True, "prompt": prompt_key(new)}
            binding.prompt_latest = bool(new)
            added = _added_by_hand(binding.messages(), run.session.persisted)
            if added:  # the program appended them itself before this call: see _restore
                run.strands["turn"]["added"] = [len(binding.messages()) - added, added]
            binding.turn_new = True
            if not new:
                binding.turn_new = False
                run.run.cursor.phase = "model"
                run.strands["metrics"] = snapshot(binding.agent.event_loop_metrics)
                run.write(binding.messages(), "turn_start")
        else:
            record_answer(run.strands["turn"], binding.agent)

    def _resume(self, binding: AgentBinding) -> None:
        """Put the cut-off turn's held response and interrupts back (see the module docstring)."""
        agent = binding.agent
        if binding.held_interrupts is not None:
            state = copy.deepcopy(binding.held_interrupts)
            for item in (state.get("interrupts") or {}).values():
                item["response"] = None  # asked again: the program answers as it did
            (state.get("context") or {}).pop("responses", None)
            binding.held_interrupts = None
            SessionAgent(agent.agent_id, agent.state.get(), {}, {"interrupt_state": state}).initialize_internal_state(agent)
        held: Any = binding.held
        binding.held = None
        binding.echo = turn_responses(agent.messages)  # streamed to the callback handler, as uninterrupted
        if held is None:
            return
        binding.reused = held
        if tool_uses(held):
            agent.messages.append(held)  # the stored response: Strands runs its tools next
            binding.echo.append(held)
            usage, metrics = recorded_usage(held)  # counted as when it was received (see _metrics)
            agent.event_loop_metrics.update_usage(usage)
            agent.event_loop_metrics.update_metrics(metrics)
        else:
            binding.replay = held
            if not binding.replay_installed:  # added for the first replay only: no layer on every model call
                binding.replay_installed = True
                agent.add_middleware(InvokeModelStage, self._replay)

    async def _replay(self, context: InvokeModelContext, next_fn: Any) -> AsyncGenerator[Any, None]:
        """``InvokeModelStage`` middleware: a resumed turn's recorded final answer instead of a new call."""
        binding = self.binding(context.agent)
        if binding is None or binding.replay is None:
            async for event in next_fn(context):
                yield event
            return
        message, binding.replay = binding.replay, None
        binding.replayed = message
        async for event in response_events(message):  # the callback handler sees it streamed, as from the model
            yield event
        usage, metrics = recorded_usage(message)  # the message keeps its metadata; its tokens count once (see _metrics)
        yield ModelStopReason("end_turn", message, usage, metrics)  # type: ignore[arg-type]

    def _after_invocation(self, event: AfterInvocationEvent) -> None:
        binding = self.binding(event.agent)
        if binding is None or binding.reading or binding.replaying is not None:
            return  # (a stop handed back again: the run has it)
        run = binding.run
        turn = run.strands.get("turn") or {}
        result = event.result
        reason = None if result is None else str(result.stop_reason)
        if reason == "interrupt" and result is not None and turn.get("open"):
            record_stop(turn, binding, result)
        if reason is None:
            status = "failed"
        elif reason in FINAL_STOPS:
            status = "finished"
            turn["open"] = False
            run.run.cursor.phase = "idle"
        else:
            status = {"interrupt": "interrupted", "checkpoint": "paused"}.get(reason, "failed")
        self._record_fields(binding)
        run.write(binding.messages(), "turn_end", status=status, stop_reason=reason)

    def _before_tool_call(self, event: BeforeToolCallEvent) -> None:
        """The start marker of a non-idempotent call, written right before it runs (idempotent
        calls are marked in one write before the batch: see the executor)."""
        binding = self.binding(event.agent)
        if binding is None or event.tool_use["name"] not in self.non_idempotent:
            return
        cursor = binding.run.run.cursor
        ident = event.tool_use["toolUseId"]
        if ident not in cursor.started:
            cursor.started.append(ident)
            binding.run.session.timeline.tool_started(ident)
            binding.run.write(binding.messages())


def _agent_state(binding: AgentBinding) -> Any:
    """The agent's state (``agent.state.get()``), read again only when it may have changed.

    ``agent.state.get()`` deep-copies the whole state, and the manager asks at every message
    (twice: Strands syncs the agent after each message it stores). Strands' ``AgentState``
    counts its changes (every ``set`` and ``delete``; ``get`` hands out copies, so nothing
    else changes it): while the agent has the same state object at the same count, the copy
    read last is still its value. That copy is the manager's own (never stored, never handed
    out), so it cannot have changed either. A state without the counter is read every time.
    """
    state = binding.agent.state
    counter = getattr(state, "_get_version", None)
    version = counter() if callable(counter) else None
    seen = binding.state_seen
    if version is not None and seen is not None and seen[0] is state and seen[1] == version:
        return seen[2]
    value = state.get()
    binding.state_seen = None if version is None else (state, version, value)
    return value


def _added_by_hand(live: list[Any], persisted: list[Any]) -> int:
    """How many messages at the end of ``live`` (the agent's conversation) came after the last
    stored one: appended to ``agent.messages`` by the program itself, not through Strands."""
    if not persisted:
        return 0
    last = persisted[-1]
    for index in range(len(live) - 1, -1, -1):
        if live[index] is last:
            return len(live) - 1 - index
    return 0


def _plain(messages: list[Any]) -> list[Any]:
    """``messages`` as compared across a restore: without what Strands adds on append."""
    return [{"role": message.get("role"), "content": message.get("content")} for message in messages]


def _brief(prompt: Any) -> str:
    text = repr(prompt)
    return text if len(text) <= 80 else text[:77] + "..."


__all__ = ["AgentBinding", "Reconcile", "TetherSessionManager"]
