"""Tracing: OpenTelemetry GenAI spans of an agent run, a checkpoint resume linked to its origin.

The application owns the OpenTelemetry SDK: it sets a global tracer provider (here with an
in-memory exporter; in production an OTLP exporter) and every agent traces through it, with no
Tether option needed. The run pauses at a checkpoint and a fresh agent resumes it from JSON: the
resumed ``invoke_agent`` span links to the paused one, and no model or tool call is spanned twice.
Log records of the ``tether`` loggers carry the trace and span ids. Runs offline on the scripted
model. Needs ``pip install 'tether[otel]'`` (the OpenTelemetry API and SDK).
"""

from __future__ import annotations

import json
import logging
import sys

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tether import Agent, ScriptedModel, tool
from tether.models import tool_call


@tool
def lookup(city: str) -> str:
    """The weather in a city.

    Args:
        city: The city.
    """
    return f"sunny in {city}"


def agent() -> Agent:
    """A fresh agent (same tools, scripted model whose position lives in the run's JSON)."""
    model = ScriptedModel([tool_call("lookup", {"city": "Lisbon"}), "It is sunny in Lisbon."], stateful=True, model_id="demo-model")
    return Agent(model=model, tools=[lookup], name="weather", checkpointing=["after_tools"])


def show(spans: tuple[ReadableSpan, ...]) -> None:
    """Print the spans as a tree (children under their parent), with the key attributes."""
    by_parent: dict[int | None, list[ReadableSpan]] = {}
    for span in spans:
        by_parent.setdefault(span.parent.span_id if span.parent else None, []).append(span)

    def walk(span: ReadableSpan, depth: int) -> None:
        attributes = dict(span.attributes or {})
        keys = ("gen_ai.request.model", "gen_ai.usage.input_tokens", "gen_ai.tool.call.id", "tether.cycle", "tether.resumed")
        shown = ", ".join(f"{key}={attributes[key]}" for key in keys if key in attributes)
        links = f"  (links to span {span.links[0].context.span_id:016x})" if span.links else ""
        print(f"{'  ' * depth}{span.name} [{span.context.span_id:016x}] {shown}{links}")
        for child in sorted(by_parent.get(span.context.span_id, []), key=lambda s: s.start_time or 0):
            walk(child, depth + 1)

    for root in sorted(by_parent.get(None, []), key=lambda s: s.start_time or 0):
        walk(root, 0)


def main() -> list[str]:
    """Run, pause, resume in a fresh agent; print the spans; return their names."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)  # the application's choice: Tether picks it up

    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(logging.Formatter("log: %(name)s trace=%(otelTraceID)s span=%(otelSpanID)s %(message)s"))
    logger = logging.getLogger("tether.loop.driver")
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    handler.addFilter(lambda record: "started" in record.getMessage())  # just the tool start, for brevity

    paused = agent()("What is the weather in Lisbon?")
    print(f"first invocation: {paused.stop_reason}")
    saved = json.dumps(paused.checkpoint.to_dict() if paused.checkpoint else {})  # only JSON crosses over
    resumed = agent()({"checkpointResume": {"checkpoint": json.loads(saved)}})
    print(f"resumed in a fresh agent: {resumed.stop_reason}: {resumed}")
    spans = exporter.get_finished_spans()
    print(f"{len(spans)} spans:")
    show(spans)
    logger.removeHandler(handler)
    return [span.name for span in spans]


if __name__ == "__main__":
    main()
