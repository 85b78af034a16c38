"""One model call, as every driver performs it: hooks, streaming, overflow reduction, retries.

The local driver and the Temporal model activity both run :func:`respond`, so a model call
behaves the same in-process and on a worker. Throttling is retried here only when a
``RetryPolicy`` is given (Temporal retries the whole activity instead).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import ContextWindowExhaustedError, ContextWindowOverflowError, ModelThrottledError
from ..hooks import AfterModelCall, BeforeModelCall
from ..metrics import MS_DIGITS
from ..models.base import config_of
from ..types import DeltaEvent, Message, ModelRequest, ToolChoice, ToolSpec
from .host import LoopHost
from .policies import RetryPolicy
from .state import RunState
from .stream import StreamAccumulator
from .tracing import NULL_TRACER, Span, content_recorder

if TYPE_CHECKING:
    from ..models.base import Model

_log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ModelResponse:
    """A complete, accepted model response."""

    message: Message
    stop_reason: str
    usage: dict[str, int]
    latency_ms: float
    model_state: dict[str, Any] | None


def respond(
    host: LoopHost,
    run: RunState,
    *,
    tool_specs: list[ToolSpec],
    tool_choice: ToolChoice | None,
    cycle_index: int,
    retry: RetryPolicy | None = None,
    backoff: Callable[[float], Awaitable[None]] | None = None,
    forward_deltas: bool = False,
    cancel: threading.Event | None = None,
    parent: Span | None = None,
    max_tokens: int | None = None,
) -> AsyncIterator[DeltaEvent | ModelResponse]:
    """Yield text/reasoning delta events (when ``forward_deltas``), then one :class:`ModelResponse`.

    Yields no response when ``cancel`` is set during the call. An overflow makes the host's
    conversation manager reduce ``run`` and the call is retried, at most
    ``host.limits.max_overflow_reductions`` times. An ``AfterModelCall`` hook may ask for a
    retry of a failed or a successful call. The whole call (retries included) is one
    ``model_call`` span under ``parent`` (no span, and no cost, with the null tracer).
    ``max_tokens`` caps the reply's output tokens (the request's ``max_tokens``; the run's budget).
    """
    model = host.model
    calls = _respond(host, model, run, tool_specs, tool_choice, cycle_index, retry, backoff, forward_deltas, cancel, max_tokens)
    if host.tracer is NULL_TRACER:
        return calls
    return _traced(host, model, run, calls, cycle_index, parent)


async def _traced(
    host: LoopHost,
    model: Model,
    run: RunState,
    calls: AsyncIterator[DeltaEvent | ModelResponse],
    cycle_index: int,
    parent: Span | None,
) -> AsyncIterator[DeltaEvent | ModelResponse]:
    """``calls`` inside one ``model_call`` span (with the messages, when the tracer records content)."""
    name = str(getattr(model, "model_id", type(model).__name__))
    attributes: dict[str, str | int] = {"tether.cycle_index": cycle_index}
    config = config_of(model)
    if isinstance(config.get("provider"), str):
        attributes["tether.provider"] = config["provider"]
    if isinstance(config.get("model"), str):
        attributes["tether.request_model"] = config["model"]
    span = host.tracer.start_span("model_call", name, attributes, parent)
    record = content_recorder(host.tracer, span)
    if record is not None:
        if run.system_prompt:
            record("system", run.system_prompt)
        record("input_messages", run.messages)
    ended = False
    try:
        async for item in calls:
            if isinstance(item, ModelResponse):
                span.set_attributes(
                    {
                        "tether.stop_reason": item.stop_reason,
                        "tether.input_tokens": int(item.usage.get("inputTokens", 0)),
                        "tether.output_tokens": int(item.usage.get("outputTokens", 0)),
                    }
                )
                if record is not None:
                    record("output_message", item.message)
                ended = True
                span.end()  # the call is over: a caller that stops iterating now ends nothing twice
            yield item
    except Exception as exc:
        if not ended:
            ended = True
            span.end(exc)
        raise
    finally:
        if not ended:
            span.end()  # cancelled, or the caller stopped iterating


async def _respond(
    host: LoopHost,
    model: Model,
    run: RunState,
    tool_specs: list[ToolSpec],
    tool_choice: ToolChoice | None,
    cycle_index: int,
    retry: RetryPolicy | None,
    backoff: Callable[[float], Awaitable[None]] | None,
    forward_deltas: bool,
    cancel: threading.Event | None,
    max_tokens: int | None = None,
) -> AsyncIterator[DeltaEvent | ModelResponse]:
    hooks = host.hooks
    agent = host.owner
    throttled = 0
    overflows = 0
    while True:
        if cancel is not None and cancel.is_set():
            return
        if hooks.has(BeforeModelCall):
            await hooks.fire(BeforeModelCall(agent, cycle_index=cycle_index))
        _log.debug("model call of cycle %d: %d messages, %d tool specs", cycle_index, len(run.messages), len(tool_specs))
        request: ModelRequest = {
            "messages": run.messages,
            "system_prompt": run.system_prompt,
            "tool_specs": tool_specs,
            "tool_choice": tool_choice,
            "model_state": run.model_state,
        }
        if max_tokens is not None:
            request["max_tokens"] = max_tokens
        accumulator = StreamAccumulator()
        started = time.perf_counter()
        try:
            async for event in model.stream(request):
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
            asked = await _after_error(host, exc)
            if retry is None or (not asked and throttled >= retry.max_attempts):
                raise
            wait = retry.delay(throttled, exc.retry_after) if backoff is not None else 0.0
            _log.warning(
                "model call of cycle %d throttled (%s); retrying in %.2f s (attempt %d of %d)",
                cycle_index,
                exc,
                wait,
                throttled + 1,
                retry.max_attempts,
            )
            if backoff is not None:
                await backoff(wait)
            continue
        except ContextWindowOverflowError as exc:
            overflows += 1
            limit = host.limits.max_overflow_reductions
            if overflows > limit:
                raise ContextWindowExhaustedError(
                    f"the context window still overflows after {limit} reductions; raise "
                    "Limits.max_overflow_reductions or shorten the conversation"
                ) from exc
            before = len(run.messages)
            await host.conversation_manager.reduce_context(run, model, exc)
            _log.info(
                "model call of cycle %d overflowed the context window; %s reduced the conversation from %d to %d messages "
                "(reduction %d of at most %d), retrying",
                cycle_index,
                type(host.conversation_manager).__name__,
                before,
                len(run.messages),
                overflows,
                limit,
            )
            continue
        except Exception as exc:
            if await _after_error(host, exc):
                # the error's type only: a response error may quote what the model wrote
                _log.warning("model call of cycle %d failed (%s); retrying: an AfterModelCall hook asked", cycle_index, type(exc).__name__)
                continue
            raise
        latency_ms = round((time.perf_counter() - started) * 1000.0, MS_DIGITS)
        if hooks.has(AfterModelCall):
            after = await hooks.fire(AfterModelCall(agent, message=message, stop_reason=accumulator.stop_reason))
            if after.retry:
                _log.info("model call of cycle %d: an AfterModelCall hook asked for a retry of the response", cycle_index)
                continue
        _log.debug("model call of cycle %d done: %s, %.0f ms, %s", cycle_index, accumulator.stop_reason, latency_ms, accumulator.usage)
        yield ModelResponse(message, accumulator.stop_reason, accumulator.usage, latency_ms, accumulator.model_state)
        return


async def _after_error(host: LoopHost, exc: Exception) -> bool:
    """Fire AfterModelCall for a failed call; True when a hook asked for a retry."""
    if not host.hooks.has(AfterModelCall):
        return False
    event = await host.hooks.fire(AfterModelCall(host.owner, exception=exc))
    return event.retry
