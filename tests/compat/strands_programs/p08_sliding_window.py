"""SlidingWindowConversationManager: the window after several turns, and its saved state."""

from fake_model import FakeModel, call, text
from show import dump, show_messages
from strands import Agent, tool
from strands.agent.conversation_manager import SlidingWindowConversationManager


@tool
def ping(n: int) -> str:
    """Ping.

    Args:
        n: A number.
    """
    return f"pong {n}"


manager = SlidingWindowConversationManager(window_size=4)
model = FakeModel([text("one"), text("two"), call("tu-1", "ping", {"n": 3}), text("three"), text("four")])
agent = Agent(model=model, tools=[ping], conversation_manager=manager, callback_handler=None)
for prompt in ("first", "second", "third", "fourth"):
    result = agent(prompt)
    dump(f"{prompt}.answer", str(result))
    dump(f"{prompt}.message_count", len(agent.messages))
show_messages("agent", agent)
dump("manager.state", manager.get_state())
dump("manager.removed_message_count", manager.removed_message_count)
dump("model.request_sizes", [r["messages"] for r in model.requests])
