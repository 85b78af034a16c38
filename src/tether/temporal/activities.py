"""The activities of an agent run: describe the agent, one model call, one tool call, finish.

Each activity rebuilds the agent from the registry (name + JSON config), reads what it needs
from the :class:`BlobStore` and returns compact, JSON-only results, so no payload grows with
the conversation. They perform effects exactly as the local driver does (same stream folding,
same hooks, same tool invocation and ids), which is why a run gives the same messages here as
in-process. Failures that a retry cannot fix become non-retryable ``ApplicationError``s.

Activities are at least once: a worker that dies mid-activity leaves the attempt lost, and
Temporal starts another. Model calls and idempotent tools simply run again (a tool sees the
same ``idempotency_key`` on every attempt); a tool declared ``idempotent=False`` runs as a
single attempt and a lost one is settled by :meth:`TetherActivities.reconcile`, as a local
durable run settles an in-doubt call. Model and tool activities heartbeat, so a dead worker is
noticed within the heartbeat timeout; a sync tool always runs in a thread here, so it cannot
starve the heartbeats (or the worker) by blocking the event loop.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from temporalio import activity

from .._json import json_copy
from ..agent_config import invocation_budget
from ..budget import Budget
from ..errors import ConfigurationError, ModelThrottledError, TetherError
from ..hooks import AfterInvocation, BeforeInvocation, MessageAdded
from ..loop.host import LoopHost
from ..loop.model_call import ModelResponse, respond
from ..loop.state import RunState
from ..loop.tool_call import call_tool
from ..loop.tracing import Span
from ..telemetry import remote_parent
from ..tools.executors import SequentialToolExecutor
from ..tools.registry import ToolRegistry
from ..types import JSONValue, Message
from .activity_io import (
    AgentRef,
    CallModelInput,
    ChildAnswerInput,
    ChildPromptInput,
    Described,
    Finished,
    FinishInput,
    HookInput,
    ListedTools,
    ModelOutput,
    RunToolInput,
    StateChanges,
    ToolOutcome,
)
from .activity_runtime import NOT_RETRYABLE, Pulse, fatal_errors, fresh_run, heartbeating, threaded_host
from .claimcheck import expand_tool_use
from .compensation_activities import CompensationActivities
from .errors import in_doubt_failure, throttled_failure, to_failure
from .payloads import check_compact, expand_interrupt, expand_state, restore
from .resume_activities import ResumeActivities
from .retries import retry_settings, throttle_delay
from .shapes import BudgetSettings, CompactMessage, CompactResult, CompactState

TAIL = 4
"""Compact messages the workflow keeps in memory (the loop core reads only the last one)."""


def state_changes(before: CompactState, after: CompactState) -> StateChanges | None:
    """What a tool changed in the agent state (``set`` keys, ``deleted`` keys), or None.

    Concurrent tool calls each report their own changes and the workflow applies them in the
    order the calls finish, as concurrent tools writing one local state dict would. The ``set``
    values are ``after``'s own (not copies): the caller compacts them before anything else runs.
    """
    changed = {key: value for key, value in after.items() if key not in before or before[key] != value}
    deleted = [key for key in before if key not in after]
    if not changed and not deleted:
        return None
    return {"set": changed, "deleted": deleted}


class TetherActivities(ResumeActivities, CompensationActivities):
    """The agent activities a worker registers; they share one registry and one payload policy.

    Args:
        registry: The agent factories.
        blobs: A :class:`~tether.temporal.policy.PayloadPolicy`, or the blob store shared by every
            worker and client of the runs (``inline_limit`` and ``max_value_bytes`` keywords then
            give its limits, as for :func:`~tether.temporal.create_worker`).
    """

    ACTIVITIES = (
        "describe",
        "list_tools",
        "call_model",
        "run_tool",
        "reconcile",
        "finish",
        "invocation_hook",
        "child_prompt",
        "child_answer",
        "check_resume",
        "compensation_plan",
        "undo",
    )

    # -- describe -------------------------------------------------------------------------

    @activity.defn(name="tether.describe")
    async def describe(self, params: AgentRef) -> Described:
        """The agent's initial run state (compact) and the settings the workflow needs."""
        agent = self._agent(params)
        run = agent.run_state
        with fatal_errors(f"cannot store the initial state of agent {params.get('agent')!r}"):
            compact = [self.payloads.compact_message(message) for message in run.messages]
            state = self.payloads.compact_state(run.state)
            manager_state = self.payloads.offload(agent.conversation_manager.state(run), "conversation_manager_state")
            system = None if run.system_prompt is None else self.payloads.compact_message({"role": "system", "content": run.system_prompt})
        hooks = agent.hooks
        tools = agent.tool_registry
        return {
            "conv": self.conversations.append(None, compact),
            "tail": compact[-TAIL:],
            "state": state,
            "conversation_manager_state": manager_state,
            "system_prompt": system,
            "manifest": agent.manifest(),
            "settings": {
                "max_cycles": agent.limits.max_cycles,
                "max_tokens": agent.limits.max_tokens,
                "model_attempts": agent.retry.max_attempts,
                "retry": retry_settings(agent.retry),
                "sequential": isinstance(agent.tool_executor, SequentialToolExecutor),
                "has_tools": len(tools) > 0,
                "non_idempotent": [name for name in tools.names if not getattr(tools.get(name), "idempotent", True)],
                **({"agent_tools": agent_tools} if (agent_tools := _agent_tools(tools)) else {}),
                "invocation_hooks": hooks.has(BeforeInvocation) or hooks.has(AfterInvocation) or hooks.has(MessageAdded),
                **({"sources": len(tools.sources)} if tools.sources else {}),
                **({"budget": budget} if (budget := budget_settings(agent, params.get("budget"))) is not None else {}),
                **({"compensate_on": list(agent.compensate_on)} if agent.compensate_on else {}),
            },
        }

    # -- tool sources ---------------------------------------------------------------------

    @activity.defn(name="tether.list_tools")
    async def list_tools(self, params: AgentRef) -> ListedTools:
        """Start the agent's tool sources (MCP servers), list their tools and close them again.

        The workflow records the result and hands it to every model and tool activity of the
        invocation (see :meth:`ToolRegistry.adopt_listings`), so the tool list is history, not
        something workflow code or a later activity asks a server for. A source that cannot be
        started or listed fails the activity (Temporal retries it).
        """
        agent = self._agent(params)
        registry = agent.tool_registry
        listings: list[list[Any]] = []
        try:
            for source in registry.sources:
                await source.start()
                listings.append(json_copy(await source.list_tools()))
            registry.adopt_listings(listings)  # checks names clash as locally
            non_idempotent = [name for name in registry.names if not getattr(registry.get(name), "idempotent", True)]
            idempotent = [spec["name"] for specs in listings for spec in specs if getattr(registry.get(spec["name"]), "idempotent", False)]
            manifest = agent.manifest()  # with the listed tools (tether.describe's has only the agent's own)
        except ConfigurationError as exc:
            raise to_failure(exc, f"the tools of agent {params.get('agent')!r} clash") from None
        finally:
            await registry.close_sources()
            for source in registry.sources:
                await source.close()
        return {
            "source_tools": {"listings": listings, "idempotent": idempotent},
            "non_idempotent": non_idempotent,
            "has_tools": len(registry) > 0,
            "manifest": manifest,
        }

    # -- model ----------------------------------------------------------------------------

    @activity.defn(name="tether.call_model")
    async def call_model(self, params: CallModelInput) -> ModelOutput:
        """Persist the pending messages, call the model once, return the compact response."""
        agent = self._agent(params)
        self._adopt(agent, params)
        conversations = self.conversations
        with fatal_errors(f"cannot read the conversation of run {params.get('run_id')!r}"):
            conv = conversations.append(params.get("conv"), params.get("pending") or [])
            loaded = conversations.load(conv)
            state = expand_state(self.payloads.blobs, params.get("state"))
            manager_state = dict(restore(self.payloads.blobs, params.get("conversation_manager_state")) or {})
            model_state = restore(self.payloads.blobs, params.get("model_state")) or {}
        run = fresh_run(
            agent,
            messages=list(loaded),
            state=state,
            conversation_manager_state=manager_state,
            model_state=model_state,
            run_id=params.get("run_id"),
        )
        run.conversation_manager_state.pop("kind", None)
        system = params.get("system_prompt")
        if system is not None:
            with fatal_errors(f"cannot read the system prompt of run {params.get('run_id')!r}"):
                run.system_prompt = self._expand_system(system)
        try:
            async with heartbeating():
                host = agent.host()
                response = await self._stream(host, run, params, remote_parent(host.tracer, params.get("trace")))
        except TetherError as exc:
            if isinstance(exc, NOT_RETRYABLE):
                raise to_failure(exc, "the model call cannot succeed") from None
            if isinstance(exc, ModelThrottledError):
                # The wait the agent would make locally (its backoff, jitter and retry_after).
                raise throttled_failure(exc, throttle_delay(agent.retry, activity.info().attempt, exc.retry_after)) from None
            raise
        message = response.message
        for i, block in enumerate(message["content"]):
            if "toolUse" in block and not block["toolUse"].get("toolUseId"):
                block["toolUse"]["toolUseId"] = f"tooluse_{len(run.messages)}_{i}"
        with fatal_errors(f"a model response of run {params.get('run_id')!r} is too large"):
            out: ModelOutput = {
                "conv": conv,
                "message": self.payloads.compact_message(message),
                "stop_reason": response.stop_reason,
                "usage": response.usage,
                "latency_ms": response.latency_ms,
                "model_state": None if response.model_state is None else self.payloads.offload(response.model_state, "model_state"),
                "rebased": False,
            }
            if len(run.messages) != len(loaded) or any(a is not b for a, b in zip(run.messages, loaded, strict=False)):
                out["rebased"] = True
                out["conv"] = self._rebase(conv, loaded, run.messages)
                out["length"] = len(run.messages)
                out["conversation_manager_state"] = self.payloads.offload(
                    agent.conversation_manager.state(run), "conversation_manager_state"
                )
        return out

    def _expand_system(self, compact: CompactMessage) -> Any:
        from .claimcheck import expand_message

        return expand_message(self.payloads.blobs, compact)["content"]

    async def _stream(self, host: LoopHost, run: RunState, params: CallModelInput, parent: Span | None) -> ModelResponse:
        """One accepted response, with overflow reductions and hook retries exactly as locally.

        Throttling is not retried here: it fails the activity and Temporal's retry policy runs it
        again. Every stream event is a sign of life: it heartbeats (at most a few times per
        heartbeat timeout; a timer heartbeats too while the model thinks without streaming).
        The call's span (when tracing is on) goes under ``parent``, the client's invocation span.
        """
        beat = Pulse()
        async for item in respond(
            host,
            run,
            tool_specs=host.tool_specs(None),
            tool_choice=params.get("tool_choice"),
            cycle_index=int(params.get("cycle_index", 0)),
            forward_deltas=beat.enabled,
            parent=parent,
            max_tokens=params.get("max_tokens"),
        ):
            if isinstance(item, ModelResponse):
                return item
            beat()
        raise RuntimeError("the model call ended without a response")  # only a cancel can do that; none is passed

    def _rebase(self, conv: str | None, loaded: list[Message], kept: list[Message]) -> str:
        """A new chain for ``kept`` (reusing compact nodes when ``kept`` is a suffix of ``loaded``)."""
        offset = len(loaded) - len(kept)
        if offset >= 0 and all(kept[i] is loaded[offset + i] for i in range(len(kept))):
            compact = self.conversations.compact_nodes(conv)[offset:]
        else:
            compact = [self.payloads.compact_message(message) for message in kept]
        return self.conversations.rebase(compact)

    # -- tools ----------------------------------------------------------------------------

    @activity.defn(name="tether.run_tool")
    async def run_tool(self, params: RunToolInput) -> ToolOutcome:
        """Run one tool call (with its hooks); returns a compact result or the interrupt it raised.

        A tool declared ``idempotent=False`` runs on the first attempt only: a later attempt
        means an earlier one was lost (its worker died, or it timed out) and may have had its
        effect, so it fails as in doubt instead, and the workflow settles the call.
        """
        agent = self._agent(params)
        self._adopt(agent, params)
        try:
            return await self._run_tool(agent, params)
        finally:
            await agent.tool_registry.close_sources()  # e.g. stop the MCP server this call started

    async def _run_tool(self, agent: Any, params: RunToolInput) -> ToolOutcome:
        tool_use_id = params["tool_use"].get("toolUseId")
        name = str(params["tool_use"].get("name"))
        attempt = activity.info().attempt
        host = threaded_host(agent)
        selected = host.tools.get(name)
        if attempt > 1 and selected is not None and not selected.idempotent:
            raise in_doubt_failure(str(tool_use_id), name, attempt)
        with fatal_errors(f"cannot read the input or state of tool call {tool_use_id!r}"):
            tool_use: Any = expand_tool_use(self.payloads.blobs, params["tool_use"])
            before_state = expand_state(self.payloads.blobs, params.get("state"), shared=True)  # read only: the tool gets a copy
            interrupts = {ident: expand_interrupt(self.payloads.blobs, item) for ident, item in (params.get("interrupts") or {}).items()}
        run = fresh_run(
            agent,
            state=json_copy(before_state),  # the tool's own copy (before_state holds shared versions)
            run_id=params.get("run_id"),
            interrupt_state={"interrupts": interrupts, "activated": True},
        )
        parent = remote_parent(host.tracer, params.get("trace"))
        outcome = await call_tool(host, run, tool_use, guard=heartbeating, parent=parent)
        outcome.apply_recorded()  # the tool's bookkeeping for its result: returned with it below
        with fatal_errors(f"the outcome of tool call {tool_use_id!r} ({name}) is too large"):
            out: ToolOutcome
            if outcome.interrupt is not None:
                # An agent tool keeps its interrupted child in the state: it travels with the interrupt.
                out = {"interrupt": self.payloads.compact_interrupt(outcome.interrupt.to_dict())}
            else:
                assert outcome.result is not None
                out = {
                    "result": self.payloads.compact_result(outcome.result),
                    "duration_ms": outcome.duration_ms,
                }
            changes = state_changes(before_state, run.state)
            if changes is not None:
                # The run is discarded after this call, so its values are handed over uncopied; a
                # changed large value is stored as a patch against the version it replaces.
                changes["set"] = self.payloads.compact_state(changes["set"], previous=params.get("state"), owned=True)
                check_compact(changes, "state")
                out["state_changes"] = changes
            added = _usage_added(run.metrics)
            if added is not None:
                out["usage_added"] = added
        return out

    # -- agent tools (child workflows) ----------------------------------------------------

    @activity.defn(name="tether.child_prompt")
    async def child_prompt(self, params: ChildPromptInput) -> CompactMessage | str:
        """The compact prompt message of an agent tool's child whose input was offloaded (or the
        error text of an invalid input); see :func:`tether.temporal.nested.prompt_message`."""
        from .nested import prompt_message

        with fatal_errors("cannot read the input of an agent tool call"):
            tool_use = expand_tool_use(self.payloads.blobs, params["tool_use"])
        prompt = prompt_message(tool_use.get("input"), str(tool_use.get("name")))
        assert prompt is not None  # expanded: never a placeholder
        if isinstance(prompt, str):
            return prompt
        with fatal_errors(f"the input of agent tool call {tool_use.get('toolUseId')!r} is too large"):
            return self.payloads.compact_message(prompt)

    @activity.defn(name="tether.child_answer")
    async def child_answer(self, params: ChildAnswerInput) -> CompactResult:
        """The compact tool result of a finished agent tool's child whose answer was offloaded."""
        from .claimcheck import expand_message
        from .nested import answer_result

        message = params.get("message")
        with fatal_errors("cannot read the answer of an agent tool's child"):
            full = None if message is None else expand_message(self.payloads.blobs, message, decode=False)
        result = answer_result(str(params["tool_use_id"]), cast("dict[str, Any] | None", full))
        assert result is not None  # expanded: no placeholder left
        with fatal_errors(f"the answer of agent tool call {params['tool_use_id']!r} is too large"):
            return self.payloads.compact_result(cast("Any", result))

    # -- end of an invocation -------------------------------------------------------------

    @activity.defn(name="tether.finish")
    async def finish(self, params: FinishInput) -> Finished:
        """Persist the pending messages and apply the conversation manager's after-call management."""
        agent = self._agent(params)
        conversations = self.conversations
        with fatal_errors(f"cannot read the conversation of run {params.get('run_id')!r}"):
            conv = conversations.append(params.get("conv"), params.get("pending") or [])
            loaded = conversations.load(conv)
            state = dict(restore(self.payloads.blobs, params.get("conversation_manager_state")) or {})
        state.pop("kind", None)
        run = RunState(messages=list(loaded), conversation_manager_state=state)
        if params.get("manage", True):
            agent.conversation_manager.apply_management(run)
        with fatal_errors(f"the conversation-manager state of run {params.get('run_id')!r} is too large"):
            manager_state = self.payloads.offload(agent.conversation_manager.state(run), "conversation_manager_state")
        out: Finished = {
            "conv": conv,
            "length": len(run.messages),
            "conversation_manager_state": manager_state,
        }
        if len(run.messages) != len(loaded):
            out["conv"] = self._rebase(conv, loaded, run.messages)
        return out

    @activity.defn(name="tether.invocation_hook")
    async def invocation_hook(self, params: HookInput) -> None:
        """Fire invocation-level hooks (``BeforeInvocation``, ``AfterInvocation``, ``MessageAdded``)."""
        from .claimcheck import expand_message

        agent = self._agent(params)
        hooks = agent.hooks
        kind = params["event"]
        if kind == "before":
            await hooks.fire(BeforeInvocation(agent, resumed=bool(params.get("resumed")), resumed_from=params.get("resumed_from")))
        elif kind == "after":
            await hooks.fire(AfterInvocation(agent, resumed=bool(params.get("resumed")), resumed_from=params.get("resumed_from")))
        elif kind == "messages" and hooks.has(MessageAdded):
            for compact in params.get("messages") or []:
                await hooks.fire(MessageAdded(agent, expand_message(self.payloads.blobs, compact)))


def _agent_tools(tools: ToolRegistry) -> dict[str, dict[str, Any]]:
    """The agent tools (their calls run as child workflows), with their options."""
    from ..agent_tool import AgentTool

    return {
        name: {"keep_conversation": tool.keep_conversation, "agent_name": tool.agent.name}
        for name in tools.names
        if isinstance(tool := tools.get(name), AgentTool)
    }


def budget_settings(agent: Any, given: Mapping[str, Any] | None = None) -> BudgetSettings | None:
    """The agent's budget as the workflow needs it (None: no budget); a BudgetPriceError (the
    activity fails for good) when ``max_cost_usd`` cannot be priced.

    Args:
        agent: The agent.
        given: What a parent's budget leaves an agent tool's child (``Budget.to_dict``): the
            budget is the tighter of it and the agent's own.
    """
    budget = agent.budget if given is None else Budget.from_dict(given, "budget").tightest(agent.budget)
    policy = invocation_budget(budget, agent.model_or_none, agent.prices, agent.tool_specs_for(None))
    if policy is None:
        return None
    price = None if policy.price is None else [policy.price.input_per_mtok, policy.price.output_per_mtok]
    return {"limits": policy.budget.to_dict(), "price": price, "fixed_tokens": policy.fixed_tokens}


def _usage_added(metrics: Any) -> JSONValue:
    """What the tool call added to the (fresh) run's model figures: an agent tool's child's
    usage, model calls and latency, rolled up into the workflow's metrics (None: nothing)."""
    usage = metrics["usage"]
    if not (metrics["model_call_count"] or usage["total_tokens"] or usage["input_tokens"] or usage["output_tokens"]):
        return None
    return {"usage": dict(usage), "model_call_count": metrics["model_call_count"], "model_latency_ms": metrics["model_latency_ms"]}


__all__ = ["TAIL", "TetherActivities", "state_changes"]
