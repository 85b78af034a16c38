"""One invocation of an agent: decide new call vs resume, drive the loop, build the result.

This is where a prompt meets the run state: a new prompt starts a cycle, interrupt responses
and checkpoints resume one, ``None`` continues whatever was paused. Everything it decides is
recorded in the ``RunState``; nothing survives here between calls.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import pydantic

from .._capture import load, take
from .._prompt import Prompt, normalize_prompt
from ..checkpoint import Checkpoint, check_metrics
from ..checkpoint import parse as parse_checkpoint
from ..errors import CheckpointError, InterruptError, PromptError, ShapeError, SnapshotError
from ..hooks import AfterInvocation, BeforeInvocation, MessageAdded
from ..interrupts import apply_responses, is_interrupted, pending_interrupts
from ..metrics import Metrics, diff_metrics
from ..result import AgentResult
from ..snapshot import FIELDS
from ..types import Message
from .core import CoreConfig, LoopCore
from .driver import AgentEvent, DriverOptions, LocalDriver
from .effects import Pause, Stop
from .state import CheckpointPosition, Cursor, RunState

if TYPE_CHECKING:
    from ..agent import Agent


def _resume_kind(agent: Agent, prompt: Prompt, output_tool: str | None) -> str | None:
    """Prepare the run for ``prompt``; returns what is resumed, or None for a new call.

    Every check happens before the run is changed, so a refused prompt leaves the agent as it
    was (still interrupted, still paused).
    """
    run = agent.run_state
    if prompt.kind == "interrupt_responses":
        _resume_interrupt(run, prompt.responses, output_tool)
        return "interrupt"
    if prompt.kind == "checkpoint":
        position = _resume_checkpoint(agent, prompt.checkpoint, output_tool)
        return f"checkpoint:{position}"
    if is_interrupted(run.interrupt_state):
        ids = ", ".join(f"{i.id} ({i.name})" for i in pending_interrupts(run.interrupt_state))
        raise InterruptError(
            f"the agent is waiting for answers to interrupts {ids}; send a list of "
            '{"interruptResponse": {"interruptId": ..., "response": ...}} blocks (or call agent.cancel() to give up on them)'
        )
    if prompt.kind == "continue":
        if run.cursor.phase != "idle":
            return "continue"
        return None
    if run.cursor.phase == "tools":
        raise PromptError(
            "the agent stopped with tool calls pending (a checkpoint after_model or an error); "
            "call it with None to run them, or resume from the checkpoint"
        )
    return None


def _resume_interrupt(run: RunState, responses: list[dict[str, Any]], output_tool: str | None) -> None:
    """Record the answers and put the cursor back in the interrupted cycle."""
    state = run.interrupt_state
    context = state.get("context")
    cursor: Cursor | None = None
    if state.get("activated"):
        if isinstance(context, dict):
            try:
                cursor = Cursor.from_dict(context)
            except (KeyError, TypeError, ValueError) as exc:
                raise InterruptError(f"interrupt_state.context is malformed ({exc!r}); the interrupted cycle cannot be resumed") from None
            if cursor.phase != "tools":
                raise InterruptError(f"interrupt_state.context.phase must be 'tools', got {cursor.phase!r}")
        elif run.cursor.phase != "tools":
            raise InterruptError(
                "interrupt_state has no context and the agent is not inside a tool cycle; load the snapshot taken at the interrupt"
            )
        _check_output_tool(state.get("output_tool"), output_tool, "the interrupted call is a structured-output call", InterruptError)
    saved = state.get("metrics")
    try:
        metrics = None if saved is None else check_metrics(saved, "interrupt_state.metrics")
    except ShapeError as exc:
        raise InterruptError(str(exc)) from None
    apply_responses(state, responses)
    if cursor is not None:
        run.cursor = cursor
    if metrics is not None:
        # The metrics as of the interrupt (nothing can run in between), so that a fresh agent
        # that loaded the snapshot keeps counting; consumed here so they never go stale.
        run.metrics = metrics
        del state["metrics"]


def _resume_checkpoint(agent: Agent, raw: Any, output_tool: str | None) -> str:
    """Load a checkpoint into the agent; returns its position."""
    if not agent.checkpointing:
        raise CheckpointError(
            "this agent was built with checkpointing=False, so it cannot resume a checkpoint; "
            "build it with checkpointing=True (or the positions you use)"
        )
    # A Checkpoint object is validated like a dict: its fields may have been changed.
    header, snapshot = parse_checkpoint(raw.to_dict() if isinstance(raw, Checkpoint) else raw)
    _check_output_tool(header["output_tool"], output_tool, "this checkpoint was taken in a structured-output call", CheckpointError)
    run = agent.run_state
    try:
        load(run, agent.conversation_manager, snapshot)
    except SnapshotError as exc:
        raise CheckpointError(f"checkpoint.{exc}") from None
    run.metrics = header["metrics"]
    position: CheckpointPosition = header["position"]
    cycle_index: int = header["cycle_index"]
    if position == "after_model":
        run.cursor = Cursor(phase="tools", cycle_index=cycle_index)
    else:
        run.cursor = Cursor(phase="model", cycle_index=cycle_index + 1)
    return position


def _check_output_tool(saved: Any, given: str | None, what: str, error: type[Exception]) -> None:
    """A paused structured-output call must be resumed with the same output model."""
    if saved is not None and saved != given:
        got = f"output_model for {given!r}" if given else "no output_model"
        raise error(f"{what} for {saved!r} but it was resumed with {got}; pass output_model={saved} again")


def abandon_interrupts(agent: Agent) -> list[Message]:
    """Give up on a run's pending interrupts (``Agent.cancel()`` while interrupted).

    The interrupted tool calls get a "cancelled" error result, so the conversation stays valid;
    tool calls of the cycle that already finished keep their results. Returns the messages added.
    """
    run = agent.run_state
    if not run.interrupt_state.get("activated"):
        return []
    state = run.interrupt_state
    context = state.get("context")
    if isinstance(context, dict):
        try:
            run.cursor = Cursor.from_dict(context)
        except (KeyError, TypeError, ValueError) as exc:
            raise InterruptError(f"interrupt_state.context is malformed ({exc!r})") from None
    if state.get("metrics") is not None:
        try:
            run.metrics = check_metrics(state["metrics"], "interrupt_state.metrics")
        except ShapeError as exc:
            raise InterruptError(str(exc)) from None
    return LoopCore(run, CoreConfig()).cancel()


async def invoke_stream(
    agent: Agent,
    prompt: Any,
    *,
    output_model: type[pydantic.BaseModel] | None = None,
    invocation_state: dict[str, Any] | None = None,
    forward_deltas: bool = True,
) -> AsyncIterator[AgentEvent]:
    """Run one invocation; yields stream events and finally ``{"type": "result", ...}``."""
    normalized = normalize_prompt(prompt)
    run = agent.run_state
    output_tool = agent.output_tool_name(output_model)
    resumed_from = _resume_kind(agent, normalized, output_tool)
    resumed = resumed_from is not None
    before_metrics = _copy_metrics(run.metrics)
    hooks = agent.hooks
    if hooks.has(BeforeInvocation):
        await hooks.fire(BeforeInvocation(agent, resumed=resumed, resumed_from=resumed_from))
    core = LoopCore(
        run,
        CoreConfig(
            checkpoint_positions=agent.checkpointing,
            max_cycles=agent.limits.max_cycles,
            max_tokens=agent.limits.max_tokens,
            output_tool=output_tool,
            has_other_tools=len(agent.tool_registry) > 0,
        ),
    )
    result: AgentResult | None = None
    try:
        if resumed:
            core.resume()
        else:
            added = core.start(normalized.messages)
            if hooks.has(MessageAdded):
                for message in added:
                    await hooks.fire(MessageAdded(agent, message))
            for message in added:
                yield {"type": "message", "message": message}
        driver = agent.make_driver(
            core,
            DriverOptions(
                invocation_state=invocation_state or {},
                output_model=output_model,
                output_tool=output_tool,
                forward_deltas=forward_deltas,
            ),
        )
        if not resumed:
            await driver.on_messages(normalized.messages)
        async for event in driver.run():
            yield event
        result = _result(agent, driver, before_metrics, output_model, output_tool)
    finally:
        if hooks.has(AfterInvocation):
            await hooks.fire(AfterInvocation(agent, result=result, resumed=resumed, resumed_from=resumed_from))
    yield {"type": "result", "result": result}


def _copy_metrics(metrics: dict[str, Any]) -> dict[str, Any]:
    copy = dict(metrics)
    copy["usage"] = dict(metrics["usage"])
    copy["tools"] = {name: dict(figures) for name, figures in metrics["tools"].items()}
    return copy


def _last_assistant(messages: list[Message]) -> Message | None:
    for index in range(len(messages) - 1, max(-1, len(messages) - 4), -1):
        message = messages[index]
        if message["role"] == "assistant":
            return message
        if not any("toolResult" in block for block in message["content"]):
            return None  # a prompt: an assistant message before it belongs to an earlier call
    return None


def _result(
    agent: Agent,
    driver: LocalDriver,
    before: dict[str, Any],
    output_model: type[pydantic.BaseModel] | None,
    output_tool: str | None,
) -> AgentResult:
    run: RunState = agent.run_state
    effect = driver.final
    # A copy: a result keeps describing its own call after the run goes on.
    totals = _copy_metrics(run.metrics)
    metrics = Metrics(totals, diff_metrics(totals, before))
    message = _last_assistant(run.messages)
    state = agent.state.get()
    if isinstance(effect, Pause):
        snapshot = take(run, agent.conversation_manager, list(FIELDS))
        checkpoint = Checkpoint(
            position=effect.position,
            cycle_index=effect.cycle_index,
            snapshot=snapshot,
            metrics=_copy_metrics(totals),
            output_tool=output_tool,
        )
        return AgentResult("checkpoint", message, metrics, state, checkpoint=checkpoint)
    assert isinstance(effect, Stop)
    if effect.reason == "interrupt":
        if output_tool is not None:
            run.interrupt_state["output_tool"] = output_tool
        else:
            run.interrupt_state.pop("output_tool", None)
        run.interrupt_state["metrics"] = _copy_metrics(totals)
        return AgentResult("interrupt", message, metrics, state, interrupts=pending_interrupts(run.interrupt_state))
    structured = None
    cursor = run.cursor
    if output_model is not None and cursor.structured_output is not None:
        structured = output_model.model_validate(cursor.structured_output)
    if cursor.phase == "idle":
        cursor.structured_output = None
        cursor.corrective_turn_used = False
        agent.conversation_manager.apply_management(run)
    return AgentResult(effect.reason, message, metrics, state, structured_output=structured)
