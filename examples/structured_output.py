"""Structured output: ``agent(prompt, output_model=Forecast)`` returns a validated pydantic object.

The model gets one more tool, named after the model class, whose input schema is the class's
JSON schema; its call ends the turn and ``result.structured_output`` is the validated object.
Input that fails validation goes back to the model as an error result it can correct, and a
model that answers in text instead is asked once (a corrective turn) to call the tool.

Runs offline on the scripted model: the responses are the model's side of the conversation.
"""

from __future__ import annotations

import pydantic

from tether import Agent, ScriptedModel, tool
from tether.models import tool_call


class Forecast(pydantic.BaseModel):
    """Tomorrow's weather in a city: call this with the final answer."""

    city: str
    celsius: float = pydantic.Field(ge=-90, le=60, description="Temperature in degrees Celsius")
    summary: str = pydantic.Field(max_length=40)


@tool
def weather_station(city: str) -> str:
    """Tomorrow's reading of a city's weather station.

    Args:
        city: The city.
    """
    return f"{city}: 24 C, sunny, light wind"


def script() -> ScriptedModel:
    return ScriptedModel(
        [
            tool_call("weather_station", {"city": "Lisbon"}, tool_use_id="w1"),
            tool_call("Forecast", {"city": "Lisbon", "celsius": 240, "summary": "sunny"}, tool_use_id="f1"),  # out of range
            tool_call("Forecast", {"city": "Lisbon", "celsius": 24, "summary": "sunny, light wind"}, tool_use_id="f2"),
        ]
    )


def main() -> Forecast:
    agent = Agent(model=script(), tools=[weather_station])
    result = agent("What is the weather in Lisbon tomorrow?", output_model=Forecast)
    for message in agent.messages:
        for block in message["content"]:
            if "toolResult" in block:
                outcome = block["toolResult"]
                print(f"  {outcome['toolUseId']}: {outcome['status']}: {outcome['content'][0]['text']}")
    forecast = result.structured_output
    assert isinstance(forecast, Forecast)
    print("structured output:", repr(forecast))
    print("stop reason:", result.stop_reason)
    return forecast


if __name__ == "__main__":
    main()
