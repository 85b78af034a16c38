"""Module tools: a module with a TOOL_SPEC dict and a same-named function, passed as a module; called by the model and directly."""

import module_tool_weather
from fake_model import FakeModel, call, text
from show import dump, show_messages, show_result
from strands import Agent

model = FakeModel([call("tu-1", "module_tool_weather", {"city": "Oslo", "unit": "F"}), text("68F in Oslo.")])
agent = Agent(model=model, tools=[module_tool_weather], callback_handler=None)
dump("tool_names", agent.tool_names)
result = agent("Weather in Oslo in F?")
show_result("result", result)
show_messages("agent", agent)
dump("model_offered", [r["tools"] for r in model.requests])
direct = agent.tool.module_tool_weather(city="Rome")
dump("direct.status", direct["status"])
dump("direct.content", direct["content"])
