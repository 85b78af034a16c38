"""AgentResult fields: stop_reason, message, metrics (accumulated usage, cycle count, tool metrics), state, interrupts, str()."""

from fake_model import FakeModel, call, text
from show import dump
from strands import Agent, tool
from strands.agent import AgentResult


@tool
def lookup(key: str) -> str:
    """Look up a key.

    Args:
        key: The key.
    """
    return {"pi": "3.14159"}.get(key, "unknown")


model = FakeModel(
    [
        call("tu-1", "lookup", {"key": "pi"}, usage=(100, 20)),
        call("tu-2", "lookup", {"key": "e"}, usage=(150, 25)),
        text("pi is 3.14159\ne is unknown", usage=(200, 30)),
    ]
)
agent = Agent(model=model, tools=[lookup], callback_handler=None)
result = agent("What are pi and e?")
dump("type", type(result).__name__)
dump("is_agent_result", isinstance(result, AgentResult))
dump("stop_reason", result.stop_reason)
dump("message.role", result.message["role"])
dump("message.content", result.message["content"])
dump("str", str(result))
dump("interrupts", result.interrupts)
dump("structured_output", result.structured_output)
dump("state_type", type(result.state).__name__)
usage = result.metrics.accumulated_usage
dump("accumulated_usage", {k: usage[k] for k in ("inputTokens", "outputTokens", "totalTokens")})
dump("cycle_count", result.metrics.cycle_count)
tool_metrics = result.metrics.tool_metrics["lookup"]
dump(
    "tool_metrics.lookup",
    {"call_count": tool_metrics.call_count, "success_count": tool_metrics.success_count, "error_count": tool_metrics.error_count},
)
dump("result.to_dict.keys", sorted(result.to_dict()))
dump("result.to_dict.stop_reason", result.to_dict()["stop_reason"])

model2 = FakeModel([{"text": "I was cut", "stop": "max_tokens", "usage": (5, 50)}])
try:
    Agent(model=model2, callback_handler=None)("Write a novel")
except Exception as exc:
    dump("max_tokens.error", type(exc).__name__)
