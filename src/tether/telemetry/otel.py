"""`OTelTracer`: the loop's tracer seam on the OpenTelemetry API, with GenAI span names.

Spans follow the OpenTelemetry GenAI semantic conventions: ``invoke_agent {agent name}``
around an invocation, ``chat {model id}`` around each model call and ``execute_tool {tool
name}`` around each tool call, the latter two children of the invocation span. Attributes:
``gen_ai.operation.name``, ``gen_ai.agent.name``, ``gen_ai.provider.name``,
``gen_ai.request.model``, ``gen_ai.usage.input_tokens``/``output_tokens``,
``gen_ai.response.finish_reasons``, ``gen_ai.tool.name``, ``gen_ai.tool.call.id``, plus
``tether.run_id``, ``tether.cycle`` and ``tether.resumed``. A failure ends its span with an
``ERROR`` status, the exception recorded and ``error.type`` set; a tool call that returned an
error result is an ``ERROR`` too (``error.type`` ``tool_error``).

Only the API is used (the ``otel`` extra); the SDK, exporters and the provider are the
application's. Importing this module imports ``opentelemetry``: :mod:`tether.telemetry` does
so only when tracing is asked for or a global provider is set.

While a span is open it is also the *current* span of the task that opened it, so spans the
application (or an instrumented HTTP client) opens inside a tool nest under ``execute_tool``,
and log records carry the ids (see :class:`tether.telemetry.TraceContextFilter`). The loop
itself never reads the current span: the parent is always passed in explicitly.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Link, SpanContext, SpanKind, Status, StatusCode, TraceFlags

from ..loop.tracing import NULL_SPAN, Attributes, AttributeValue, Span
from ..loop.tracing import SpanKind as TetherSpanKind
from .content import content_attribute
from .env import capture_content_from_env
from .logs import stamp_tether_records

_log = logging.getLogger(__name__)

_OPERATION: dict[TetherSpanKind, tuple[str, SpanKind]] = {
    "invocation": ("invoke_agent", SpanKind.INTERNAL),
    "model_call": ("chat", SpanKind.CLIENT),
    "tool_call": ("execute_tool", SpanKind.INTERNAL),
}

_RENAMED = {
    "tether.cycle_index": "tether.cycle",
    "tether.tool_use_id": "gen_ai.tool.call.id",
    "tether.provider": "gen_ai.provider.name",
    "tether.request_model": "gen_ai.request.model",
    "tether.input_tokens": "gen_ai.usage.input_tokens",
    "tether.output_tokens": "gen_ai.usage.output_tokens",
}
"""The seam's attribute names that the GenAI conventions (or the issue) name differently."""

_LINK = ("tether.link.trace_id", "tether.link.span_id")


def _translated(kind: TetherSpanKind, attributes: Attributes) -> dict[str, AttributeValue | tuple[str, ...]]:
    out: dict[str, AttributeValue | tuple[str, ...]] = {}
    for key, value in attributes.items():
        if key in _LINK:
            continue
        if key == "tether.stop_reason" and kind == "model_call":
            out["gen_ai.response.finish_reasons"] = (str(value),)
        elif key == "tether.run_id":
            if value:
                out["tether.run_id"] = value
                out["gen_ai.conversation.id"] = value
        else:
            out[_RENAMED.get(key, key)] = value
    return out


def _link(attributes: Attributes) -> list[Link]:
    """A link to the span whose ids the resumed invocation carries (none when absent or bad)."""
    trace_id, span_id = attributes.get(_LINK[0]), attributes.get(_LINK[1])
    if not isinstance(trace_id, str) or not isinstance(span_id, str):
        return []
    try:
        context = SpanContext(int(trace_id, 16), int(span_id, 16), is_remote=True, trace_flags=TraceFlags(TraceFlags.SAMPLED))
    except ValueError:
        return []
    if not context.is_valid:
        return []
    return [Link(context, {"tether.link.reason": "resumed"})]


class OTelSpan:
    """One open OpenTelemetry span behind the seam's :class:`~tether.loop.tracing.Span`."""

    __slots__ = ("_ended", "_kind", "_previous", "span")

    def __init__(self, span: trace.Span, kind: TetherSpanKind, *, current: bool = True) -> None:
        self.span = span
        self._kind = kind
        self._ended = not current  # a remote parent is never ended (nor made current) here
        self._previous = otel_context.get_current()
        if current:
            otel_context.attach(trace.set_span_in_context(span, self._previous))

    def set_attributes(self, attributes: Attributes) -> None:
        """Add attributes, renamed to the GenAI conventions."""
        try:
            self.span.set_attributes(_translated(self._kind, attributes))
            if self._kind == "tool_call" and attributes.get("tether.status") == "error":
                self.span.set_attribute("error.type", "tool_error")
                self.span.set_status(Status(StatusCode.ERROR, "the tool returned an error result"))
        except Exception:  # telemetry never fails a run
            _log.debug("could not set span attributes", exc_info=True)

    def record_content(self, what: str, value: Any) -> None:
        """Record message contents (only called when the user opted in)."""
        try:
            found = content_attribute(what, value)
            if found is not None:
                self.span.set_attribute(*found)
        except Exception:
            _log.debug("could not record %s on a span", what, exc_info=True)

    def trace_ids(self) -> dict[str, str] | None:
        """The span's ids as hex text (stored in the run, for the resumed invocation's link)."""
        context = self.span.get_span_context()
        if not context.is_valid:
            return None
        return {"trace_id": trace.format_trace_id(context.trace_id), "span_id": trace.format_span_id(context.span_id)}

    def end(self, error: BaseException | None = None) -> None:
        """End the span (with an ``ERROR`` status and the exception when ``error``)."""
        if self._ended:
            return
        self._ended = True
        try:
            if error is not None:
                self.span.record_exception(error)
                self.span.set_attribute("error.type", type(error).__qualname__)
                self.span.set_status(Status(StatusCode.ERROR, f"{type(error).__name__}: {error}"))
            self.span.end()
        except Exception:
            _log.debug("could not end a span", exc_info=True)
        finally:
            if trace.get_current_span() is self.span:  # nobody else changed the context meanwhile
                otel_context.attach(self._previous)


class OTelTracer:
    """A :class:`~tether.loop.tracing.Tracer` that opens OpenTelemetry spans.

    Pass one to ``Agent(tracer=...)`` to use a given provider; with none, an agent uses the
    global tracer provider when one is set (see :func:`tether.telemetry.global_tracer`).
    """

    __slots__ = ("_tracer", "capture_content", "provider")

    def __init__(self, provider: trace.TracerProvider | None = None, *, capture_content: bool | None = None) -> None:
        """A tracer over ``provider``.

        Args:
            provider: The tracer provider (default: the global one, looked up now).
            capture_content: Record message contents, tool arguments and results on the spans
                (``None``: as the ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``
                environment variable says; off unless it is ``true``).
        """
        from .._version import __version__

        self.provider = provider if provider is not None else trace.get_tracer_provider()
        self._tracer = self.provider.get_tracer("tether", __version__)
        self.capture_content = capture_content_from_env() if capture_content is None else capture_content
        stamp_tether_records()

    def with_content(self, capture_content: bool) -> OTelTracer:
        """This tracer, or one over the same provider with content capture set as asked."""
        if capture_content == self.capture_content:
            return self
        return OTelTracer(self.provider, capture_content=capture_content)

    def remote_span(self, ids: Mapping[str, Any]) -> Span | None:
        """A parent standing for a span of another process (``{"trace_id", "span_id"}``, hex),
        e.g. the invocation span of a Temporal client under which a worker's activities open
        their spans; None when the ids are not valid."""
        try:
            context = SpanContext(
                int(str(ids["trace_id"]), 16), int(str(ids["span_id"]), 16), is_remote=True, trace_flags=TraceFlags(TraceFlags.SAMPLED)
            )
        except (KeyError, TypeError, ValueError):
            return None
        if not context.is_valid:
            return None
        return OTelSpan(trace.NonRecordingSpan(context), "invocation", current=False)

    def start_span(self, kind: TetherSpanKind, name: str, attributes: Attributes, parent: Span | None = None) -> Span:
        """Open the span of a boundary under ``parent`` (None: under the current context)."""
        try:
            operation, span_kind = _OPERATION[kind]
            values = _translated(kind, attributes)
            values["gen_ai.operation.name"] = operation
            if kind == "invocation":
                values["gen_ai.agent.name"] = name
            elif kind == "tool_call":
                values["gen_ai.tool.name"] = name
                values["gen_ai.tool.type"] = "function"
            elif "gen_ai.request.model" not in values:
                values["gen_ai.request.model"] = name
            context = trace.set_span_in_context(parent.span) if isinstance(parent, OTelSpan) else None
            span = self._tracer.start_span(
                f"{operation} {name}", context=context, kind=span_kind, attributes=values, links=_link(attributes)
            )
            return OTelSpan(span, kind)
        except Exception:  # telemetry never fails a run
            _log.debug("could not open a %s span", kind, exc_info=True)
            return NULL_SPAN

    def __repr__(self) -> str:
        return f"OTelTracer(provider={type(self.provider).__name__}, capture_content={self.capture_content})"


__all__ = ["OTelSpan", "OTelTracer"]
