"""agent.structured_output / structured_output_async: a Pydantic model filled by the model, the history untouched."""

import asyncio
import warnings

from fake_model import FakeModel, call, text
from pydantic import BaseModel, Field
from show import dump, show_messages
from strands import Agent

warnings.simplefilter("ignore", DeprecationWarning)


class Person(BaseModel):
    """A person mentioned in the text."""

    name: str = Field(description="The person's name")
    age: int = Field(description="Age in years")


class City(BaseModel):
    """A city."""

    name: str
    country: str


model = FakeModel(
    [
        call("tu-1", "Person", {"name": "Ada", "age": 36}),
        text("Ada is a mathematician."),
        call("tu-2", "City", {"name": "Lyon", "country": "France"}),
    ]
)
agent = Agent(model=model, callback_handler=None)
person = agent.structured_output(Person, "Ada is 36 years old.")
dump("person", person.model_dump())
dump("person.type", type(person).__name__)
show_messages("after_structured_output", agent)
agent("Tell me about Ada.")
city = asyncio.run(agent.structured_output_async(City, "Where was she born? Say Lyon."))
dump("city", city.model_dump())
show_messages("agent", agent)
dump("model.requests", model.requests)
