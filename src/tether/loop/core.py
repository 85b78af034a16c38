"""The sans-I/O loop core: a deterministic state machine over :class:`RunState`.

``LoopCore.next_effect()`` says what must happen next; the driver performs it and reports the
outcome (``model_done``, ``tool_started``, ``tool_done``, ``tool_interrupted``). The core never
reads a clock, draws a random number or touches the network: the same state and the same
outcomes always give the same next effect. Ids it invents (missing tool-use ids) are derived
from positions in the conversation, so a resumed run derives the same ones.

Every method is O(size of the current cycle); nothing walks the whole history, which keeps the
per-cycle cost flat however long the run gets.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..budget import Budget, BudgetPolicy, add_cost, add_wall, estimate_tokens, spend_of
from ..errors import StateError, StructuredOutputError
from ..metrics import add_ms
from ..types import ContentBlock, InterruptRecord, Message, StopReason, ToolChoice, ToolResult, ToolUse
from .effects import CallModel, CloseCycle, Effect, Pause, RunTools, Stop
from .state import CheckpointPosition, Cursor, RunState

BUDGET_EXHAUSTED = "budget_exhausted"
"""The stop reason of an invocation whose next model call or tool round its budget refused."""

CORRECTIVE_PROMPT = (
    "You did not call the `{name}` tool. Respond now by calling `{name}` with the final answer as its input, and nothing else."
)


@dataclass(frozen=True)
class CoreConfig:
    """Per-invocation settings of the core (all plain values)."""

    checkpoint_positions: frozenset[CheckpointPosition] = frozenset()
    max_cycles: int | None = None
    max_tokens: int | None = None
    output_tool: str | None = None
    has_other_tools: bool = True
    budget: BudgetPolicy | None = None


@dataclass
class ModelOutcome:
    """A complete model response, as the driver observed it."""

    message: Message
    stop_reason: StopReason | str
    usage: dict[str, int] = field(default_factory=dict)
    latency_ms: float = 0.0


def tool_uses_of(message: Message) -> list[ToolUse]:
    """The tool calls of an assistant message, in order."""
    return [block["toolUse"] for block in message["content"] if "toolUse" in block]


class LoopCore:
    """The ReAct loop as a state machine over a :class:`RunState` it owns while it runs."""

    __slots__ = ("config", "run")

    def __init__(self, run: RunState, config: CoreConfig) -> None:
        self.run = run
        self.config = config

    # -- starting -------------------------------------------------------------------------

    def start(self, prompt: list[Message]) -> list[Message]:
        """Begin a new invocation with ``prompt`` appended; returns the messages added."""
        cursor = self.run.cursor
        # Cycle indexes count over the whole run, also when a new prompt follows an after_tools
        # checkpoint or a failed call (phase "model").
        self.run.cursor = Cursor(phase="model", cycle_index=cursor.cycle_index, input_estimate=cursor.input_estimate)
        for message in prompt:
            self.run.messages.append(message)
        self._estimate_added(prompt)
        return list(prompt)

    def resume(self) -> None:
        """Continue an invocation that stopped at a checkpoint or an interrupt."""
        cursor = self.run.cursor
        cursor.stop_reason = None
        cursor.invocation_cycles = 0
        cursor.invocation_tokens = 0
        if cursor.phase == "idle":
            cursor.phase = "model"

    # -- the next step --------------------------------------------------------------------

    def next_effect(self) -> Effect:
        """What the driver must do next."""
        cursor = self.run.cursor
        if cursor.stop_reason is not None:
            return self._stop(cursor.stop_reason)
        pause = cursor.pending_pause
        if pause is not None:
            cursor.pending_pause = None
            index = cursor.cycle_index if pause == "after_model" else cursor.cycle_index - 1
            if pause == "after_model" and cursor.phase == "tools" and cursor.results:
                # A tool paused mid-cycle: keep the results of the calls that finished, so a
                # resume from the checkpoint runs only the others (see turn.resume_checkpoint).
                self.run.interrupt_state["context"] = cursor.to_dict()
            return Pause(pause, index)
        if cursor.phase == "tools":
            uses = self._open_cycle_uses()
            if self.has_open_interrupts():
                self._save_interrupt_context()
                return self._stop("interrupt")
            pending = [use for use in uses if use["toolUseId"] not in cursor.results]
            if not pending:
                return CloseCycle(self._close_cycle(uses))
            budget = self.config.budget
            if budget is not None:
                limit = budget.gate_tools(spend_of(self.run.metrics), len(pending))
                if limit is not None:
                    return self._stop(BUDGET_EXHAUSTED, limit)
            return RunTools(pending)
        config = self.config
        if config.max_cycles is not None and cursor.invocation_cycles >= config.max_cycles:
            return self._stop("limit_cycles")
        if config.max_tokens is not None and cursor.invocation_tokens >= config.max_tokens:
            return self._stop("limit_tokens")
        if config.budget is None:
            return CallModel(self._tool_choice())
        gate = config.budget.gate_model_call(spend_of(self.run.metrics), self._input_estimate())
        if gate.exhausted is not None:
            return self._stop(BUDGET_EXHAUSTED, gate.exhausted)
        return CallModel(self._tool_choice(), gate.max_tokens)

    def _open_cycle_uses(self) -> list[ToolUse]:
        """The tool calls of the open cycle; a StateError when the run says it is in a tool
        cycle but its last message calls no tool (an inconsistent state never loops)."""
        messages = self.run.messages
        last = messages[-1] if messages else None
        uses = tool_uses_of(last) if last is not None and last["role"] == "assistant" else []
        if not uses:
            raise StateError(
                f"run {self.run.run_id or '(no id)'} is in phase 'tools' but its last message calls no tool; "
                "the run state is inconsistent (load a snapshot or fork the run at an earlier step)"
            )
        return uses

    def _tool_choice(self) -> ToolChoice | None:
        name = self.config.output_tool
        if name is None:
            return None
        if self.run.cursor.corrective_turn_used or not self.config.has_other_tools:
            return {"tool": {"name": name}}
        return {"any": {}}

    def _stop(self, reason: str, detail: str | None = None) -> Stop:
        cursor = self.run.cursor
        cursor.stop_reason = reason
        # An interrupted or budget-stopped run stays where it is: a resume goes on from there.
        if reason not in ("interrupt", BUDGET_EXHAUSTED):
            cursor.phase = "idle" if cursor.phase == "model" else cursor.phase
        return Stop(reason, detail)

    # -- budget ---------------------------------------------------------------------------

    def _input_estimate(self) -> int:
        """The estimated input tokens of the next model request: kept up to date step by step
        (see :mod:`tether.budget.estimate`), estimated whole once when unknown."""
        cursor = self.run.cursor
        if cursor.input_estimate is None:
            budget = self.config.budget
            fixed = budget.fixed_tokens if budget is not None else 0
            cursor.input_estimate = fixed + estimate_tokens(self.run.system_prompt) + estimate_tokens(self.run.messages)
        return cursor.input_estimate

    def _estimate_added(self, messages: list[Message]) -> None:
        """Add appended messages to the next request's estimate (runs with a budget only)."""
        cursor = self.run.cursor
        if self.config.budget is not None and cursor.input_estimate is not None and messages:
            cursor.input_estimate += estimate_tokens(messages)

    def elapsed(self, seconds: float) -> None:
        """Count ``seconds`` of running time (measured by the driver: the core reads no clock)
        against the run's budget; nothing is recorded for a run without a budget."""
        if self.config.budget is not None:
            add_wall(self.run.metrics, seconds)

    def budget_left(self, ways: int = 1, calls: int = 0) -> Budget | None:
        """What a nested run started by a tool call may spend now (None: no budget).

        What is left of the invocation's budget, less the ``calls`` tool calls of the round not
        yet counted (the gate let the round run whole: its own calls are spent already), split
        evenly ``ways`` ways among the nested runs that run at once (wall time stays whole: they
        run side by side within the parent's measured time). So nested runs running together
        never receive more, in total, than what is left.

        Args:
            ways: How many calls of the round start nested runs at once (1: one at a time).
            calls: The round's tool calls not yet counted in the run's metrics.
        """
        budget = self.config.budget
        if budget is None:
            return None
        left = budget.budget.left(spend_of(self.run.metrics))
        if calls:
            left = left.less(Budget(max_tool_calls=calls))
        return left.split(ways, whole=("max_wall_s",))

    def round_budget(self, tool_uses: Sequence[ToolUse], nests: Callable[[str], bool], *, at_once: bool) -> Budget | None:
        """What a call of a round of tool calls may give the nested run it starts (None: no
        budget): the rule that keeps nested runs within what is left, for every driver.

        Calls that run at once (``at_once``) share what is left evenly among the calls of tools
        that nest runs (agent tools), fixed when the round begins. Calls run one after another
        ask as each begins, ``tool_uses`` being that call and the ones after it: what is left
        then (the calls before it rolled up what they spent). Either way the round's own calls
        not yet counted are taken out of ``max_tool_calls`` first.

        Args:
            tool_uses: The round's calls (at once), or the calls from the one beginning on.
            nests: Whether the tool of a name nests runs (``Tool.nests_runs``).
            at_once: Whether the calls run concurrently.
        """
        if self.config.budget is None:
            return None
        ways = sum(1 for use in tool_uses if nests(use["name"])) if at_once else 1
        return self.budget_left(max(1, ways), len(tool_uses))

    # -- outcomes -------------------------------------------------------------------------

    def model_done(self, outcome: ModelOutcome) -> list[Message]:
        """Fold a complete model response into the run; returns the messages added."""
        run = self.run
        cursor = run.cursor
        metrics = run.metrics
        usage = outcome.usage
        in_tokens = int(usage.get("inputTokens", 0))
        out_tokens = int(usage.get("outputTokens", 0))
        total = int(usage.get("totalTokens", in_tokens + out_tokens))
        totals = metrics["usage"]
        totals["input_tokens"] += in_tokens
        totals["output_tokens"] += out_tokens
        totals["total_tokens"] += total
        metrics["model_call_count"] += 1
        metrics["cycle_count"] += 1
        metrics["model_latency_ms"] = add_ms(metrics["model_latency_ms"], outcome.latency_ms)
        cursor.invocation_cycles += 1
        cursor.invocation_tokens += total
        budget = self.config.budget
        if budget is not None:
            cost = budget.cost(in_tokens, out_tokens)
            if cost is not None:
                add_cost(metrics, cost)
            cursor.input_estimate = in_tokens + out_tokens  # the next request carries this one's input and reply

        message = outcome.message
        content = message["content"]
        if outcome.stop_reason == "max_tokens":
            kept = [block for block in content if "toolUse" not in block]
            added: list[Message] = []
            if kept:
                message = {"role": "assistant", "content": kept}
                run.messages.append(message)
                added.append(message)
            cursor.stop_reason = "max_tokens"
            cursor.phase = "idle"
            return added

        has_tools = False
        for i, block in enumerate(content):
            if "toolUse" in block:
                has_tools = True
                use = block["toolUse"]
                if not use.get("toolUseId"):
                    use["toolUseId"] = f"tooluse_{len(run.messages)}_{i}"
        run.messages.append(message)
        added = [message]
        if has_tools:
            cursor.phase = "tools"
            cursor.results = {}
            cursor.started = []
            if "after_model" in self.config.checkpoint_positions:
                cursor.pending_pause = "after_model"
            return added

        if self.config.output_tool is not None and cursor.structured_output is None:
            if cursor.corrective_turn_used:
                raise StructuredOutputError(
                    f"the model did not call the structured output tool `{self.config.output_tool}` "
                    "even after a corrective turn; use a model that supports tool calling, or "
                    "call without output_model"
                )
            cursor.corrective_turn_used = True
            corrective: Message = {
                "role": "user",
                "content": [{"text": CORRECTIVE_PROMPT.format(name=self.config.output_tool)}],
            }
            run.messages.append(corrective)
            cursor.cycle_index += 1
            added.append(corrective)
            self._estimate_added([corrective])
            return added

        cursor.stop_reason = str(outcome.stop_reason)
        cursor.phase = "idle"
        cursor.cycle_index += 1
        return added

    def tool_started(self, tool_use_id: str) -> None:
        """Record that a tool call began (its result is not yet known); a call already recorded
        (a durable driver records some calls with the model's response) is recorded once."""
        started = self.run.cursor.started
        if tool_use_id not in started:
            started.append(tool_use_id)

    def tool_done(self, tool_use_id: str, result: ToolResult, *, structured_output: Any = None) -> list[Message]:
        """Record one tool result; when the cycle's last result arrives, close the cycle."""
        cursor = self.run.cursor
        cursor.results[tool_use_id] = result
        if structured_output is not None:
            cursor.structured_output = structured_output
        uses = tool_uses_of(self.run.messages[-1])
        # Every call of the cycle answered (a result for an id outside the cycle never counts).
        results = cursor.results
        if len(results) < len(uses):
            return []
        for use in uses:
            if use["toolUseId"] not in results:
                return []
        return self._close_cycle(uses)

    def _close_cycle(self, uses: list[ToolUse]) -> list[Message]:
        run = self.run
        cursor = run.cursor
        results = cursor.results
        blocks: list[ContentBlock] = [{"toolResult": results[use["toolUseId"]]} for use in uses]
        message: Message = {"role": "user", "content": blocks}
        run.messages.append(message)
        self._estimate_added([message])
        cursor.phase = "model"
        cursor.cycle_index += 1
        cursor.results = {}
        cursor.started = []
        if run.interrupt_state:
            run.interrupt_state = {}
        if cursor.structured_output is not None:
            cursor.stop_reason = "end_turn"
            cursor.phase = "idle"
        elif "after_tools" in self.config.checkpoint_positions:
            cursor.pending_pause = "after_tools"
        return [message]

    def tool_paused(self, tool_use_id: str) -> None:
        """Record that a tool call paused at a checkpoint (``PauseSignal``): the run pauses
        ``after_model`` of this cycle once the cycle's other calls are done, and the call runs
        again when resumed (it is not *in doubt*: it keeps its paused work in the run state)."""
        cursor = self.run.cursor
        if tool_use_id in cursor.started:
            cursor.started.remove(tool_use_id)
        cursor.pending_pause = "after_model"

    # -- interrupts -----------------------------------------------------------------------

    def tool_interrupted(self, interrupts: list[InterruptRecord]) -> None:
        """Record interrupts raised by a tool call (or its BeforeToolCall hooks).

        The call produced no result and did nothing it cannot redo when answered, so it is no
        longer counted as started (it is not *in doubt* on resume).
        """
        state = self.run.interrupt_state
        table = state.setdefault("interrupts", {})
        started = self.run.cursor.started
        for interrupt in interrupts:
            table[interrupt["id"]] = interrupt
            tool_use_id = interrupt.get("tool_use_id")
            if tool_use_id in started:
                started.remove(tool_use_id)
        state["activated"] = True

    def has_open_interrupts(self) -> bool:
        """True when some recorded interrupt still waits for its response."""
        table = self.run.interrupt_state.get("interrupts")
        if not table:
            return False
        return any("response" not in item for item in table.values())

    def _save_interrupt_context(self) -> None:
        """Keep the cursor with the interrupts, in tool-call order (concurrent tools raise in any order)."""
        state = self.run.interrupt_state
        order: dict[str | None, int] = {use["toolUseId"]: i for i, use in enumerate(tool_uses_of(self.run.messages[-1]))}
        table = state.get("interrupts") or {}
        ranked = sorted(table.values(), key=lambda item: (order.get(item.get("tool_use_id"), len(order)), item.get("source") != "hook"))
        state["interrupts"] = {item["id"]: item for item in ranked}
        state["context"] = self.run.cursor.to_dict()

    # -- cancellation ---------------------------------------------------------------------

    def cancel(self) -> list[Message]:
        """Stop the invocation; tool calls without results get an error result."""
        cursor = self.run.cursor
        added: list[Message] = []
        uses = tool_uses_of(self.run.messages[-1]) if cursor.phase == "tools" and self.run.messages else []
        if uses:
            for use in uses:
                if use["toolUseId"] not in cursor.results:
                    cursor.results[use["toolUseId"]] = {
                        "toolUseId": use["toolUseId"],
                        "status": "error",
                        "content": [{"text": "Tool call cancelled: the invocation was cancelled."}],
                    }
            added = self._close_cycle(uses)
            cursor.pending_pause = None
        cursor.stop_reason = "cancelled"
        cursor.phase = "idle"
        self.run.interrupt_state = {}
        return added
