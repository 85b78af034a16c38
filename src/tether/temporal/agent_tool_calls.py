"""Agent tools on Temporal: each call of an agent tool is a child workflow of the calling agent's.

:class:`AgentToolCalls` is the part of :class:`~tether.temporal.workflow.AgentWorkflow` that runs
them (see :mod:`tether.temporal.nested` for the naming, the prompts and answers workflow code
computes itself, and the child's interrupts asked as the parent's). The child is an
``AgentWorkflow`` (``tether.agent``) of agent ``"<parent>/<tool>"`` whose workflow id is the run
id a local durable parent gives that call's child run; it runs ``nested``, so it returns when it
stops on interrupts. The parent keeps each interrupted call in its agent state
(``state["tether.agent_tools"]["calls"][toolUseId]``: ``carried``, ``pending``, ``asked``,
``rolled``), the conversations of tools that keep theirs under ``conversations``, and rolls the
child's usage up into its own metrics once per round (:func:`tether.agent_tool.roll_up`).

Budgets: a parent with a budget gives the child what it may spend, as a local parent does
(:meth:`tether.loop.core.LoopCore.round_budget`, plus what the parent already counted of the
call), in the child's ``budget`` parameter; the child's ``tether.describe`` activity prices it on
the child's model, no more than the child agent's own budget. Its spend (cost, tool calls) rolls
up with its usage; a child its budget stopped gives an error result, as locally.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from temporalio import workflow
from temporalio.exceptions import ApplicationError, ChildWorkflowError, FailureError, is_cancelled_exception

with workflow.unsafe.imports_passed_through():
    from ..agent_tool import STATE_KEY, child_budget, roll_up
    from ..budget import Budget
    from ..errors import PromptError
    from ..loop.core import LoopCore
    from ..loop.state import Cursor, RunState, new_metrics
    from .activity_io import ChildAnswerInput, ToolOutcome
    from .base_workflow import RunWorkflow
    from .errors import to_failure
    from .nested import answer_result, ask, prompt_message
    from .shapes import WORKFLOW_NAME, AgentRunResult, AgentSettings, AgentSnapshot, CarriedState


PATCH_CHILD_BUDGET = "tether.child-budget"
"""The patch id of giving agent tools' child workflows what the parent's budget leaves (runs
recorded before it started children with their own agent's budget)."""


class AgentToolCalls(RunWorkflow[AgentSnapshot]):
    """Calls of agent tools as child workflows (a part of ``AgentWorkflow``, which supplies the
    run, its settings, its activities and the recording of a tool outcome)."""

    _settings: AgentSettings
    _nested: Budget | None
    """What a child of the current round of tool calls may spend (None: the parent has no
    budget); set by ``AgentWorkflow._run_tools``."""

    def _state(self) -> tuple[RunState, LoopCore]:
        raise NotImplementedError

    async def _activity(self, name: str, params: Mapping[str, object], *, local: bool = False) -> Any:
        raise NotImplementedError

    async def _record(self, tool_use: Any, out: ToolOutcome) -> bool:
        raise NotImplementedError

    async def _run_agent_tool(self, tool_use: Any) -> bool:
        """One call of an agent tool, as a child workflow (see :mod:`tether.temporal.nested`).

        Returns False when the call stopped on the child's interrupts (now the parent's). The
        bookkeeping (``state["tether.agent_tools"]``) is read afresh after every wait: a parallel
        call that finished meanwhile may have dropped the key.
        """
        run, core = self._state()
        tool_use_id, name = tool_use["toolUseId"], str(tool_use["name"])
        options = (self._settings.get("agent_tools") or {}).get(name, {})
        agent_name = str(options.get("agent_name", name))
        started = workflow.now()
        entry: dict[str, Any] | None = self._book()["calls"].get(tool_use_id)
        child = self._child_params(tool_use_id, {"agent": f"{self._params['agent']}/{name}"}, nested=True)
        if entry is None:
            prompt = prompt_message(tool_use.get("input"), name)
            if prompt is None:
                prompt = await self._activity("tether.child_prompt", {"tool_use": tool_use}, local=True)
            if isinstance(prompt, str):
                return await self._agent_tool_error(tool_use, prompt)
            kept = self._book()["conversations"].get(name) if options.get("keep_conversation") else None
            child.update(prompt={"kind": "messages", "messages": [prompt]}, carried=kept)
        else:
            if "carried" not in entry:
                raise to_failure(
                    PromptError(
                        f"the interrupted call {tool_use_id!r} of agent tool {name!r} was moved from a durable local run: "
                        "its child run lives in that run's store; finish it there"
                    )
                )
            answers, unanswered = ask(name, tool_use_id, entry, run.interrupt_state.setdefault("interrupts", {}))
            if unanswered:
                core.tool_interrupted(unanswered)
                return False
            child.update(prompt={"kind": "interrupt_responses", "responses": answers}, carried=entry["carried"])
        budget = child_budget(self._nested, None, None if entry is None else entry.get("rolled"))
        if budget is not None and workflow.patched(PATCH_CHILD_BUDGET):
            child["budget"] = budget.to_dict()
        core.tool_started(tool_use_id)
        try:
            out: AgentRunResult = await workflow.execute_child_workflow(WORKFLOW_NAME, child, id=child["run_id"])
        except ChildWorkflowError as exc:
            if is_cancelled_exception(exc):
                raise
            return await self._agent_tool_error(tool_use, _child_failure_text(exc, agent_name))  # the parent model's information
        rolled = roll_up(run.metrics, out["metrics"], None if entry is None else entry.get("rolled"))
        if out["stop_reason"] == "interrupt":
            entry = {
                "asked": {} if entry is None else entry.get("asked", {}),
                "rolled": rolled,
                "carried": out["run"],
                "pending": out["interrupts"],
            }
            self._book()["calls"][tool_use_id] = entry
            _, unanswered = ask(name, tool_use_id, entry, run.interrupt_state.setdefault("interrupts", {}))
            core.tool_interrupted(unanswered)
            return False
        if out["stop_reason"] == "cancelled":
            return await self._agent_tool_error(tool_use, f"Agent {agent_name!r} was cancelled before it finished.")
        if out["stop_reason"] == "budget_exhausted":
            # As locally: the parent's next model call is refused too when the budget was its own.
            return await self._agent_tool_error(tool_use, f"Agent {agent_name!r} ran out of budget before it finished.")
        if options.get("keep_conversation"):
            self._book()["conversations"][name] = _kept_conversation(out["run"])
        self._drop_call(tool_use_id)
        result = answer_result(tool_use_id, out.get("message"))
        if result is None:
            params: ChildAnswerInput = {"tool_use_id": tool_use_id, "message": out.get("message")}
            result = await self._activity("tether.child_answer", params, local=True)
        elapsed = (workflow.now() - started).total_seconds() * 1000.0
        return await self._record(tool_use, {"result": result, "duration_ms": elapsed})

    def _book(self) -> dict[str, Any]:
        """The agent-tool bookkeeping in the run's agent state (created when missing)."""
        run, _ = self._state()
        book: dict[str, Any] = run.state.setdefault(STATE_KEY, {})
        book.setdefault("calls", {})
        book.setdefault("conversations", {})
        return book

    def _drop_call(self, tool_use_id: str) -> None:
        """Forget a finished agent-tool call (and the bookkeeping key once it holds nothing)."""
        run, _ = self._state()
        book = self._book()
        book["calls"].pop(tool_use_id, None)
        if not book["calls"] and not book["conversations"]:
            run.state.pop(STATE_KEY, None)

    async def _agent_tool_error(self, tool_use: Any, text: str) -> bool:
        """End an agent-tool call with an error result the parent's model reads."""
        self._drop_call(tool_use["toolUseId"])
        return await self._record(
            tool_use, {"result": {"toolUseId": tool_use["toolUseId"], "status": "error", "content": [{"text": text}]}}
        )


def _child_failure_text(exc: ChildWorkflowError, agent_name: str) -> str:
    """What a local agent tool returns when its child raised: the innermost Tether error's class
    and message (``to_failure`` types the failure with the class and keeps the message as its
    detail)."""
    cause: BaseException | None = exc
    found: ApplicationError | None = None
    while isinstance(cause, FailureError):
        if isinstance(cause, ApplicationError):
            found = cause
        cause = cause.cause
    if found is None:
        return f"Error: agent {agent_name!r} failed: {exc.cause or exc}"
    detail = found.details[0] if found.details else found.message
    if found.type == "ConfigurationError":
        return f"Error: agent {agent_name!r} is misconfigured: {detail}"
    return f"Error: agent {agent_name!r} failed: {found.type}: {detail}"


def _kept_conversation(carried: CarriedState) -> CarriedState:
    """What an agent tool that keeps its conversation keeps of its child's finished run: the
    conversation, agent state and conversation-manager state, as a local agent tool keeps
    them (the next call starts a fresh invocation over them: fresh metrics and model state)."""
    return {
        "conv": carried["conv"],
        "tail": carried["tail"],
        "unpersisted": carried["unpersisted"],
        "state": carried["state"],
        "conversation_manager_state": carried["conversation_manager_state"],
        "interrupt_state": {},
        "system_prompt": carried["system_prompt"],
        "model_state": {},
        "cursor": Cursor().to_dict(),
        "metrics": new_metrics(),
        "settings": None,
        "started": False,
    }


__all__ = ["PATCH_CHILD_BUDGET", "AgentToolCalls"]
