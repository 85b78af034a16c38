"""stream_async: the event kinds an invocation yields, the text it streams, its tool uses and its result."""

import asyncio

from fake_model import FakeModel, call, text
from show import dump, show_result
from strands import Agent, tool

KINDS = ("init_event_loop", "start_event_loop", "start", "data", "current_tool_use", "message", "result", "force_stop", "complete")


@tool
async def fetch(url: str) -> str:
    """Fetch a page.

    Args:
        url: Where.
    """
    await asyncio.sleep(0)
    return f"<html>{url}</html>"


async def main() -> None:
    model = FakeModel([call("tu-1", "fetch", {"url": "a.example"}, say="Fetching."), text("Done: ", usage=(12, 3))])
    agent = Agent(model=model, tools=[fetch], callback_handler=None)
    kinds: list[str] = []
    streamed = ""
    tool_names: list[str] = []
    last = None
    async for event in agent.stream_async("Fetch a.example"):
        kind = next((k for k in KINDS if k in event), None)
        if kind is None and "event" in event:
            kind = "event:" + next(iter(event["event"]))
        kinds.append(kind or "other")
        if "data" in event:
            streamed += event["data"]
        if "current_tool_use" in event:
            tool_names.append(event["current_tool_use"]["name"])
        if "result" in event:
            last = event["result"]
    dump("kinds", kinds)
    dump("streamed_text", streamed)
    dump("tool_use_events", tool_names)
    show_result("result", last)


asyncio.run(main())
