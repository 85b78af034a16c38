"""The events ``Agent.stream_async`` yields: the loop's (:mod:`tether.types.events`), then the
invocation's ``result``.

:data:`AgentEvent` is the whole union a caller narrows with ``event["type"]``; it lives here,
beside :class:`~tether.AgentResult`, because its last member carries one (the data shapes in
:mod:`tether.types` import nothing above them).
"""

from __future__ import annotations

from typing import Literal, TypeAlias, TypedDict

from .result import AgentResult
from .types.events import LoopEvent


class ResultEvent(TypedDict):
    """The last event of an invocation: its result."""

    type: Literal["result"]
    result: AgentResult


AgentEvent: TypeAlias = LoopEvent | ResultEvent
"""Any event of ``Agent.stream_async`` (see :mod:`tether.types.events` for each kind)."""

__all__ = ["AgentEvent", "ResultEvent"]
