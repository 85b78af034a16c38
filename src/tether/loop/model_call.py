"""One model call, as every driver performs it: hooks, streaming, overflow reduction, retries.

The local driver and the Temporal model activity both run :func:`respond`, so a model call
behaves the same in-process and on a worker. Throttling is retried here only when a
``RetryPolicy`` is given (Temporal retries the whole activity instead).
"""

from __future__ import annotations

import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import ContextWindowExhaustedError, ContextWindowOverflowError, ModelThrottledError
from ..hooks import AfterModelCall, BeforeModelCall
from ..types import Message, ModelRequest, ToolChoice, ToolSpec
from .policies import RetryPolicy
from .state import RunState
from .stream import StreamAccumulator

if TYPE_CHECKING:
    from ..agent import Agent


@dataclass(frozen=True, slots=True)
class ModelResponse:
    """A complete, accepted model response."""

    message: Message
    stop_reason: str
    usage: dict[str, int]
    latency_ms: float
    model_state: dict[str, Any] | None


async def respond(
    agent: Agent,
    run: RunState,
    *,
    tool_specs: list[ToolSpec],
    tool_choice: ToolChoice | None,
    cycle_index: int,
    retry: RetryPolicy | None = None,
    backoff: Callable[[float], Awaitable[None]] | None = None,
    forward_deltas: bool = False,
    cancel: threading.Event | None = None,
) -> AsyncIterator[dict[str, Any] | ModelResponse]:
    """Yield text/reasoning delta events (when ``forward_deltas``), then one :class:`ModelResponse`.

    Yields no response when ``cancel`` is set during the call. An overflow makes the agent's
    conversation manager reduce ``run`` and the call is retried, at most
    ``agent.limits.max_overflow_reductions`` times. An ``AfterModelCall`` hook may ask for a
    retry of a failed or a successful call.
    """
    hooks = agent.hooks
    throttled = 0
    overflows = 0
    while True:
        if cancel is not None and cancel.is_set():
            return
        if hooks.has(BeforeModelCall):
            await hooks.fire(BeforeModelCall(agent, cycle_index=cycle_index))
        request: ModelRequest = {
            "messages": run.messages,
            "system_prompt": run.system_prompt,
            "tool_specs": tool_specs,
            "tool_choice": tool_choice,
            "model_state": run.model_state,
        }
        accumulator = StreamAccumulator()
        started = time.perf_counter()
        try:
            async for event in agent.model.stream(request):
                accumulator.add(event)
                if forward_deltas and "contentBlockDelta" in event:
                    delta = event["contentBlockDelta"]["delta"]
                    if "text" in delta:
                        yield {"type": "text_delta", "text": delta["text"]}
                    elif "reasoningContent" in delta and "text" in delta["reasoningContent"]:
                        yield {"type": "reasoning_delta", "text": delta["reasoningContent"]["text"]}
                if cancel is not None and cancel.is_set():
                    return
            message = accumulator.message()
        except ModelThrottledError as exc:
            throttled += 1
            asked = await _after_error(agent, exc)
            if retry is None or (not asked and throttled >= retry.max_attempts):
                raise
            if backoff is not None:
                await backoff(retry.delay(throttled, exc.retry_after))
            continue
        except ContextWindowOverflowError as exc:
            overflows += 1
            limit = agent.limits.max_overflow_reductions
            if overflows > limit:
                raise ContextWindowExhaustedError(
                    f"the context window still overflows after {limit} reductions; raise "
                    "Limits.max_overflow_reductions or shorten the conversation"
                ) from exc
            await agent.conversation_manager.reduce_context(run, agent.model, exc)
            continue
        except Exception as exc:
            if await _after_error(agent, exc):
                continue
            raise
        latency_ms = (time.perf_counter() - started) * 1000.0
        if hooks.has(AfterModelCall):
            after = await hooks.fire(AfterModelCall(agent, message=message, stop_reason=accumulator.stop_reason))
            if after.retry:
                continue
        yield ModelResponse(message, accumulator.stop_reason, accumulator.usage, latency_ms, accumulator.model_state)
        return


async def _after_error(agent: Agent, exc: Exception) -> bool:
    """Fire AfterModelCall for a failed call; True when a hook asked for a retry."""
    if not agent.hooks.has(AfterModelCall):
        return False
    event = await agent.hooks.fire(AfterModelCall(agent, exception=exc))
    return event.retry
