"""Tool failures: a raising tool, an unknown tool name and invalid input become error results; the loop goes on."""

from fake_model import FakeModel, call, text
from show import dump, show_messages, show_result
from strands import Agent, tool


@tool
def parse_int(value: str) -> int:
    """Parse an integer.

    Args:
        value: The digits.
    """
    return int(value)


model = FakeModel(
    [
        call("tu-1", "parse_int", {"value": "12x"}),
        call("tu-2", "no_such_tool", {"x": 1}),
        call("tu-3", "parse_int", {"wrong": "12"}),
        call("tu-4", "parse_int", {"value": "12"}),
        text("Finally: 12."),
    ]
)
agent = Agent(model=model, tools=[parse_int], callback_handler=None)
result = agent("Parse 12x, then try harder")
show_result("result", result)
for message in agent.messages:
    for block in message["content"]:
        if "toolResult" in block:
            dump(f"result.{block['toolResult']['toolUseId']}.status", block["toolResult"]["status"])
show_messages("agent", agent)
dump("tool_metrics", {name: [m.call_count, m.success_count, m.error_count] for name, m in sorted(result.metrics.tool_metrics.items())})
