"""A tool raising an interrupt (human approval), answered with interruptResponse blocks."""

from fake_model import FakeModel, call, text
from show import dump, show_messages, show_result
from strands import Agent, ToolContext, tool


@tool(context=True)
def transfer(amount: int, to: str, tool_context: ToolContext) -> str:
    """Transfer money.

    Args:
        amount: Euros.
        to: The recipient.
    """
    answer = tool_context.interrupt("approve-transfer", reason={"amount": amount, "to": to})
    if answer != "yes":
        return f"transfer to {to} refused"
    return f"sent {amount} to {to}"


model = FakeModel([call("tu-1", "transfer", {"amount": 100, "to": "bob"}), text("Sent.")])
agent = Agent(model=model, tools=[transfer], callback_handler=None)
result = agent("Send 100 to bob")
show_result("paused", result)
dump("paused.interrupts", [{"name": i.name, "reason": i.reason, "response": i.response} for i in result.interrupts])
dump("paused.interrupt_ids", [i.id for i in result.interrupts])
show_messages("paused", agent)
responses = [{"interruptResponse": {"interruptId": i.id, "response": "yes"}} for i in result.interrupts]
result = agent(responses)
show_result("resumed", result)
dump("resumed.interrupts", result.interrupts)
show_messages("resumed", agent)
