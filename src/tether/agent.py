"""`Agent`: a thin facade over configuration, a `RunState` and a driver.

No loop logic lives here: the loop is :mod:`tether.loop`, snapshots are :mod:`tether.snapshot`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import AsyncIterator, Callable, Iterable
from typing import Any

import pydantic

from ._capture import apply, capture
from ._json import ensure_json
from ._messages import validate_messages, validate_system_prompt
from .agent_state import AgentState
from .conversation import ConversationManager, SlidingWindowConversationManager
from .errors import ConfigurationError, PromptError, SnapshotError, StateError
from .hooks import HookRegistry
from .loop.core import LoopCore
from .loop.driver import AgentEvent, DriverOptions, LocalDriver
from .loop.invocation import invoke_stream
from .loop.policies import Limits, RetryPolicy
from .loop.state import POSITIONS, Position, RunState
from .models.base import Model
from .result import AgentResult
from .snapshot import Snapshot, resolve_fields, to_json_copy
from .tools.base import Tool
from .tools.executors import ConcurrentToolExecutor, ToolExecutor
from .tools.registry import ToolRegistry
from .types import Message, SystemContentBlock, ToolSpec


def _system_blocks(prompt: str | list[SystemContentBlock] | None) -> list[SystemContentBlock] | None:
    if prompt is None:
        return None
    if isinstance(prompt, str):
        return [{"text": prompt}]
    validate_system_prompt(prompt, ["system_prompt"], ConfigurationError)
    return [dict(block) for block in prompt]  # type: ignore[misc]


def _positions(value: bool | Iterable[str]) -> frozenset[Position]:
    if value is True:
        return frozenset(POSITIONS)
    if value is False or value is None:
        return frozenset()
    if isinstance(value, str):
        value = [value]
    positions = frozenset(value)
    unknown = positions - set(POSITIONS)
    if unknown:
        raise ConfigurationError(f"checkpointing positions {sorted(unknown)} are unknown; use True or some of {list(POSITIONS)}")
    return positions  # type: ignore[return-value]


class Agent:
    """A model, a system prompt and tools, run in a ReAct loop whose whole state is JSON.

    Call it (``agent("prompt")``), await ``invoke_async`` or iterate ``stream_async``. A prompt
    is a string, a list of content blocks, a list of messages, or ``None`` to continue.
    """

    def __init__(
        self,
        model: Model | None = None,
        tools: Iterable[Tool | Callable[..., Any]] | None = None,
        system_prompt: str | list[SystemContentBlock] | None = None,
        messages: list[Message] | None = None,
        state: dict[str, Any] | None = None,
        conversation_manager: ConversationManager | None = None,
        hooks: Iterable[Any] | None = None,
        tool_executor: ToolExecutor | None = None,
        name: str | None = None,
        agent_id: str | None = None,
        retry: RetryPolicy | None = None,
        limits: Limits | None = None,
        checkpointing: bool | Iterable[str] = False,
        description: str | None = None,
    ) -> None:
        self._model = model
        self.name = name or "agent"
        self.agent_id = agent_id or self.name
        self.description = description
        self.tool_registry = ToolRegistry(tools or ())
        self.hooks = HookRegistry()
        for hook in hooks or ():
            self.hooks.add(hook)
        self.conversation_manager = conversation_manager or SlidingWindowConversationManager()
        self.tool_executor = tool_executor or ConcurrentToolExecutor()
        self.retry = retry or RetryPolicy()
        self.limits = limits or Limits()
        self.checkpointing = _positions(checkpointing)
        if state is not None and not isinstance(state, dict):
            raise StateError(f"state must be a dict of JSON values, got {type(state).__name__}")
        initial_messages = validate_messages(list(messages or []), ["messages"], ConfigurationError)
        self.run_state = RunState(
            messages=[{"role": m["role"], "content": list(m["content"])} for m in initial_messages],
            state=ensure_json(state or {}, "state"),
            system_prompt=_system_blocks(system_prompt),
        )
        self.state = AgentState(lambda: self.run_state.state)
        self._cancel = threading.Event()
        self._busy = threading.Lock()
        self._output_specs: dict[type[pydantic.BaseModel], ToolSpec] = {}

    # -- configuration views --------------------------------------------------------------

    @property
    def model(self) -> Model:
        if self._model is None:
            raise ConfigurationError("this agent has no model; pass Agent(model=...)")
        return self._model

    @model.setter
    def model(self, value: Model) -> None:
        self._model = value

    @property
    def messages(self) -> list[Message]:
        """The conversation (live list)."""
        return self.run_state.messages

    @messages.setter
    def messages(self, value: list[Message]) -> None:
        validate_messages(value, ["messages"], ConfigurationError)
        self.run_state.messages = value

    @property
    def system_prompt(self) -> str | None:
        """The system prompt's text (text blocks joined), or None."""
        blocks = self.run_state.system_prompt
        if blocks is None:
            return None
        return "\n".join(block["text"] for block in blocks if "text" in block)

    @system_prompt.setter
    def system_prompt(self, value: str | list[SystemContentBlock] | None) -> None:
        self.run_state.system_prompt = _system_blocks(value)

    @property
    def system_prompt_content(self) -> list[SystemContentBlock] | None:
        """The system prompt as content blocks (cache points included)."""
        return self.run_state.system_prompt

    @property
    def tool_names(self) -> list[str]:
        return self.tool_registry.names

    def output_tool_name(self, output_model: type[pydantic.BaseModel] | None) -> str | None:
        if output_model is None:
            return None
        return self._output_spec(output_model)["name"]

    def _output_spec(self, output_model: type[pydantic.BaseModel]) -> ToolSpec:
        spec = self._output_specs.get(output_model)
        if spec is None:
            if not (isinstance(output_model, type) and issubclass(output_model, pydantic.BaseModel)):
                raise ConfigurationError(f"output_model must be a pydantic BaseModel subclass, got {output_model!r}")
            name = output_model.__name__
            if name in self.tool_registry:
                raise ConfigurationError(f"output_model {name!r} has the same name as a tool; rename one")
            doc = (output_model.__doc__ or "").strip()
            spec = {
                "name": name,
                "description": doc or f"Return the final answer as a {name}. Call this once you have the answer.",
                "inputSchema": {"json": output_model.model_json_schema()},
            }
            self._output_specs[output_model] = spec
        return spec

    def tool_specs_for(self, output_model: type[pydantic.BaseModel] | None) -> list[ToolSpec]:
        specs = self.tool_registry.specs
        if output_model is None:
            return specs
        return [*specs, self._output_spec(output_model)]

    def make_driver(self, core: LoopCore, options: DriverOptions) -> LocalDriver:
        """The driver for one invocation (the durable agent returns a persisting one)."""
        return LocalDriver(self, core, options, self._cancel)

    # -- running --------------------------------------------------------------------------

    def __call__(
        self,
        prompt: Any = None,
        *,
        output_model: type[pydantic.BaseModel] | None = None,
        invocation_state: dict[str, Any] | None = None,
    ) -> AgentResult:
        """Run one invocation synchronously (from a thread with no running event loop, or any)."""
        coro = self.invoke_async(prompt, output_model=output_model, invocation_state=invocation_state)
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(coro)
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            return pool.submit(asyncio.run, coro).result()

    async def invoke_async(
        self,
        prompt: Any = None,
        *,
        output_model: type[pydantic.BaseModel] | None = None,
        invocation_state: dict[str, Any] | None = None,
    ) -> AgentResult:
        """Run one invocation and return its result."""
        result: AgentResult | None = None
        async for event in self._events(prompt, output_model, invocation_state, forward_deltas=False):
            if event["type"] == "result":
                result = event["result"]
        assert result is not None
        return result

    async def stream_async(
        self,
        prompt: Any = None,
        *,
        output_model: type[pydantic.BaseModel] | None = None,
        invocation_state: dict[str, Any] | None = None,
    ) -> AsyncIterator[AgentEvent]:
        """Run one invocation, yielding events: ``text_delta``, ``reasoning_delta``,
        ``message``, ``tool_start``, ``tool_result`` and finally ``result`` (an AgentResult)."""
        async for event in self._events(prompt, output_model, invocation_state, forward_deltas=True):
            yield event

    async def _events(
        self,
        prompt: Any,
        output_model: type[pydantic.BaseModel] | None,
        invocation_state: dict[str, Any] | None,
        *,
        forward_deltas: bool,
    ) -> AsyncIterator[AgentEvent]:
        if not self._busy.acquire(blocking=False):
            raise PromptError("this agent is already running an invocation; agents run one at a time")
        try:
            self._cancel.clear()
            async for event in invoke_stream(
                self,
                prompt,
                output_model=output_model,
                invocation_state=invocation_state,
                forward_deltas=forward_deltas,
            ):
                yield event
        finally:
            self._busy.release()

    def cancel(self) -> None:
        """Ask the running invocation to stop at the next step (thread-safe).

        Tool calls that had not started get an error result; the result's stop reason is
        ``cancelled`` and the conversation stays valid.
        """
        self._cancel.set()

    # -- snapshots ------------------------------------------------------------------------

    def take_snapshot(
        self,
        *,
        preset: str | None = None,
        include: Iterable[str] | None = None,
        exclude: Iterable[str] | None = None,
        app_data: dict[str, Any] | None = None,
    ) -> Snapshot:
        """Capture the selected fields as a :class:`Snapshot` (independent of the agent)."""
        fields = resolve_fields(preset, include, exclude)
        if app_data is not None and not isinstance(app_data, dict):
            raise SnapshotError(f"app_data must be a dict of JSON values, got {type(app_data).__name__}")
        return Snapshot(
            data=capture(self.run_state, self.conversation_manager, fields),
            app_data=to_json_copy(app_data or {}, "app_data"),
        )

    def load_snapshot(self, snapshot: Snapshot | dict[str, Any]) -> None:
        """Apply a snapshot: fields present in it replace the agent's, absent ones are kept."""
        if isinstance(snapshot, dict):
            snapshot = Snapshot.from_dict(snapshot)
        if not isinstance(snapshot, Snapshot):
            raise SnapshotError(f"load_snapshot takes a Snapshot or a snapshot dict, got {type(snapshot).__name__}")
        if self._busy.locked():
            raise SnapshotError("cannot load a snapshot while the agent is running an invocation")
        apply(self.run_state, self.conversation_manager, snapshot.data)

    def __repr__(self) -> str:
        model = getattr(self._model, "model_id", None)
        return f"Agent(name={self.name!r}, model={model!r}, tools={self.tool_names})"
