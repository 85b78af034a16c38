"""The telemetry seam: spans the loop opens at invocation, model-call and tool-call boundaries.

The loop calls a :class:`Tracer` (part of its host) and never a telemetry library, so the
core stays free of I/O and of optional dependencies. An OpenTelemetry exporter, a log, or a
test's recorder plugs in by implementing ``start_span``; the default :data:`NULL_TRACER`
does nothing and costs one method call per boundary.

Spans are opened and ended explicitly (no context variables), with the parent passed in, so
a span never leaks into another task or outlives a paused invocation: an invocation that
stops at a checkpoint or an interrupt ends its span, and the resumed one opens a new span.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, Protocol, TypeAlias

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

__all__ = ["NULL_SPAN", "NULL_TRACER", "AttributeValue", "Attributes", "Span", "SpanKind", "Tracer"]
