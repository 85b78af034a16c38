"""The events a custom Strands model's invocation streams equal Strands' own, in order.

A custom ``Model`` subclass is written once against the real ``strands.models.Model`` and once
against :class:`tether.strands.models.Model`; both play the same chunks, and the callback handler
(and ``stream_async``) must see what Strands' see: every raw chunk the model yielded as
``{"event": chunk}`` (the very chunk, including what the Tether adapter reshapes or drops, such
as a text block's ``contentBlockStart``), and a streamed tool use as it is at that moment (its
input still JSON text), parsed only once its block stops.
"""

from __future__ import annotations

import asyncio
import copy
import json
from typing import Any

import pytest

import tether.strands as ts
from tether.strands.models import Model as FacadeModel

strands = pytest.importorskip("strands")
from strands.models import Model as StrandsModel  # noqa: E402

Chunks = list[dict[str, Any]]


def model_class(base: type) -> type:
    """A model on ``base`` answering each ``stream`` call with the next list of chunks."""

    class Played(base):  # type: ignore[misc, valid-type]
        def __init__(self, replies: list[Chunks]) -> None:
            self.replies = [copy.deepcopy(reply) for reply in replies]

        def update_config(self, **model_config: Any) -> None:
            pass

        def get_config(self) -> dict[str, Any]:
            return {}

        async def structured_output(self, *args: Any, **kwargs: Any) -> Any:
            yield {}

        async def stream(self, messages: Any, tool_specs: Any = None, system_prompt: Any = None, **kwargs: Any) -> Any:
            for chunk in self.replies.pop(0):
                yield chunk

    return Played


def tool_reply(pieces: list[str], say: str = "Let me check.") -> Chunks:
    """A reply saying ``say`` then calling ``lookup`` with its input streamed in ``pieces``;
    the text block has its own ``contentBlockStart`` and an empty delta, as providers send."""
    tool_deltas: Chunks = [{"contentBlockDelta": {"delta": {"toolUse": {"input": piece}}}} for piece in pieces]
    return [
        {"messageStart": {"role": "assistant"}},
        {"contentBlockStart": {"start": {}}},
        {"contentBlockDelta": {"delta": {"text": say}}},
        {"contentBlockDelta": {"delta": {"text": ""}}},
        {"contentBlockStop": {}},
        {"contentBlockStart": {"start": {"toolUse": {"toolUseId": "tu-1", "name": "lookup"}}}},
        *tool_deltas,
        {"contentBlockStop": {}},
        {"messageStop": {"stopReason": "tool_use"}},
        {"metadata": {"usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15}, "metrics": {"latencyMs": 3}}},
    ]


def text_reply(text: str) -> Chunks:
    return [
        {"messageStart": {"role": "assistant"}},
        {"contentBlockStart": {"start": {}}},
        {"contentBlockDelta": {"delta": {"text": text}}},
        {"contentBlockStop": {}},
        {"messageStop": {"stopReason": "end_turn"}},
        {"metadata": {"usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15}, "metrics": {"latencyMs": 3}}},
    ]


REPLIES: list[Chunks] = [tool_reply(['{"city"', ': "Lyon"}']), text_reply("Sunny.")]


def lookup_tool(module: Any) -> Any:
    @module.tool
    def lookup(city: str) -> str:
        """Look up the weather.

        Args:
            city: The city.
        """
        return f"sunny in {city}"

    return lookup


class Recorder:
    """A callback handler keeping, per call, a copy of what it was handed (as a user's handler
    sees it at that moment) for the keys this test compares."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, Any]] = []

    def __call__(self, **kwargs: Any) -> None:
        if "event" in kwargs:
            self.seen.append(("event", copy.deepcopy(kwargs["event"])))
        elif "current_tool_use" in kwargs:
            self.seen.append(("current_tool_use", copy.deepcopy(kwargs["current_tool_use"])))
        elif "data" in kwargs:
            self.seen.append(("data", kwargs["data"]))
        elif "message" in kwargs:
            self.seen.append(("message", {"role": kwargs["message"]["role"], "content": copy.deepcopy(kwargs["message"]["content"])}))


def run(module: Any, base: type) -> tuple[Recorder, list[tuple[str, Any]]]:
    """The callback handler's view and the ``stream_async`` view of one invocation."""
    recorder = Recorder()
    agent = module.Agent(model=model_class(base)(REPLIES), tools=[lookup_tool(module)], callback_handler=recorder)
    agent("Weather in Lyon?")

    streamed = Recorder()

    async def go() -> None:
        again = module.Agent(model=model_class(base)(REPLIES), tools=[lookup_tool(module)], callback_handler=None)
        async for event in again.stream_async("Weather in Lyon?"):
            streamed(**{key: value for key, value in event.items() if key != "result"})

    asyncio.run(go())
    return recorder, streamed.seen


def test_raw_events_are_the_chunks_the_model_yielded_as_on_strands() -> None:
    theirs, _ = run(strands, StrandsModel)
    ours, _ = run(ts, FacadeModel)
    raw = [value for kind, value in ours.seen if kind == "event"]
    assert raw == [value for kind, value in theirs.seen if kind == "event"]
    assert raw == [chunk for reply in REPLIES for chunk in reply]  # every chunk, unchanged


def test_a_streamed_tool_use_is_json_text_until_its_block_stops_as_on_strands() -> None:
    theirs, theirs_streamed = run(strands, StrandsModel)
    ours, ours_streamed = run(ts, FacadeModel)
    uses = [value for kind, value in ours.seen if kind == "current_tool_use"]
    assert uses == [value for kind, value in theirs.seen if kind == "current_tool_use"]
    assert [use["input"] for use in uses] == ['{"city"', '{"city": "Lyon"}']
    assert ours.seen == theirs.seen  # raw chunks, text, tool uses and messages, interleaved alike
    assert ours_streamed == theirs_streamed == theirs.seen  # stream_async yields the same sequence
    tool_use = next(v for k, v in ours.seen if k == "message")["content"][1]["toolUse"]
    assert tool_use["input"] == {"city": "Lyon"}  # the message holds it parsed


def test_a_tether_model_still_has_its_own_events_teed() -> None:
    from .test_agent import TetherFake, chunks

    turns = [[{"text": "hello"}]]
    recorder = Recorder()
    ts.Agent(model=TetherFake(turns), callback_handler=recorder)("hi")
    assert [value for kind, value in recorder.seen if kind == "event"] == json.loads(json.dumps(chunks(turns[0])))
