"""`AgentTool`: an agent called as a tool by another agent (its parent).

The tool's input is one string, ``input``: the task for the child. Each call runs the child in
a fresh conversation (or, with ``keep_conversation``, in the conversation its earlier calls
left in the parent's state) on a *runner*: a new :class:`~tether.Agent` built from the child's
configuration that shares its model, tools, hooks and conversation manager. So parallel calls
of one child in a cycle, or one child used by two parents, never meet on one agent (an agent
runs one invocation at a time). The child's final text is the tool result.

Everything the call must remember lives in the parent's run state, as JSON, under
``state["tether.agent_tools"]`` (:data:`STATE_KEY`):

- ``calls[toolUseId]``: a child call stopped on interrupts: the parent interrupts it raised
  for them (``asked``), the child's metrics already added to the parent's (``rolled``) and
  the child itself: its durable run id (``run_id``) when the parent is a durable run, else
  the child's whole state as a snapshot dict (``snapshot``), so a snapshot or a checkpoint of
  the parent carries it. Removed when the call finishes.
- ``conversations[tool name]``: with ``keep_conversation``, the child's messages, state and
  conversation-manager state after its last call.

Durable nesting: in a durable parent run the child is a durable run of its own, in the
parent's store, with id :func:`~tether.multiagent.child_run_id` (parent run id, tool-use id)
and the parent as ``parent_run_id``. A re-run of the call (the parent resumed after a crash
with the call in doubt, or after an interrupt answer) finds that run and, if it is a child of
this incarnation of the parent (:func:`~tether.durable.ids.adopt_child`; a child left
by a deleted run of the same id is replaced), resumes it from its own last step: finished
child cycles and tools are not redone, a finished child is not run again (its stored result
is read).

Interrupts: an interrupt of the child (from its tool, hook, or its own agent tool) becomes an
interrupt of the parent named ``"<tool name>/<child interrupt name>"`` with the child's
reason; answering the parent resumes the child with that answer, then the parent.

Checkpoints: when the parent pauses at checkpoints (``Agent(checkpointing=...)``) the child
runs with its own ``checkpointing``; a child that pauses pauses the parent (``PauseSignal``):
the parent's checkpoint (``after_model`` of its cycle) carries the child's checkpoint in
``calls[toolUseId]["checkpoint"]`` (or, durable, names the paused child run), and resuming
the parent continues the child from there. Calls of the cycle that had finished are not redone.

Metrics: the child's token usage, model calls and model latency are added to the parent's
run metrics (once, across interrupts and crashes), and so are its budget spend (cost, tool calls).

Budgets: the child runs with what the parent's budget has left when the call begins (the
parent's ``ToolContext.budget``: its share, when agent-tool calls of one round run at once), no
more than the child agent's own ``budget``; its spend rolls up into the parent's with the call's
result (see :func:`child_budget`). A child its budget stopped gives an error result (the parent's
next model call is refused too when the budget was the parent's).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from .answers import answer_block
from .budget import Budget, Spend, spend_of
from .durable.adoption import adopt_child
from .durable.ids import child_run_id
from .errors import ConfigurationError, LeaseLostError
from .interrupts import Interrupt, PauseSignal
from .metrics import add_figures
from .tools.base import Tool, error_result, to_result
from .tools.context import ToolContext
from .types import LoopEvent, ToolResult, ToolSpec, ToolUse

if TYPE_CHECKING:  # annotations only: agent.py imports this module, never the other way at run time
    from .agent import Agent
    from .result import AgentResult

STATE_KEY = "tether.agent_tools"
"""The key of the parent's agent state holding its agent tools' bookkeeping (JSON)."""

_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_ROLLED = ("input_tokens", "output_tokens", "total_tokens", "model_call_count", "model_latency_ms", "cost_usd", "tool_calls")

_INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"input": {"type": "string", "description": "The task or question for the agent, as text."}},
    "required": ["input"],
}


def configuration_of(agent: Agent) -> dict[str, Any]:
    """The ``Agent(...)`` arguments a fresh copy of ``agent`` shares with it: its model, conversation
    manager, tool executor, identity, retry policy, limits, reconciling, tracer, budget and prices
    (not its conversation, state, system prompt or store: each copy says what it takes of those).
    An agent tool's runner and a graph node's or swarm member's fresh agent are built from it."""
    return {
        "model": agent.model_or_none,
        "conversation_manager": agent.conversation_manager,
        "tool_executor": agent.tool_executor,
        "name": agent.name,
        "agent_id": agent.agent_id,
        "description": agent.description,
        "retry": agent.retry,
        "limits": agent.limits,
        "reconcile": agent.reconcile,
        "tracer": agent.tracer,
        "budget": agent.budget,
        "prices": agent.prices,
    }


class AgentTool(Tool):
    """An :class:`~tether.Agent` as a tool of another agent (see the module docstring).

    Build it with ``child.as_tool(...)`` or by passing a named ``Agent`` in ``tools=[...]``.
    """

    streams_events = True
    nests_runs = True
    idempotent = True  # a re-run resumes the child's own durable run: nothing finished is redone

    def __init__(self, agent: Agent, name: str | None = None, description: str | None = None, *, keep_conversation: bool = False) -> None:
        """Wrap ``agent`` as a tool.

        Args:
            agent: The child agent (its configuration is shared with every call's runner).
            name: The tool name the parent's model calls (default: the agent's name, which
                must then have been given explicitly: ``Agent(name=...)``).
            description: What the tool does, for the parent's model (default: the agent's
                description, else a sentence naming the agent).
            keep_conversation: Continue the child's conversation across calls (kept in the
                parent's state); default: a fresh conversation per call.

        Raises:
            ConfigurationError: No name (neither ``name`` nor ``Agent(name=...)``), or a name
                that is not a valid tool name (letters, digits, ``_`` and ``-``, at most 64).
        """
        if name is None:
            if not agent.name_given:
                raise ConfigurationError(
                    "an agent used as a tool needs a name: build it with Agent(name=...) or call agent.as_tool(name=...)"
                )
            name = agent.name
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise ConfigurationError(f"agent tool name {name!r} is not a valid tool name (letters, digits, '_' and '-', 1 to 64)")
        self.agent = agent
        self._tool_name = name
        self._description = description or agent.description or f"Ask the {agent.name} agent: give it a task as text, get its answer."
        self.keep_conversation = keep_conversation

    @property
    def tool_name(self) -> str:
        return self._tool_name

    def nested_tools(self) -> Callable[[str], Tool | None]:
        """The child's tools: compensating a parent run unwinds a call's child run with them."""
        return self.agent.tool_registry.get

    @property
    def spec(self) -> ToolSpec:
        return {"name": self._tool_name, "description": self._description, "inputSchema": {"json": _INPUT_SCHEMA}}

    def runner(self) -> Agent:
        """A fresh agent for one call: the child's configuration and services, an empty run, no
        checkpointing (a call enables the child's when its parent can pause)."""
        child = self.agent
        runner = type(child)(**configuration_of(child), system_prompt=child.system_prompt_content, state=child.state.get())
        runner.tool_registry = child.tool_registry
        runner.hooks = child.hooks
        return runner

    async def invoke(self, tool_use: ToolUse, context: ToolContext) -> ToolResult:
        """Run the child for this call; its failure is an error result, its interrupt the parent's.

        Interrupts, cancellation and a lost lease propagate (they stop the parent too).
        """
        tool_use_id = tool_use["toolUseId"]
        raw = tool_use.get("input")
        text = raw.get("input") if isinstance(raw, dict) else None
        if not isinstance(text, str):
            return error_result(tool_use_id, f"Invalid input for tool {self._tool_name!r}: input: a string is required")
        try:
            return await self._run_call(text, tool_use_id, context)
        except LeaseLostError:
            raise
        except ConfigurationError as exc:
            return error_result(tool_use_id, f"Error: agent {self.agent.name!r} is misconfigured: {exc}")
        except Exception as exc:  # the child's failure is the parent model's information
            return error_result(tool_use_id, f"Error: agent {self.agent.name!r} failed: {type(exc).__name__}: {exc}")

    async def _run_call(self, text: str, tool_use_id: str, context: ToolContext) -> ToolResult:
        parent: Agent = context.agent
        book = parent.run_state.state.setdefault(STATE_KEY, {"calls": {}, "conversations": {}})
        calls: dict[str, Any] = book.setdefault("calls", {})
        entry: dict[str, Any] | None = calls.get(tool_use_id)
        runner = self.runner()
        if context.pausable:  # the parent pauses at checkpoints: so may the child, and the parent with it
            runner.checkpointing = self.agent.checkpointing
        parent_run_id = context.run_id
        run_id: str | None = None  # the child's durable run
        resume = False
        prompt: Any = text
        if parent_run_id is not None and parent.store is not None:  # a durable parent: a durable child
            runner.store = parent.store
            run_id = child_run_id(parent_run_id, tool_use_id)
        if entry is not None and "pending" not in entry:  # the child paused at a checkpoint
            resume = run_id is not None
            prompt = None if resume else {"checkpointResume": {"checkpoint": entry["checkpoint"]}}
            if not resume:
                runner.checkpointing = self.agent.checkpointing or runner.checkpointing
        elif entry is not None:
            responses = self._answers(entry, context)  # raises the parent's interrupt until all are answered
            if run_id is None:
                runner.load_snapshot(entry["snapshot"])
                prompt = responses
            else:
                resume = True
                prompt = responses if _waiting(runner, run_id) else None
        elif (
            run_id is not None
            and parent_run_id is not None
            and runner.store is not None
            and adopt_child(runner.store, parent_run_id, run_id)  # its own child, not one a deleted parent left
        ):
            resume = True  # the call is re-run after a crash: the child resumes from its last step
            prompt = None
        elif self.keep_conversation:
            saved = book.setdefault("conversations", {}).get(self._tool_name)
            if saved is not None:
                runner.load_snapshot(saved)
        budget = child_budget(context.budget, self.agent.budget, entry.get("rolled") if entry else None)
        with parent.running_child(runner):  # parent.cancel() cancels the child too
            result = await self._drive(runner, prompt, context, run_id, parent_run_id, resume, budget)
        if result.stop_reason not in ("interrupt", "checkpoint"):
            return self._finished(result, runner, tool_use_id, context)
        # Read the bookkeeping again: a parallel call that finished meanwhile may have dropped
        # the key (it held nothing then), and an entry written to the old dict would be lost.
        book = parent.run_state.state.setdefault(STATE_KEY, {"calls": {}, "conversations": {}})
        calls = book.setdefault("calls", {})
        rolled = roll_up(parent.run_state.metrics, result.metrics.to_dict(), entry.get("rolled") if entry else None)
        if result.stop_reason == "interrupt":
            entry = {"asked": (entry or {}).get("asked", {}), "rolled": rolled}
            if run_id is not None:
                entry["run_id"] = run_id
            else:
                entry["snapshot"] = runner.take_snapshot(preset="all").to_dict()
            entry["pending"] = [i.to_dict() for i in result.interrupts]
            calls[tool_use_id] = entry
            self._answers(entry, context)  # raises
            raise AssertionError("unreachable: an unanswered interrupt raises")  # pragma: no cover
        if result.stop_reason == "checkpoint":
            assert result.checkpoint is not None
            entry = {"asked": (entry or {}).get("asked", {}), "rolled": rolled}
            if run_id is not None:
                entry["run_id"] = run_id  # the child's run is paused: a resume continues it
            else:
                entry["checkpoint"] = result.checkpoint.to_dict()
            calls[tool_use_id] = entry
            raise PauseSignal
        raise AssertionError(f"unreachable: stop reason {result.stop_reason!r}")  # pragma: no cover

    def _finished(self, result: AgentResult, runner: Agent, tool_use_id: str, context: ToolContext) -> ToolResult:
        """The result of a call whose child finished (or was cancelled).

        The call's bookkeeping (its entry dropped, the child's usage added to the parent's, the
        kept conversation) is applied when the parent records the result, in the same step
        (:meth:`~tether.tools.context.ToolContext.on_recorded`): applied earlier, a sibling's
        store write could record it without the result, and the call, re-run on resume, would
        add the child's usage a second time.
        """
        parent: Agent = context.agent
        metrics = result.metrics.to_dict()
        kept = None
        if self.keep_conversation:
            kept = runner.take_snapshot(include=["messages", "state", "conversation_manager_state"]).to_dict()
        cancelled = result.stop_reason == "cancelled"

        def record() -> None:
            state = parent.run_state.state
            book = state.setdefault(STATE_KEY, {"calls": {}, "conversations": {}})
            calls = book.setdefault("calls", {})
            entry = calls.pop(tool_use_id, None)
            roll_up(parent.run_state.metrics, metrics, entry.get("rolled") if entry else None)
            if kept is not None and not cancelled:
                book.setdefault("conversations", {})[self._tool_name] = kept
            if not calls and not book.get("conversations"):
                state.pop(STATE_KEY, None)

        context.on_recorded(record)
        if cancelled:
            return error_result(tool_use_id, f"Agent {self.agent.name!r} was cancelled before it finished.")
        if result.stop_reason == "budget_exhausted":
            # The caller's model decides what to do; its own next call is refused too when the
            # budget that ran out was the caller's (then a resume with a larger budget goes on).
            return error_result(tool_use_id, f"Agent {self.agent.name!r} ran out of budget before it finished.")
        return to_result(tool_use_id, str(result))

    def _answers(self, entry: dict[str, Any], context: ToolContext) -> list[dict[str, Any]]:
        """The answers to the child's pending interrupts, asked as the parent's own interrupts
        (the first unanswered one raises and stops the parent)."""
        asked: dict[str, str] = entry.setdefault("asked", {})
        answers = []
        for record in entry["pending"]:
            child = Interrupt.from_dict(record)
            name = asked_name(self._tool_name, child.id, child.name, asked)
            answer = context.interrupt(name, child.reason)
            answers.append(answer_block(child.id, answer))
        return answers

    async def _drive(
        self,
        runner: Agent,
        prompt: Any,
        context: ToolContext,
        run_id: str | None,
        parent_run_id: str | None,
        resume: bool,
        budget: Budget | None,
    ) -> AgentResult:
        """Run the child's invocation, forwarding its events (with a path) to the parent's stream."""
        result: AgentResult | None = None
        events = runner.nested_events(
            prompt,
            invocation_state=context.invocation_state,
            run_id=run_id,
            parent_run_id=None if resume or run_id is None else parent_run_id,
            resume=resume,
            budget=budget,
        )
        async for event in events:
            if event["type"] == "result":
                result = event["result"]
            else:
                context.emit(_under(self._tool_name, event))
        assert result is not None
        return result


def asked_name(tool_name: str, child_id: str, child_name: str, asked: dict[str, str]) -> str:
    """The name under which a parent asks its child's interrupt ``child_id``: ``"<tool>/<name>"``
    (``#2``, ``#3``... when two of the child's interrupts share a name), remembered in ``asked``
    (child interrupt id → name) so every round asks it under the same name and id."""
    name = asked.get(child_id)
    if name is None:
        name = f"{tool_name}/{child_name}"
        taken = set(asked.values())
        n = 2
        while name in taken:
            name = f"{tool_name}/{child_name}#{n}"
            n += 1
        asked[child_id] = name
    return name


def _under(name: str, event: LoopEvent) -> LoopEvent:
    """``event`` as seen from the parent: its path starts with the tool's name."""
    forwarded: dict[str, Any] = dict(event)
    forwarded["path"] = [name, *(forwarded.get("path") or [])]
    return forwarded  # type: ignore[return-value]


def _waiting(runner: Agent, run_id: str) -> bool:
    """True when the durable child run still waits for interrupt answers (not when a crash
    came after it consumed them: then it is resumed without answers)."""
    store = runner.store
    head = None if store is None else store.head(run_id)
    if head is None:
        return False
    state = head.get("interrupt_state") or {}
    return bool(state.get("activated"))


def roll_up(metrics: Any, child: Mapping[str, Any], rolled: dict[str, Any] | None) -> dict[str, float]:
    """Add to the parent's ``metrics`` what the child's run ``child`` cost since ``rolled``
    (what earlier rounds of the same call already added); returns the new ``rolled``."""
    usage = child.get("usage") or {}
    spent = spend_of(child)
    now: dict[str, float] = {
        "input_tokens": usage.get("input_tokens", 0),
        "output_tokens": usage.get("output_tokens", 0),
        "total_tokens": usage.get("total_tokens", 0),
        "model_call_count": child.get("model_call_count", 0),
        "model_latency_ms": child.get("model_latency_ms", 0.0),
        "cost_usd": spent.cost_usd,
        "tool_calls": spent.tool_calls,
    }
    before = rolled or {}
    delta = {key: now[key] - before.get(key, 0) for key in _ROLLED}
    tokens = {key: delta[key] for key in ("input_tokens", "output_tokens", "total_tokens")}
    added: dict[str, Any] = {"usage": tokens, "model_call_count": delta["model_call_count"], "model_latency_ms": delta["model_latency_ms"]}
    if delta["cost_usd"] or delta["tool_calls"]:
        # The child's tool calls count against the parent's budget, not in its own tool_call_count.
        added["spend"] = {"cost_usd": delta["cost_usd"], "nested_tool_calls": int(delta["tool_calls"])}
    add_figures(metrics, added)
    return now


def rolled_spend(rolled: Mapping[str, Any] | None) -> Spend:
    """What :func:`roll_up` already added to the parent for a call, as a :class:`~tether.budget.Spend`."""
    before = rolled or {}
    return Spend(
        input_tokens=int(before.get("input_tokens", 0)),
        output_tokens=int(before.get("output_tokens", 0)),
        cost_usd=float(before.get("cost_usd", 0.0)),
        tool_calls=int(before.get("tool_calls", 0)),
        model_calls=int(before.get("model_call_count", 0)),
    )


def child_budget(left: Budget | None, own: Budget | None, rolled: Mapping[str, Any] | None) -> Budget | None:
    """The budget of a nested run: what its parent had ``left`` when the call began, plus what the
    parent already counted of this call (``rolled``: the child's own counters include it), and no
    more than the child agent's ``own`` budget."""
    if left is None:
        return own
    return left.widened(rolled_spend(rolled)).tightest(own)


__all__ = ["STATE_KEY", "AgentTool", "asked_name"]
