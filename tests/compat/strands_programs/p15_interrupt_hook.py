"""A hook raising an interrupt on BeforeToolCallEvent; one call approved, one denied via interruptResponse."""

from fake_model import FakeModel, calls, text
from show import dump, show_messages, show_result
from strands import Agent, tool
from strands.hooks import BeforeToolCallEvent, HookProvider, HookRegistry


@tool
def run_command(command: str) -> str:
    """Run a shell command.

    Args:
        command: The command line.
    """
    return f"ran {command}"


class Approval(HookProvider):
    def register_hooks(self, registry: HookRegistry, **kwargs: object) -> None:
        registry.add_callback(BeforeToolCallEvent, self.approve)

    def approve(self, event: BeforeToolCallEvent) -> None:
        answer = event.interrupt(f"approve-{event.tool_use['toolUseId']}", reason=event.tool_use["input"]["command"])
        if answer != "approve":
            event.cancel_tool = f"user said {answer}"


model = FakeModel(
    [calls([("tu-1", "run_command", {"command": "ls"}), ("tu-2", "run_command", {"command": "rm -rf /"})]), text("Listed; removal denied.")]
)
agent = Agent(model=model, tools=[run_command], hooks=[Approval()], callback_handler=None)
result = agent("List then wipe")
dump("paused.stop_reason", result.stop_reason)
pending = sorted(result.interrupts, key=lambda i: i.name)
dump("paused.interrupts", [{"name": i.name, "reason": i.reason} for i in pending])
answers = {"approve-tu-1": "approve", "approve-tu-2": "deny"}
result = agent([{"interruptResponse": {"interruptId": i.id, "response": answers[i.name]}} for i in pending])
show_result("resumed", result)
show_messages("agent", agent)
