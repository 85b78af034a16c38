"""A multi-turn conversation: system prompt, preloaded messages, content-block prompts, message-list prompts, agent() with no prompt."""

from fake_model import FakeModel, text
from show import dump, show_messages, show_result
from strands import Agent

history = [
    {"role": "user", "content": [{"text": "My name is Ada."}]},
    {"role": "assistant", "content": [{"text": "Nice to meet you, Ada."}]},
]
model = FakeModel([text("Your name is Ada."), text("Two texts received."), text("Message list received."), text("Continuing.")])
agent = Agent(
    model=model, messages=history, system_prompt="You remember names.", name="Memo", description="Remembers.", callback_handler=None
)
dump("identity", {"name": agent.name, "description": agent.description, "agent_id": agent.agent_id, "system_prompt": agent.system_prompt})
show_result("first", agent("What is my name?"))
show_result("blocks", agent([{"text": "one"}, {"text": "two"}]))
show_result("message_list", agent([{"role": "user", "content": [{"text": "as a message"}]}]))
agent.messages.append({"role": "user", "content": [{"text": "appended by hand"}]})
show_result("no_prompt", agent())
show_messages("agent", agent)
dump("model.requests", model.requests)
dump("preloaded_list_length_after", len(history))  # Strands keeps the list it was given
