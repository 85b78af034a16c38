"""Strands' callback handlers on the facade print exactly what Strands' print."""

from __future__ import annotations

from typing import Any

import pytest

import tether.strands as ts
from tether.strands.handlers import CompositeCallbackHandler, PrintingCallbackHandler, null_callback_handler

from .test_agent import TetherFake, Turn, strands_fake, word_tools

EXCHANGE: list[Turn] = [
    [{"reasoning": "thinking"}, {"text": "calling"}, {"name": "shout", "id": "t1", "input": {"text": "a"}}],
    [{"name": "shout", "id": "t2", "input": {"text": "b"}}],
    [{"text": "A and B"}],
]


def _printed(capsys: pytest.CaptureFixture[str], agent: Any) -> str:
    capsys.readouterr()
    agent("go")
    return capsys.readouterr().out


@pytest.mark.parametrize("verbose", [True, False])
def test_printing_callback_handler_prints_what_strands_prints(capsys: pytest.CaptureFixture[str], verbose: bool) -> None:
    import strands
    from strands.handlers import PrintingCallbackHandler as StrandsPrinting

    expected = _printed(
        capsys, strands.Agent(model=strands_fake(EXCHANGE), tools=word_tools(strands), callback_handler=StrandsPrinting(verbose))
    )
    got = _printed(capsys, ts.Agent(model=TetherFake(EXCHANGE), tools=word_tools(ts), callback_handler=PrintingCallbackHandler(verbose)))
    assert got == expected
    assert ("Tool #2: shout" in got) is verbose
    assert "thinking" in got and "A and B" in got


def test_the_default_handler_prints_as_strands_default(capsys: pytest.CaptureFixture[str]) -> None:
    import strands

    expected = _printed(capsys, strands.Agent(model=strands_fake(EXCHANGE), tools=word_tools(strands)))
    got = _printed(capsys, ts.Agent(model=TetherFake(EXCHANGE), tools=word_tools(ts)))
    assert got == expected != ""


def test_printing_handler_complete_chunks_as_strands(capsys: pytest.CaptureFixture[str]) -> None:
    from strands.handlers import PrintingCallbackHandler as StrandsPrinting

    events: list[dict[str, Any]] = [
        {"data": "a"},
        {"data": "b", "complete": True},
        {"reasoningText": "r"},
        {"event": {"contentBlockStart": {"start": {"toolUse": {"name": "x", "toolUseId": "1"}}}}},
        {"complete": True},
    ]
    for handler in (StrandsPrinting(), PrintingCallbackHandler()):
        for event in events:
            handler(**event)
    theirs_then_ours = capsys.readouterr().out
    half = len(theirs_then_ours) // 2
    assert theirs_then_ours[:half] == theirs_then_ours[half:]


def test_composite_calls_each_handler_in_order_and_null_discards() -> None:
    calls: list[tuple[str, dict[str, Any]]] = []
    composite = CompositeCallbackHandler(lambda **e: calls.append(("a", e)), lambda **e: calls.append(("b", e)), null_callback_handler)
    composite(data="x")
    assert calls == [("a", {"data": "x"}), ("b", {"data": "x"})]
    assert null_callback_handler(data="x") is None


def test_callback_handler_none_prints_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    assert _printed(capsys, ts.Agent(model=TetherFake(EXCHANGE), tools=word_tools(ts), callback_handler=None)) == ""
