"""The agent a facade graph node or swarm member turn runs: a copy of the user's Strands agent
that Tether's core drives.

Tether's core (:mod:`tether.multiagent.nodes`) runs each node execution on a fresh copy of the
node's agent and reads Tether's events from its ``stream_async``. A Strands node agent, though,
reports through its ``callback_handler`` while it runs (a default agent in a Strands graph prints
its text), which only the facade's own ``stream_async`` does. :func:`node_agent_class` makes,
for the user's agent class, a subclass whose ``stream_async`` runs the facade's (so the callback
handler sees Strands' events) and yields the Tether events the facade's run produced underneath
(so the core drives it unchanged): one loop, observed twice.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from ...agent import Agent as TetherAgent
from ..agent.agent import Agent as FacadeAgent


class _Tap(TetherAgent):
    """Below the facade in the MRO: copies the Tether events of the facade's run to a sink."""

    _tap_sink: list[Any] | None = None

    async def stream_async(self, prompt: Any = None, **options: Any) -> AsyncIterator[Any]:
        async for event in super().stream_async(prompt, **options):
            if self._tap_sink is not None:
                self._tap_sink.append(event)
            yield event


_CLASSES: dict[type[FacadeAgent], type[FacadeAgent]] = {}


def node_agent_class(cls: type[FacadeAgent]) -> type[FacadeAgent]:
    """The node-execution class of the facade agent class ``cls`` (``cls`` first in its MRO,
    so the user's overrides hold); one per class."""
    made = _CLASSES.get(cls)
    if made is not None:
        return made

    async def stream_async(self: Any, prompt: Any = None, **options: Any) -> AsyncIterator[Any]:
        sink: list[Any] = []
        self._tap_sink = sink
        try:
            async for _strands_event in cls.stream_async(self, prompt, **options):
                while sink:
                    yield sink.pop(0)
            while sink:
                yield sink.pop(0)
        finally:
            self._tap_sink = None

    made = type(f"Node{cls.__name__}", (cls, _Tap), {"stream_async": stream_async, "__module__": __name__})
    _CLASSES[cls] = made
    return made


def node_agent(src: FacadeAgent, plain: TetherAgent) -> TetherAgent:
    """A node-execution copy of the user's agent ``src``, configured as Tether's core configured
    ``plain`` (its copy for this execution: messages, state, tools, hooks, store)."""
    agent = node_agent_class(type(src))(
        model=plain.model_or_none,
        messages=plain.messages or None,
        system_prompt=plain.system_prompt_content,
        state=plain.run_state.state,
        callback_handler=src.callback_handler,
        record_direct_tool_call=src.record_direct_tool_call,
        structured_output_model=src.structured_output_model,
        conversation_manager=plain.conversation_manager,
        tool_executor=plain.tool_executor,
        name=plain.name,
        agent_id=plain.agent_id,
        description=plain.description,
        retry=plain.retry,
        limits=plain.limits,
        store=plain.store,
        reconcile=plain.reconcile,
        tracer=plain.tracer,
        trace_content=plain.trace_content,
    )
    agent.checkpointing = plain.checkpointing
    agent.tool_registry = plain.tool_registry
    agent.hooks = plain.hooks
    return agent


__all__ = ["node_agent", "node_agent_class"]
