"""The telemetry seam: spans the loop opens at invocation, model-call and tool-call boundaries.

The loop calls a :class:`Tracer` (part of its host) and never a telemetry library, so the
core stays free of I/O and of optional dependencies. An OpenTelemetry exporter, a log, or a
test's recorder plugs in by implementing ``start_span``; the default :data:`NULL_TRACER`
does nothing and costs one method call per boundary.

Spans are opened and ended explicitly (no context variables), with the parent passed in, so
a span never leaks into another task or outlives a paused invocation: an invocation that
stops at a checkpoint or an interrupt ends its span, and the resumed one opens a new span.

Besides the protocol, the loop uses two optional capabilities, found with ``getattr`` so a
minimal tracer (a test's recorder) needs neither:

- a tracer whose ``capture_content`` is true gets the contents of the calls through its spans'
  ``record_content(what, value)`` (``what``: ``system``, ``input_messages``, ``output_message``,
  ``tool_arguments``, ``tool_result``; ``value`` the run's own data, not to be changed). Never
  asked for by default: contents may be personal data.
- a span's ``trace_ids()`` returns its ids as ``{"trace_id", "span_id"}`` (hex text) or None.
  The invocation stores them in the run's cursor (and so in durable runs and checkpoints); the
  invocation that resumes the run passes them back as the attributes ``tether.link.trace_id``
  and ``tether.link.span_id``, which a tracer may turn into a span link.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal, Protocol, TypeAlias

SpanKind: TypeAlias = Literal["invocation", "model_call", "tool_call"]
AttributeValue: TypeAlias = str | int | float | bool
Attributes: TypeAlias = Mapping[str, AttributeValue]


class Span(Protocol):
    """One open span."""

    def set_attributes(self, attributes: Attributes) -> None:
        """Add attributes (e.g. token counts once the model answered)."""
        ...

    def end(self, error: BaseException | None = None) -> None:
        """Close the span; ``error`` when the boundary failed. Called exactly once."""
        ...


class Tracer(Protocol):
    """Opens spans; implementations must not raise (telemetry never fails a run)."""

    def start_span(self, kind: SpanKind, name: str, attributes: Attributes, parent: Span | None = None) -> Span:
        """Open a span of ``kind`` named ``name`` under ``parent`` (None: a root span).

        Args:
            kind: Which boundary: ``invocation``, ``model_call`` or ``tool_call``.
            name: A short human name (the agent's name, the model id, the tool name).
            attributes: Attributes known when the span opens (run id, cycle index...).
            parent: The enclosing span (model and tool calls run under the invocation's).
        """
        ...


class _NullSpan:
    __slots__ = ()

    def set_attributes(self, attributes: Attributes) -> None:
        return None

    def end(self, error: BaseException | None = None) -> None:
        return None


class _NullTracer:
    __slots__ = ()

    def start_span(self, kind: SpanKind, name: str, attributes: Attributes, parent: Span | None = None) -> Span:
        return NULL_SPAN


NULL_SPAN: Span = _NullSpan()
NULL_TRACER: Tracer = _NullTracer()
"""A tracer that records nothing (the default)."""


def content_recorder(tracer: Tracer, span: Span) -> Callable[[str, Any], None] | None:
    """The span's ``record_content`` when ``tracer`` asked for contents, else None (the default)."""
    if tracer is NULL_TRACER or not getattr(tracer, "capture_content", False):
        return None
    record: Callable[[str, Any], None] | None = getattr(span, "record_content", None)
    return record


def span_ids(span: Span) -> dict[str, str] | None:
    """The span's ``{"trace_id", "span_id"}`` when it has them (see the module docstring)."""
    if span is NULL_SPAN:
        return None
    ids: Callable[[], dict[str, str] | None] | None = getattr(span, "trace_ids", None)
    return ids() if ids is not None else None


__all__ = [
    "NULL_SPAN",
    "NULL_TRACER",
    "AttributeValue",
    "Attributes",
    "Span",
    "SpanKind",
    "Tracer",
    "content_recorder",
    "span_ids",
]
