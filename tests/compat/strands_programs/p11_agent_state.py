"""Agent state: an initial dict, tools reading and writing it, get/set/delete from the program, across invocations."""

from fake_model import FakeModel, call, text
from show import dump
from strands import Agent, tool
from strands.agent.state import AgentState


@tool(context=True)
def add_to_cart(item: str, tool_context) -> str:
    """Add an item to the cart.

    Args:
        item: The item.
    """
    cart = tool_context.agent.state.get("cart") or []
    cart.append(item)
    tool_context.agent.state.set("cart", cart)
    return f"{len(cart)} items"


model = FakeModel(
    [call("tu-1", "add_to_cart", {"item": "apple"}), text("Added."), call("tu-2", "add_to_cart", {"item": "pear"}), text("Added too.")]
)
agent = Agent(model=model, tools=[add_to_cart], state={"user": "ada", "cart": []}, callback_handler=None)
dump("initial", agent.state.get())
agent("Add an apple")
dump("after_first", agent.state.get())
agent.state.set("coupon", {"code": "SAVE10", "percent": 10})
agent("Add a pear")
dump("after_second", agent.state.get())
dump("cart", agent.state.get("cart"))
dump("missing", agent.state.get("nope"))
agent.state.delete("coupon")
dump("after_delete", agent.state.get())
try:
    agent.state.set("bad", object())
except ValueError as exc:
    dump("not_json.error", type(exc).__name__)
other = Agent(model=FakeModel([]), state=AgentState({"n": 1}), callback_handler=None)
dump("from_agentstate", other.state.get())
