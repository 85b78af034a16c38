"""``Agent(trace_attributes=...)``: Strands' extra attributes on the agent's invocation spans."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...loop.tracing import Attributes, Span, SpanKind, Tracer


class AttributedTracer:
    """A tracer adding ``extra`` to the attributes of every ``invocation`` span it opens.

    Anything else (``capture_content``, ...) is read from the wrapped tracer.
    """

    def __init__(self, tracer: Tracer, extra: Mapping[str, Any]) -> None:
        self.wrapped = tracer
        self.extra = dict(extra)

    def start_span(self, kind: SpanKind, name: str, attributes: Attributes, parent: Span | None = None) -> Span:
        if kind == "invocation":
            attributes = {**self.extra, **attributes}
        return self.wrapped.start_span(kind, name, attributes, parent)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.wrapped, name)


__all__ = ["AttributedTracer"]
