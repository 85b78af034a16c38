"""Agents as tools: a sub-agent passed in tools=, one wrapped with as_tool(), and one called from a @tool function."""

from fake_model import FakeModel, call, text
from show import dump, show_messages, show_result
from strands import Agent, tool

poet = Agent(
    name="poet",
    description="Writes a two-line poem about a topic.",
    model=FakeModel([text("Roses bloom,\nthe moon in June.", usage=(8, 9))]),
    callback_handler=None,
)
critic = Agent(name="critic", model=FakeModel([text("Lovely rhyme.", usage=(6, 2))]), callback_handler=None)
translator = Agent(name="translator", model=FakeModel([text("Les roses fleurissent.", usage=(5, 4))]), callback_handler=None)


@tool
def translate(text: str) -> str:
    """Translate a text into French.

    Args:
        text: The text.
    """
    return str(translator(f"Translate: {text}")).strip()


orchestrator = Agent(
    model=FakeModel(
        [
            call("tu-1", "poet", {"input": "the moon"}),
            call("tu-2", "review", {"input": "Roses bloom, the moon in June."}),
            call("tu-3", "translate", {"text": "Roses bloom"}),
            text("Done: poem, review, translation."),
        ]
    ),
    tools=[poet, critic.as_tool(name="review", description="Review a poem."), translate],
    callback_handler=None,
)
dump("tools_offered", sorted(orchestrator.tool_names))
result = orchestrator("Write, review and translate a poem about the moon")
show_result("result", result)
show_messages("orchestrator", orchestrator)
dump("poet.saw", poet.model.requests[0]["last_user_text"])
dump("critic.saw", critic.model.requests[0]["last_user_text"])
dump("translator.saw", translator.model.requests[0]["last_user_text"])
dump("poet.message_count", len(poet.messages))
