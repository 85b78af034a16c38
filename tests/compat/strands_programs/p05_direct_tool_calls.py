"""Direct tool calls agent.tool.NAME(...): the ToolResult, and the history with record_direct_tool_call True and False."""

from fake_model import FakeModel, text
from show import dump, show_messages
from strands import Agent, tool


@tool
def word_count(text: str) -> int:
    """Count words.

    Args:
        text: The text.
    """
    return len(text.split())


@tool
def divide(a: float, b: float) -> float:
    """Divide a by b.

    Args:
        a: Dividend.
        b: Divisor.
    """
    return a / b


recording = Agent(model=FakeModel([text("There were 3 words.")]), tools=[word_count, divide], callback_handler=None)
result = recording.tool.word_count(text="a b c")
dump("recorded.result.status", result["status"])
dump("recorded.result.content", result["content"])
failed = recording.tool.divide(a=1, b=0)
dump("recorded.failed.status", failed["status"])
show_messages("recorded", recording)
answer = recording("How many words were there?")
dump("recorded.answer", str(answer))
dump("recorded.model_saw_messages", recording.model.requests[0]["messages"])

silent = Agent(model=FakeModel([]), tools=[word_count], record_direct_tool_call=False, callback_handler=None)
quiet = silent.tool.word_count(text="one two")
dump("silent.result.content", quiet["content"])
show_messages("silent", silent)
