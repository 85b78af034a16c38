"""One invocation of an agent: decide new call vs resume, drive the loop, build the result.

This is where a prompt meets the run state: a new prompt starts a cycle, interrupt responses
and checkpoints resume one, ``None`` continues whatever was paused. Everything it decides is
recorded in the ``RunState``; nothing survives here between calls.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import pydantic

from .._capture import apply, capture
from .._prompt import Prompt, normalize_prompt
from ..checkpoint import Checkpoint
from ..errors import CheckpointError, InterruptError, PromptError
from ..hooks import AfterInvocation, BeforeInvocation, MessageAdded
from ..interrupts import apply_responses, pending_interrupts
from ..metrics import Metrics, diff_metrics
from ..result import AgentResult
from ..snapshot import FIELDS, Snapshot
from ..types import Message
from .core import CoreConfig, LoopCore
from .driver import AgentEvent, DriverOptions, LocalDriver
from .effects import Pause, Stop
from .state import Cursor, RunState

if TYPE_CHECKING:
    from ..agent import Agent


def _resume_kind(agent: Agent, prompt: Prompt) -> str | None:
    """Prepare the run for ``prompt``; returns what is resumed, or None for a new call."""
    run = agent.run_state
    cursor = run.cursor
    interrupted = bool(run.interrupt_state.get("activated"))
    if prompt.kind == "interrupt_responses":
        apply_responses(run.interrupt_state, prompt.responses)
        context = run.interrupt_state.get("context")
        if isinstance(context, dict):
            run.cursor = Cursor.from_dict(context)
        return "interrupt"
    if prompt.kind == "checkpoint":
        if not agent.checkpointing:
            raise CheckpointError(
                "this agent was built with checkpointing=False, so it cannot resume a checkpoint; "
                "build it with checkpointing=True (or the positions you use)"
            )
        checkpoint = Checkpoint.from_dict(prompt.checkpoint)
        apply(run, agent.conversation_manager, Snapshot.from_dict(checkpoint.snapshot).data)
        run.metrics = checkpoint.metrics
        if checkpoint.position == "after_model":
            last = run.messages[-1] if run.messages else None
            if last is None or last["role"] != "assistant" or not any("toolUse" in b for b in last["content"]):
                raise CheckpointError("checkpoint at after_model must end with an assistant message calling tools")
            run.cursor = Cursor(phase="tools", cycle_index=checkpoint.cycle_index)
        else:
            run.cursor = Cursor(phase="model", cycle_index=checkpoint.cycle_index + 1)
        return f"checkpoint:{checkpoint.position}"
    if interrupted and any("response" not in item for item in run.interrupt_state.get("interrupts", {}).values()):
        ids = ", ".join(i.id for i in pending_interrupts(run.interrupt_state))
        raise InterruptError(
            f"the agent is waiting for answers to interrupts ({ids}); send a list of interruptResponse blocks before any new prompt"
        )
    if prompt.kind == "continue":
        if cursor.phase != "idle":
            return "continue"
        return None
    if cursor.phase == "tools":
        raise PromptError(
            "the agent stopped with tool calls pending (a checkpoint after_model or an error); "
            "call it with None to run them, or resume from the checkpoint"
        )
    return None


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
    resumed_from = _resume_kind(agent, normalized)
    resumed = resumed_from is not None
    before_metrics = _copy_metrics(run.metrics)
    hooks = agent.hooks
    if hooks.has(BeforeInvocation):
        await hooks.fire(BeforeInvocation(agent, resumed=resumed, resumed_from=resumed_from))
    output_tool = agent.output_tool_name(output_model)
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
        result = _result(agent, driver, before_metrics, output_model)
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
        if messages[index]["role"] == "assistant":
            return messages[index]
    return None


def _result(agent: Agent, driver: LocalDriver, before: dict[str, Any], output_model: type[pydantic.BaseModel] | None) -> AgentResult:
    run: RunState = agent.run_state
    effect = driver.final
    metrics = Metrics(run.metrics, diff_metrics(run.metrics, before))
    message = _last_assistant(run.messages)
    state = agent.state.get()
    if isinstance(effect, Pause):
        snapshot = Snapshot(data=capture(run, agent.conversation_manager, list(FIELDS)))
        checkpoint = Checkpoint(
            position=effect.position,
            cycle_index=effect.cycle_index,
            snapshot=snapshot.to_dict(),
            metrics=_copy_metrics(run.metrics),
        )
        return AgentResult("checkpoint", message, metrics, state, checkpoint=checkpoint)
    assert isinstance(effect, Stop)
    if effect.reason == "interrupt":
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
