"""structured_output_model on the agent and per invocation: result.structured_output, the forced tool, str(result)."""

from fake_model import FakeModel, call
from pydantic import BaseModel
from show import dump, show_messages, show_result
from strands import Agent, tool


class Weather(BaseModel):
    """A weather report."""

    city: str
    celsius: float


class Verdict(BaseModel):
    """Whether to take an umbrella."""

    umbrella: bool
    reason: str


@tool
def forecast(city: str) -> str:
    """Forecast for a city.

    Args:
        city: The city.
    """
    return f"{city}: 21.5C, rain later"


model = FakeModel(
    [
        call("tu-1", "forecast", {"city": "Lyon"}),
        call("tu-2", "Weather", {"city": "Lyon", "celsius": 21.5}),
        call("tu-3", "Verdict", {"umbrella": True, "reason": "rain later"}),
    ]
)
agent = Agent(model=model, tools=[forecast], structured_output_model=Weather, callback_handler=None)
first = agent("Weather in Lyon?")
show_result("first", first)
dump("first.structured_output", first.structured_output.model_dump())
second = agent("Umbrella?", structured_output_model=Verdict)
dump("second.structured_output", second.structured_output.model_dump())
dump("second.type", type(second.structured_output).__name__)
dump("second.str", str(second))
show_messages("agent", agent)
dump("model.requests", model.requests)
