"""@tool(context=True) and context="name": a tool reads its tool_use, the agent's state and the invocation_state."""

from fake_model import FakeModel, call, text
from show import dump, show_messages, show_result
from strands import Agent, ToolContext, tool


@tool(context=True)
def remember(note: str, tool_context: ToolContext) -> str:
    """Remember a note for the current user.

    Args:
        note: What to remember.
    """
    user = tool_context.invocation_state.get("user_id", "nobody")
    notes = tool_context.agent.state.get("notes") or []
    notes.append(f"{user}:{note}")
    tool_context.agent.state.set("notes", notes)
    return f"{tool_context.tool_use['name']} {tool_context.tool_use['toolUseId']} stored {note!r} for {user}"


@tool(context="ctx")
def whoami(ctx: ToolContext) -> dict:
    """Say who is calling."""
    return {"agent": ctx.agent.name, "user": ctx.invocation_state.get("user_id"), "input": ctx.tool_use["input"]}


model = FakeModel(
    [
        call("tu-1", "remember", {"note": "buy milk"}),
        call("tu-2", "whoami", {}),
        text("Noted."),
    ]
)
agent = Agent(model=model, tools=[remember, whoami], name="Keeper", callback_handler=None)
dump("spec.remember", remember.tool_spec)
dump("spec.whoami", whoami.tool_spec)
result = agent("Remember to buy milk.", invocation_state={"user_id": "ada"})
show_result("result", result)
dump("state.notes", agent.state.get("notes"))
show_messages("agent", agent)
