"""Snapshots: presets, include/exclude, app_data, to_dict/from_dict, loaded into a new agent that carries on."""

import json

from fake_model import FakeModel, call, text
from show import dump, show_messages, show_result
from strands import Agent, Snapshot, tool
from strands.agent.conversation_manager import SlidingWindowConversationManager


@tool
def square(x: int) -> int:
    """Square a number.

    Args:
        x: The number.
    """
    return x * x


agent = Agent(
    model=FakeModel([call("tu-1", "square", {"x": 7}), text("49")]),
    tools=[square],
    system_prompt="You are a calculator.",
    state={"precision": 2},
    conversation_manager=SlidingWindowConversationManager(window_size=10),
    callback_handler=None,
)
agent("Square 7")

session = agent.take_snapshot(preset="session")
dump("session.scope", session.scope)
dump("session.fields", sorted(session.data))
dump("session.data", session.data)
dump("session.app_data", session.app_data)

full = agent.take_snapshot(preset="session", include=["system_prompt"], exclude=["interrupt_state"], app_data={"ticket": 42})
dump("full.fields", sorted(full.data))
dump("full.app_data", full.app_data)
only_state = agent.take_snapshot(include=["state"])
dump("only_state.data", only_state.data)

as_json = json.dumps(full.to_dict())
restored = Snapshot.from_dict(json.loads(as_json))
dump("restored.schema_version", restored.schema_version)

fresh = Agent(model=FakeModel([text("7 squared was 49; 8 squared is 64.")]), tools=[square], callback_handler=None)
fresh.load_snapshot(restored)
dump("fresh.system_prompt", fresh.system_prompt)
dump("fresh.state", fresh.state.get())
result = fresh("And 8?")
show_result("fresh.result", result)
show_messages("fresh", fresh)
dump("fresh.model_saw", fresh.model.requests)
try:
    fresh.take_snapshot(include=["nonsense"])
except Exception as exc:
    dump("bad_field.error", type(exc).__name__)
