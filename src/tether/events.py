"""The events ``Agent.stream_async`` yields: the loop's (:mod:`tether.types.events`), then the
invocation's ``result``.

:data:`AgentEvent` is the whole union a caller narrows with ``event["type"]``; it lives here,
beside :class:`~tether.AgentResult`, because its last member carries one (the data shapes in
:mod:`tether.types` import nothing above them).
"""

from __future__ import annotations

from collections.abc import AsyncIterable, Mapping
from typing import Any, Literal, TypeAlias, TypedDict

from .result import AgentResult
from .types.events import LoopEvent


class ResultEvent(TypedDict):
    """The last event of an invocation: its result."""

    type: Literal["result"]
    result: AgentResult


AgentEvent: TypeAlias = LoopEvent | ResultEvent
"""Any event of ``Agent.stream_async`` (see :mod:`tether.types.events` for each kind)."""


async def final_result(events: AsyncIterable[Mapping[str, object]]) -> Any:
    """The ``result`` a run's event stream ends with, the stream drained to its end: the
    :class:`~tether.AgentResult` of an agent's invocation, or the result of a graph's or swarm's
    run (whose events end the same way)."""
    result: object = None
    async for event in events:
        if event["type"] == "result":
            result = event["result"]
    assert result is not None
    return result


__all__ = ["AgentEvent", "ResultEvent", "final_result"]
