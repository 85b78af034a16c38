"""Tools with docstring Args: the spec the model is offered, a tool loop, the final answer."""

from fake_model import FakeModel, call, calls, text
from show import dump, show_messages, show_result
from strands import Agent, tool


@tool
def word_count(text: str) -> int:
    """Count the words in a text.

    Args:
        text: The text whose words are counted.
    """
    return len(text.split())


@tool
def join_words(words: list[str], separator: str = " ") -> str:
    """Join words into one string.

    Args:
        words: The words to join, in order.
        separator: What goes between two words.
    """
    return separator.join(words)


@tool(name="shout", description="Upper-case a text.")
def make_loud(text: str) -> str:
    return text.upper()


model = FakeModel(
    [
        call("tu-1", "word_count", {"text": "the quick brown fox"}, usage=(20, 7)),
        calls([("tu-2", "join_words", {"words": ["a", "b", "c"], "separator": "-"}), ("tu-3", "shout", {"text": "hey"})], usage=(30, 9)),
        text("4 words; a-b-c; HEY", usage=(40, 6)),
    ]
)
agent = Agent(model=model, tools=[word_count, join_words, make_loud], callback_handler=None)
dump("tool_names", sorted(agent.tool_names))
dump("tool_specs", sorted((t.tool_spec for t in [word_count, join_words, make_loud]), key=lambda s: s["name"]))
result = agent("Count and join.")
show_result("result", result)
show_messages("agent", agent)
dump("model.requests", model.requests)
