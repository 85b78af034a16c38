"""`LoopHost`: the narrow set of services the loop's driver half uses.

The driver, one model call (:mod:`.model_call`) and one tool call (:mod:`.tool_call`) need
hooks, a model, tools, a tool executor, a conversation manager, a retry policy, limits, the
tool specs to send and a tracer. They receive exactly that, as one explicit collaborator, and
never the ``Agent``: the loop does not know the facade exists. :class:`Host` is the plain
bundle the agent (or a Temporal activity) builds for one invocation; anything with the same
attributes is a host too (a testing kit may pass its own).

``owner`` is the object hook events and tool contexts name as their ``agent`` (the user's
``Agent``); the loop only passes it along and never reads it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import pydantic

from ..errors import ConfigurationError
from ..types import ToolSpec
from .policies import Limits, RetryPolicy
from .tracing import NULL_TRACER, Tracer

if TYPE_CHECKING:
    from ..conversation.base import ConversationManager
    from ..hooks import HookRegistry
    from ..models.base import Model
    from ..tools.executors import ToolExecutor
    from ..tools.registry import ToolRegistry


class LoopHost(Protocol):
    """What the driver half of the loop may use (read-only for the loop)."""

    @property
    def owner(self) -> Any:
        """The object hook events and tool contexts report as their agent."""
        ...

    @property
    def name(self) -> str:
        """The agent's name (span names)."""
        ...

    @property
    def hooks(self) -> HookRegistry:
        """The hook registry fired at every boundary."""
        ...

    @property
    def model(self) -> Model:
        """The model to call (raises ConfigurationError when there is none)."""
        ...

    @property
    def tools(self) -> ToolRegistry:
        """The tools calls are resolved against."""
        ...

    @property
    def tool_executor(self) -> ToolExecutor:
        """How the calls of one cycle are scheduled."""
        ...

    @property
    def conversation_manager(self) -> ConversationManager:
        """Reduces the conversation on overflow and manages it after a call."""
        ...

    @property
    def retry(self) -> RetryPolicy:
        """Backoff for throttled model calls."""
        ...

    @property
    def limits(self) -> Limits:
        """Per-invocation limits (cycles, tokens, overflow reductions)."""
        ...

    @property
    def tracer(self) -> Tracer:
        """Spans at invocation, model-call and tool-call boundaries."""
        ...

    def tool_specs(self, output_model: type[pydantic.BaseModel] | None) -> list[ToolSpec]:
        """The specs sent to the model (plus the structured-output tool, if any)."""
        ...


def _no_output_specs(output_model: type[pydantic.BaseModel] | None) -> list[ToolSpec]:
    if output_model is not None:
        raise ConfigurationError("this host cannot build a structured-output tool; pass specs_for to Host")
    return []


@dataclass(frozen=True, slots=True)
class Host:
    """A :class:`LoopHost` as a plain bundle of collaborators.

    Args:
        owner: What hook events and tool contexts name as their agent.
        name: The agent's name (span names).
        hooks: The hook registry.
        model_or_none: The model, or None (then ``model`` raises a ConfigurationError when a
            model call is attempted, not when the host is built).
        tools: The tool registry.
        tool_executor: The tool executor.
        conversation_manager: The conversation manager.
        retry: The retry policy for throttled model calls.
        limits: Per-invocation limits.
        specs_for: Returns the tool specs for an output model (None: the registry's specs).
        tracer: Receives spans; the default does nothing.
    """

    owner: Any
    name: str
    hooks: HookRegistry
    model_or_none: Model | None
    tools: ToolRegistry
    tool_executor: ToolExecutor
    conversation_manager: ConversationManager
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    limits: Limits = field(default_factory=Limits)
    specs_for: Callable[[type[pydantic.BaseModel] | None], list[ToolSpec]] = _no_output_specs
    tracer: Tracer = NULL_TRACER

    @property
    def model(self) -> Model:
        """The model; a ConfigurationError when the agent has none."""
        if self.model_or_none is None:
            raise ConfigurationError("this agent has no model; pass Agent(model=...)")
        return self.model_or_none

    def tool_specs(self, output_model: type[pydantic.BaseModel] | None) -> list[ToolSpec]:
        """The specs sent to the model for one call."""
        if output_model is None and self.specs_for is _no_output_specs:
            return self.tools.specs
        return self.specs_for(output_model)


__all__ = ["Host", "LoopHost"]
