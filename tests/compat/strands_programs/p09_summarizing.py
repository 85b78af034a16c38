"""SummarizingConversationManager: a context overflow summarizes the oldest messages and the turn goes on."""

from fake_model import FakeModel, overflow, text
from show import dump, show_messages, show_result
from strands import Agent
from strands.agent.conversation_manager import SummarizingConversationManager

summarizer = Agent(model=FakeModel([text("Summary: the user said hello four times.")]), callback_handler=None)
manager = SummarizingConversationManager(summary_ratio=0.5, preserve_recent_messages=2, summarization_agent=summarizer)
model = FakeModel([text("hi 1"), text("hi 2"), text("hi 3"), overflow(), text("hi 4, after the summary")])
agent = Agent(model=model, conversation_manager=manager, callback_handler=None)
for n in (1, 2, 3):
    agent(f"hello {n}")
result = agent("hello 4")
show_result("result", result)
show_messages("agent", agent)
state = manager.get_state()
dump("manager.state.keys", sorted(state))
dump("manager.state.__name__", state["__name__"])
dump("manager.removed_message_count", manager.removed_message_count)
dump("summarizer.requests", summarizer.model.requests)
dump("model.request_sizes", [r["messages"] for r in model.requests])
