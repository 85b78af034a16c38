"""A callback handler collecting the events of an invocation: text deltas, tool uses, messages, the result."""

from fake_model import FakeModel, call, text
from show import dump, show_result
from strands import Agent, tool

KINDS = ("init_event_loop", "start_event_loop", "start", "data", "current_tool_use", "message", "result", "force_stop", "complete")


@tool
def lookup(city: str) -> str:
    """Look up the weather of a city.

    Args:
        city: The city.
    """
    return f"sunny in {city}"


class Collector:
    """Collects what a callback handler receives, by documented keyword."""

    def __init__(self) -> None:
        self.kinds: list[str] = []
        self.text = ""
        self.tools: list[dict] = []
        self.messages: list[dict] = []
        self.raw: list[str] = []

    def __call__(self, **kwargs: object) -> None:
        for kind in KINDS:
            if kind in kwargs:
                self.kinds.append(kind)
                break
        else:
            if "event" in kwargs:
                self.raw.append(next(iter(kwargs["event"])))
        if "data" in kwargs:
            self.text += kwargs["data"]
        if "current_tool_use" in kwargs:
            self.tools.append(dict(kwargs["current_tool_use"]))
        if "message" in kwargs:
            self.messages.append(kwargs["message"])
        if "result" in kwargs:
            self.final = str(kwargs["result"])


collector = Collector()
model = FakeModel([call("tu-1", "lookup", {"city": "Lyon"}, say="Let me check."), text("It is sunny in Lyon.")])
agent = Agent(model=model, tools=[lookup], callback_handler=collector)
result = agent("Weather in Lyon?")
show_result("result", result)
dump("callback.kinds", collector.kinds)
dump("callback.raw_event_kinds", collector.raw)
dump("callback.text", collector.text)
dump("callback.last_tool_use", collector.tools[-1])
dump("callback.messages", collector.messages)
dump("callback.final", collector.final)
