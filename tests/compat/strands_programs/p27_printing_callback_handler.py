"""The default callback handler prints the streamed text and tool markers; PrintingCallbackHandler and null_callback_handler."""

import sys

from fake_model import FakeModel, call, text
from show import dump, show_messages
from strands import Agent, tool
from strands.handlers import PrintingCallbackHandler, null_callback_handler


@tool
def clock() -> str:
    """Tell the time."""
    return "noon"


print("--- default handler")
default = Agent(model=FakeModel([call("tu-1", "clock", {}, say="Checking."), text("It is noon.")]), tools=[clock])
default("Time?")
sys.stdout.flush()
print()
show_messages("default", default)
print("\n--- PrintingCallbackHandler()")
Agent(model=FakeModel([text("Hello from the printing handler.")]), callback_handler=PrintingCallbackHandler())("Hi")
print("\n--- null_callback_handler")
result = Agent(model=FakeModel([call("tu-2", "clock", {}), text("Silent noon.")]), tools=[clock], callback_handler=null_callback_handler)(
    "Time?"
)
dump("null.result", str(result))
print("--- None")
result = Agent(model=FakeModel([text("Also silent.")]), callback_handler=None)("Hi")
dump("none.result", str(result))
