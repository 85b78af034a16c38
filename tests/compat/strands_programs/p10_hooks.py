"""A HookProvider: BeforeToolCallEvent cancels a tool, AfterToolCallEvent rewrites a result; the lifecycle it sees."""

from fake_model import FakeModel, calls, text
from show import dump, show_messages, show_result
from strands import Agent, tool
from strands.hooks import (
    AfterInvocationEvent,
    AfterModelCallEvent,
    AfterToolCallEvent,
    BeforeInvocationEvent,
    BeforeModelCallEvent,
    BeforeToolCallEvent,
    HookProvider,
    HookRegistry,
    MessageAddedEvent,
)


@tool
def read_file(path: str) -> str:
    """Read a file.

    Args:
        path: The path.
    """
    return f"contents of {path}: password=hunter2"


@tool
def delete_file(path: str) -> str:
    """Delete a file.

    Args:
        path: The path.
    """
    raise AssertionError("a cancelled tool must not run")


class Guard(HookProvider):
    """Blocks deletes, redacts secrets, and logs the lifecycle."""

    def __init__(self) -> None:
        self.log: list[str] = []

    def register_hooks(self, registry: HookRegistry, **kwargs: object) -> None:
        registry.add_callback(BeforeInvocationEvent, lambda e: self.log.append("before_invocation"))
        registry.add_callback(AfterInvocationEvent, lambda e: self.log.append("after_invocation"))
        registry.add_callback(BeforeModelCallEvent, lambda e: self.log.append("before_model"))
        registry.add_callback(AfterModelCallEvent, self.after_model)
        registry.add_callback(MessageAddedEvent, lambda e: self.log.append(f"message_added:{e.message['role']}"))
        registry.add_callback(BeforeToolCallEvent, self.before_tool)
        registry.add_callback(AfterToolCallEvent, self.after_tool)

    def after_model(self, event: AfterModelCallEvent) -> None:
        self.log.append(f"after_model:{event.stop_response.stop_reason if event.stop_response else None}")

    def before_tool(self, event: BeforeToolCallEvent) -> None:
        self.log.append(f"before_tool:{event.tool_use['name']}")
        if event.tool_use["name"] == "delete_file":
            event.cancel_tool = "deleting files is not allowed"

    def after_tool(self, event: AfterToolCallEvent) -> None:
        self.log.append(f"after_tool:{event.tool_use['name']}:{event.result['status']}:{event.cancel_message}")
        if event.tool_use["name"] == "read_file":
            texts = [block["text"].replace("hunter2", "******") for block in event.result["content"]]
            event.result = {**event.result, "content": [{"text": t} for t in texts]}


guard = Guard()
model = FakeModel(
    [
        calls([("tu-1", "read_file", {"path": "/etc/app.conf"}), ("tu-2", "delete_file", {"path": "/etc/app.conf"})]),
        text("Read it; could not delete it."),
    ]
)
agent = Agent(model=model, tools=[read_file, delete_file], hooks=[guard], callback_handler=None)
result = agent("Read then delete /etc/app.conf")
show_result("result", result)
show_messages("agent", agent)
dump("log.lifecycle", [entry for entry in guard.log if not entry.startswith(("before_tool", "after_tool"))])
dump("log.tools", sorted(entry for entry in guard.log if entry.startswith(("before_tool", "after_tool"))))
