"""Strands' `Agent` on Tether's: Strands' constructor, invocation, stream events and extras.

:class:`Agent` is a :class:`tether.Agent` (Tether's graphs, swarms, durable runs and the
inspector take it) configured from Strands' arguments. Its model, tools, hooks and session
manager go through the adapters' four seam functions; every run is Tether's loop. What it adds
is Strands' surface: ``callback_handler`` and Strands' stream events (:mod:`._stream`),
``invocation_state`` and keyword arguments reaching tools and hooks, ``structured_output_model``,
direct tool calls (``agent.tool.NAME(...)``, :mod:`._tool_caller`), ``structured_output`` and
Strands' :class:`~.agent_result.AgentResult`.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import warnings
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import pydantic

from ..._prompt import normalize_prompt
from ...agent import Agent as _TetherAgent
from ...agent_state import AgentState as _TetherAgentState
from ...agent_tool import AgentTool
from ...budget import Budget, ModelPrice
from ...checkpoint import Checkpoint as _TetherCheckpoint
from ...errors import ConfigurationError, PromptError, TetherError
from ...events import AgentEvent
from ...hooks import AfterInvocation, BeforeInvocation, MessageAdded
from ...loop.host import Host
from ...loop.policies import Limits, RetryPolicy
from ...loop.tool_call import call_tool
from ...loop.tracing import NULL_TRACER
from ...result import AgentResult as _TetherAgentResult
from ...snapshot import Snapshot
from ...tools.executors import ToolExecutor
from ...types import Message, ToolResult, ToolUse
from ..experimental.checkpoint import Checkpoint
from ..handlers.callback_handler import PrintingCallbackHandler, null_callback_handler
from ..hooks._bridge import fire_agent_initialized, to_tether_hooks
from ..hooks.registry import HookRegistry
from ..models._adapt import to_tether_model
from ..models._custom import INVOCATION_STATE, CustomModel, is_strands_model
from ..session._attach import attach_session, plan_call
from ..tools._adapt import to_tether_tools
from ..tools.registry import ToolRegistry
from ..types.exceptions import (
    CheckpointValueError,
    ConcurrencyException,
    MaxTokensReachedException,
    StructuredOutputException,
    strands_error,
)
from ..types.interrupt import Interrupt
from ._stream import RawTee, StrandsStream
from ._tool_caller import ToolCaller, direct_call_id, recorded_messages
from ._tracing import AttributedTracer
from .agent_result import AgentResult, EventLoopMetrics
from .conversation_manager import SlidingWindowConversationManager
from .state import AgentState, checked_initial_state

if TYPE_CHECKING:
    from ...durable.indoubt import InDoubtCall
    from ...durable.store import RunStore
    from ...loop.tracing import Tracer
    from ...types import StreamEvent

_T = TypeVar("_T", bound=pydantic.BaseModel)

_DEFAULT_NAME = "Strands Agents"
_DEFAULT_AGENT_ID = "default"

MAX_TOKENS_MESSAGE = (
    "Model stopped generating due to maximum token limit. "
    "The partial message has been added to the conversation history. "
    "You can continue by calling the agent again. "
    "For more information see: "
    "https://strandsagents.com/docs/user-guide/concepts/agents/agent-loop/#maxtokensreachedexception"
)


class _Default:
    """The marker of an argument left at Strands' default."""

    def __repr__(self) -> str:
        return "<default>"


_DEFAULT: Any = _Default()

_UNSUPPORTED = (
    "baggage_attributes",
    "aux_model",
    "context_manager",
    "plugins",
    "interventions",
    "memory_manager",
    "structured_output_prompt",
    "sandbox",
    "storage",
    "background_tasks",
)
"""Strands' ``Agent`` arguments whose behaviour Tether does not provide: set, they are refused."""


def _refuse(arguments: Mapping[str, Any]) -> None:
    for name, value in arguments.items():
        if value is not None and value is not False and value != [] and value != {}:
            raise ConfigurationError(f"Agent({name}=...) is not supported by tether.strands (Tether has no equivalent); leave {name} unset")


class Agent(_TetherAgent):
    """A Strands ``Agent`` whose runs are Tether's (see the module docstring).

    The arguments are Strands 1.62's, with Strands' defaults (name ``"Strands Agents"``,
    ``agent_id`` ``"default"``, a :class:`PrintingCallbackHandler`, a sliding window of 40
    messages). Tether's own options (``retry``, ``limits``, ``store``, ``reconcile``,
    ``tracer``, ``trace_content``) are accepted as keywords too.
    """

    def __init__(
        self,
        model: Any = None,
        messages: list[Message] | None = None,
        tools: list[Any] | None = None,
        system_prompt: Any = None,
        structured_output_model: type[pydantic.BaseModel] | None = None,
        callback_handler: Any = _DEFAULT,
        conversation_manager: Any = None,
        record_direct_tool_call: bool = True,
        load_tools_from_directory: bool = False,
        trace_attributes: Mapping[str, Any] | None = None,
        *,
        baggage_attributes: Mapping[str, str] | None = None,
        aux_model: Any = None,
        agent_id: str | None = None,
        name: str | None = None,
        description: str | None = None,
        state: AgentState | dict[str, Any] | None = None,
        context_manager: Any = None,
        plugins: list[Any] | None = None,
        hooks: list[Any] | None = None,
        interventions: list[Any] | None = None,
        session_manager: Any = None,
        memory_manager: Any = None,
        structured_output_prompt: str | None = None,
        tool_executor: ToolExecutor | None = None,
        retry_strategy: Any = _DEFAULT,
        concurrent_invocation_mode: Any = None,
        checkpointing: bool | Iterable[str] = False,
        sandbox: Any = None,
        storage: Any = None,
        background_tasks: Any = None,
        retry: RetryPolicy | None = None,
        limits: Limits | None = None,
        store: RunStore | None = None,
        reconcile: Callable[[InDoubtCall], Any] | None = None,
        tracer: Tracer | None = None,
        trace_content: bool | None = None,
        budget: Budget | None = None,
        prices: Mapping[str, ModelPrice] | None = None,
    ) -> None:
        """Configure an agent as Strands does; nothing runs until the first call.

        Args:
            model: A Strands or Tether model, or a model id (see ``tether.strands.models``);
                None leaves it unset (Strands' default Bedrock model is not assumed).
            messages: The conversation to start from.
            tools: Tools, as Strands takes them (see ``tether.strands.tools``), and agents.
            system_prompt: Text or system content blocks.
            structured_output_model: The default structured-output model of every invocation.
            callback_handler: Called as ``handler(**event)`` with every stream event (default:
                :class:`PrintingCallbackHandler`; None: nothing).
            conversation_manager: Default ``SlidingWindowConversationManager(window_size=40)``.
            record_direct_tool_call: ``agent.tool.NAME(...)`` calls are recorded in the messages.
            load_tools_from_directory: Refused when True (Tether does not watch a directory).
            trace_attributes: Attributes added to the agent's invocation spans (when it traces:
                a ``tracer`` or a global OpenTelemetry tracer provider).
            agent_id: Default ``"default"``.
            name: Default ``"Strands Agents"``.
            description: What the agent does.
            state: A dict of JSON values or an :class:`AgentState`.
            hooks: Hook providers and callbacks.
            session_manager: Makes every invocation a turn of a durable run (see
                ``tether.strands.session``).
            tool_executor: Tether's (or ``tether.strands.tools.executors``') tool executor.
            retry_strategy: Left at its default, or None (no retry of throttled calls); for a
                policy pass Tether's ``retry=RetryPolicy(...)``.
            concurrent_invocation_mode: ``"throw"`` (Strands' default) only.
            checkpointing: Pause with a resumable checkpoint (see ``tether.strands.experimental``).
            baggage_attributes, aux_model, context_manager, plugins, interventions,
            memory_manager, structured_output_prompt, sandbox, storage, background_tasks:
                Refused when set (a :class:`~tether.errors.ConfigurationError` naming it):
                Tether provides no equivalent.
            retry, limits, store, reconcile, tracer, trace_content, budget, prices: Tether's
                options (see :class:`tether.Agent`).

        Raises:
            ConfigurationError: An argument Tether does not provide, or an invalid value.
        """
        _refuse(
            {
                "baggage_attributes": baggage_attributes,
                "aux_model": aux_model,
                "context_manager": context_manager,
                "plugins": plugins,
                "interventions": interventions,
                "memory_manager": memory_manager,
                "structured_output_prompt": structured_output_prompt,
                "sandbox": sandbox,
                "storage": storage,
                "background_tasks": background_tasks,
                "load_tools_from_directory": load_tools_from_directory,
            }
        )
        mode = getattr(concurrent_invocation_mode, "value", concurrent_invocation_mode)
        if mode not in (None, "throw"):
            raise ConfigurationError(
                f"Agent(concurrent_invocation_mode={mode!r}) is not supported by tether.strands: an agent runs one invocation at a time"
            )
        if retry_strategy is None:
            retry = RetryPolicy(max_attempts=1)
        elif not isinstance(retry_strategy, _Default):
            if not isinstance(retry_strategy, RetryPolicy):
                raise ConfigurationError(
                    "Agent(retry_strategy=...) takes None or Tether's RetryPolicy in tether.strands; "
                    "Strands' ModelRetryStrategy is not supported (pass retry=RetryPolicy(max_attempts=..., initial_delay=...))"
                )
            retry = retry_strategy
        initial_state = state.get() if isinstance(state, _TetherAgentState) else checked_initial_state(state)
        if agent_id is not None and ("/" in agent_id or "\\" in agent_id):
            raise ConfigurationError(f"agent_id={agent_id} | id cannot contain path separators")
        super().__init__(
            model=to_tether_model(model),
            tools=to_tether_tools(tools),
            system_prompt=system_prompt,
            messages=messages,
            state=initial_state,
            conversation_manager=conversation_manager or SlidingWindowConversationManager(),
            hooks=None,
            tool_executor=tool_executor,
            name=name or _DEFAULT_NAME,
            agent_id=agent_id or _DEFAULT_AGENT_ID,
            retry=retry,
            limits=limits,
            checkpointing=checkpointing,
            description=description,
            store=store,
            reconcile=reconcile,
            tracer=tracer,
            trace_content=trace_content,
            budget=budget,
            prices=prices,
        )
        if isinstance(messages, list):
            messages[:] = self.run_state.messages  # Strands keeps (and extends) the caller's list
            self.run_state.messages = messages
        self.name_given = name is not None
        self.tool_registry = ToolRegistry.adopt(self.tool_registry)  # Strands' registry API, same tools
        self.hooks = HookRegistry()  # Strands' registry (a Tether one): add_callback works after construction
        for item in to_tether_hooks(hooks):
            self.hooks.add(item)
        self.state = AgentState(lambda: self.run_state.state)
        if callback_handler is None:
            callback_handler = null_callback_handler
        elif isinstance(callback_handler, _Default):
            callback_handler = PrintingCallbackHandler()
        self.callback_handler: Callable[..., Any] = callback_handler
        self.record_direct_tool_call = record_direct_tool_call
        self.hook_resume: Any = None
        """The prompt an ``AfterInvocationEvent`` hook set as ``resume`` (None: none); the
        invocation runs again with it, as in Strands."""
        self.structured_output_model = structured_output_model
        self.trace_attributes: dict[str, Any] = dict(trace_attributes or {})
        self._raw_sink: list[StreamEvent] | None = None
        self._session_manager = session_manager
        self.session_run_id = attach_session(self, session_manager)
        """The durable run every invocation is a turn of (set by ``session_manager``), or None."""
        self._metrics_baseline = copy.deepcopy(self.run_state.metrics)
        """The run's figures when this agent object was built: Strands' metric names count from here
        (a new agent continuing a session starts at zero, as in Strands)."""
        fire_agent_initialized(self, self.hooks)

    # -- Strands' attributes ------------------------------------------------------------

    @property
    def system_prompt(self) -> str | None:
        """The system prompt's text (text blocks joined), or None when it has no text block."""
        blocks = self.run_state.system_prompt
        if not blocks or not any("text" in block for block in blocks):
            return None
        return "\n".join(block["text"] for block in blocks if "text" in block)

    @system_prompt.setter
    def system_prompt(self, value: Any) -> None:
        _TetherAgent.system_prompt.fset(self, value)  # type: ignore[attr-defined]

    @property
    def system_prompt_content(self) -> list[Any] | None:
        """The system prompt as content blocks (a copy, as in Strands)."""
        blocks = self.run_state.system_prompt
        return copy.deepcopy(blocks) if blocks is not None else None

    @property
    def model(self) -> Any:
        """The model as given: a Strands ``Model`` subclass instance is itself (Tether runs it
        through :class:`~tether.strands.models._custom.CustomModel`), any other the Tether model."""
        model = super().model
        return model.model if isinstance(model, CustomModel) else model

    @model.setter
    def model(self, value: Any) -> None:
        self._model = CustomModel(value) if is_strands_model(value) else value

    @property
    def tool(self) -> ToolCaller:
        """Direct tool calls: ``agent.tool.NAME(**kwargs)`` returns the tool's result dict."""
        return ToolCaller(self)

    @property
    def event_loop_metrics(self) -> EventLoopMetrics:
        """The metrics of every invocation so far, in Strands' names."""
        return EventLoopMetrics(self.run_state.metrics, baseline=self._metrics_baseline)

    def add_hook(self, callback: Callable[..., Any], event_type: Any = None, *, order: float = 0) -> None:
        """Register ``callback`` for ``event_type`` (a type, a list of types, or None: the type
        its first parameter's annotation names), as Strands' ``add_hook``; routed through the
        hooks adapter like ``Agent(hooks=...)``.

        Raises:
            ConfigurationError: An ``order`` other than the default (Tether runs callbacks in
                registration order).
        """
        if order != 0:
            raise ConfigurationError("add_hook(order=...) is not supported by tether.strands: callbacks run in registration order")
        if event_type is None:
            _check_annotated(callback)
            items: list[Any] = [callback]
        else:
            items = [_ExplicitHook(callback, list(event_type) if isinstance(event_type, list) else [event_type])]
        for item in to_tether_hooks(items):
            self.hooks.add(item)

    def cancel(self, *, message: str | None = None, after_current_tools: bool = False) -> None:
        """Stop the running invocation at its next step (Tether's :meth:`tether.Agent.cancel`;
        the result's stop reason is ``cancelled``, as in Strands).

        Raises:
            ConfigurationError: ``message`` or ``after_current_tools`` (Tether's cancellation
                has neither).
        """
        if message is not None or after_current_tools:
            raise ConfigurationError("cancel(message=..., after_current_tools=...) is not supported by tether.strands; call cancel()")
        super().cancel()

    def take_snapshot(
        self,
        *,
        preset: str | None = None,
        include: Iterable[str] | None = None,
        exclude: Iterable[str] | None = None,
        app_data: dict[str, Any] | None = None,
    ) -> Snapshot:
        """Tether's :meth:`tether.Agent.take_snapshot`; a refused option raises Strands'
        ``SnapshotException`` (also Tether's ``SnapshotError``)."""
        with _strands_errors():
            return super().take_snapshot(preset=preset, include=include, exclude=exclude, app_data=app_data)

    def load_snapshot(self, snapshot: Snapshot | dict[str, Any], *, allow: Iterable[str] | None = None) -> None:
        """Tether's :meth:`tether.Agent.load_snapshot`; a refused snapshot raises Strands'
        ``SnapshotException`` (also Tether's ``SnapshotError``).

        Args:
            snapshot: The snapshot.
            allow: Incompatible manifest differences to accept (see :mod:`tether.manifest`).
        """
        with _strands_errors():
            super().load_snapshot(snapshot, allow=allow)

    def cleanup(self) -> None:
        """Close the agent's tool sources (MCP clients), as Strands' ``cleanup``."""
        self.close()

    def as_tool(
        self,
        name: str | None = None,
        description: str | None = None,
        *,
        preserve_context: bool = False,
        delegate: bool = False,
        keep_conversation: bool | None = None,
    ) -> AgentTool:
        """This agent as a tool of another agent, with Strands' tool spec (input ``input``).

        Args:
            name: The tool name (default: the agent's name).
            description: Default: the agent's description, else Strands' sentence.
            preserve_context: Keep this agent's conversation across calls (Tether's
                ``keep_conversation``).
            delegate: Refused when True (Tether has no delegation).
            keep_conversation: Tether's name of ``preserve_context``.

        Raises:
            ConfigurationError: ``delegate=True``, or an invalid name.
        """
        if delegate:
            raise ConfigurationError("as_tool(delegate=True) is not supported by tether.strands")
        keep = preserve_context if keep_conversation is None else keep_conversation
        return StrandsAgentTool(self, name or self.name, description, keep_conversation=keep)

    def host(self) -> Host:
        """Tether's host, with the model teed into the running invocation's stream adapter and
        ``trace_attributes`` on the invocation span."""
        host = super().host()
        if self.trace_attributes and host.tracer is not NULL_TRACER:
            host = dataclasses.replace(host, tracer=AttributedTracer(host.tracer, self.trace_attributes))
        sink, self._raw_sink = self._raw_sink, None
        if sink is None or host.model_or_none is None:
            return host
        return dataclasses.replace(host, model_or_none=RawTee(host.model_or_none, sink))

    # -- invocation ---------------------------------------------------------------------

    def __call__(
        self,
        prompt: Any = None,
        *,
        invocation_state: dict[str, Any] | None = None,
        structured_output_model: type[pydantic.BaseModel] | None = None,
        **kwargs: Any,
    ) -> AgentResult:
        """Run one invocation synchronously (Strands' ``agent(prompt, ...)``; see :meth:`stream_async`)."""
        call = self.invoke_async(prompt, invocation_state=invocation_state, structured_output_model=structured_output_model, **kwargs)
        return self._sync(call)

    async def invoke_async(
        self,
        prompt: Any = None,
        *,
        invocation_state: dict[str, Any] | None = None,
        structured_output_model: type[pydantic.BaseModel] | None = None,
        **kwargs: Any,
    ) -> AgentResult:
        """Run one invocation and return its result (the callback handler sees every event)."""
        result: AgentResult | None = None
        stream = self.stream_async(prompt, invocation_state=invocation_state, structured_output_model=structured_output_model, **kwargs)
        async with _closing(stream) as events:
            async for event in events:
                if "result" in event:
                    result = event["result"]
        assert result is not None
        return result

    async def stream_async(  # type: ignore[override]  # Strands' event dicts, not Tether's
        self,
        prompt: Any = None,
        *,
        invocation_state: dict[str, Any] | None = None,
        structured_output_model: type[pydantic.BaseModel] | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[dict[str, Any]]:
        """Run one invocation, yielding Strands' event dicts, the last ``{"result": AgentResult}``.

        Keyword arguments other than Strands' are the invocation state (deprecated in Strands;
        then ``invocation_state`` is under the ``"invocation_state"`` key, as in Strands);
        ``callback_handler=`` replaces the agent's for this call (and is in the invocation
        state, as in Strands). Tether's ``output_model``, ``run_id`` and ``parent_run_id`` are
        taken too, not as invocation state (``run_id`` defaults to the session's run).

        Raises:
            MaxTokensReachedException: The model stopped at its token limit (the partial message
                is in ``agent.messages``, as in Strands).
        """
        tether_options = {key: kwargs.pop(key) for key in ("output_model", "run_id", "parent_run_id") if key in kwargs}
        prompt = self._checkpoint_resume(prompt)
        _check_prompt(prompt)
        for key in ("structured_output_prompt", "idempotency_token", "limits", "cancel_signal"):
            if kwargs.get(key) is not None:
                raise ConfigurationError(f"{key}= is not supported by tether.strands invocations; leave it unset")
            kwargs.pop(key, None)
        callback = kwargs.get("callback_handler", self.callback_handler) or null_callback_handler
        merged: dict[str, Any]
        if kwargs:
            warnings.warn("`**kwargs` parameter is deprecating, use `invocation_state` instead.", stacklevel=2)
            merged = dict(kwargs)
            if invocation_state is not None:
                merged["invocation_state"] = invocation_state
        else:
            merged = invocation_state if invocation_state is not None else {}
        output_model = structured_output_model or tether_options.pop("output_model", None) or self.structured_output_model
        run_id = tether_options.get("run_id", self.session_run_id)
        adapter = StrandsStream(self, merged, output_model, self.output_tool_name(output_model))
        for event in adapter.opening():
            callback(**event)
            yield event
        self._raw_sink = adapter.raw
        result: _TetherAgentResult | None = None
        resume, send = False, True
        if run_id is not None and "run_id" not in tether_options:
            plan = plan_call(self, prompt)  # the session's turn left unfinished by a dead process
            resume, send = plan.resume, plan.send
        invocation_token = INVOCATION_STATE.set(merged)
        try:
            if resume:
                assert run_id is not None
                resumed = _TetherAgent.nested_events(self, None, invocation_state=merged, run_id=run_id, resume=True)
                async with _closing(resumed):
                    async for tether_event in resumed:
                        for event in adapter.convert(tether_event):
                            callback(**event)
                            yield event
                        if tether_event["type"] == "result":
                            result = tether_event["result"]
                send = send and not (result is not None and result.stop_reason == "interrupt")
            self.hook_resume = None
            while send:
                self._open_unanswered_tool_uses(prompt)
                prompt = self._orphans_closed(prompt)
                parent = tether_options.get("parent_run_id")
                events = super().stream_async(
                    prompt, output_model=output_model, invocation_state=merged, run_id=run_id, parent_run_id=parent
                )
                async with _closing(events):
                    async for tether_event in events:
                        for event in adapter.convert(tether_event):
                            callback(**event)
                            yield event
                        if tether_event["type"] == "result":
                            result = tether_event["result"]
                # an AfterInvocationEvent hook that set ``resume`` runs the agent again with it, as in Strands
                prompt, self.hook_resume = self.hook_resume, None
                send = prompt is not None
        except TetherError as exc:
            translated = strands_error(exc)
            if translated is None:
                raise
            raise translated from exc
        finally:
            with contextlib.suppress(ValueError):  # a generator closed from another context (garbage collection)
                INVOCATION_STATE.reset(invocation_token)
            self._raw_sink = None
        assert result is not None
        if result.stop_reason == "max_tokens":
            raise MaxTokensReachedException(MAX_TOKENS_MESSAGE)
        for event in adapter.interrupted(result.interrupts):
            callback(**event)
            yield event
        final = _strands_result(result, self)
        if output_model is not None and final.stop_reason == "end_turn" and _calls_tools(final.message):
            final.stop_reason = "tool_use"  # Strands reports the last model call's stop reason
        callback(result=final)
        yield {"result": final}

    async def resume_async(
        self,
        run_id: str,
        responses: list[dict[str, Any]] | None = None,
        *,
        budget: Budget | None = None,
        allow: Iterable[str] | None = None,
    ) -> AgentResult:
        """Tether's :meth:`tether.Agent.resume_async`, its result Strands' :class:`AgentResult`.

        Args:
            run_id: The durable run.
            responses: ``interruptResponse`` blocks answering its interrupts, or None.
            budget: The run's budget from now on (see :meth:`tether.Agent.resume`).
            allow: Incompatible manifest differences to accept (see :mod:`tether.manifest`).
        """
        return _strands_result(await super().resume_async(run_id, responses, budget=budget, allow=allow), self)

    def nested_events(
        self,
        prompt: Any,
        *,
        invocation_state: dict[str, Any] | None = None,
        run_id: str | None = None,
        parent_run_id: str | None = None,
        resume: bool = False,
        budget: Budget | None = None,
    ) -> AsyncGenerator[AgentEvent, None]:
        """Tether's events of a nested run (this agent as another's tool), with this agent's
        callback handler fed Strands' events as Strands' sub-agents feed theirs."""
        return self._nested(
            prompt, invocation_state=invocation_state, run_id=run_id, parent_run_id=parent_run_id, resume=resume, budget=budget
        )

    async def _nested(self, prompt: Any, **options: Any) -> AsyncGenerator[AgentEvent, None]:
        adapter = StrandsStream(self, options.get("invocation_state") or {})
        for event in adapter.opening():
            self.callback_handler(**event)
        self._raw_sink = adapter.raw
        try:
            async with _closing(super().nested_events(prompt, **options)) as events:
                async for tether_event in events:
                    for event in adapter.convert(tether_event):
                        self.callback_handler(**event)
                    if tether_event["type"] == "result":
                        final = _strands_result(tether_event["result"], self)
                        self.callback_handler(result=final)
                        yield {"type": "result", "result": final}  # str(final) is Strands' text (the tool result)
                    else:
                        yield tether_event
        finally:
            self._raw_sink = None

    def _open_unanswered_tool_uses(self, prompt: Any) -> None:
        """With no prompt, a conversation ending in an assistant message whose tool uses have no
        result runs those tools first (the model is not called for them), as in Strands: the
        run is put in its tool phase, which the ``None`` prompt then continues."""
        messages = self.run_state.messages
        cursor = self.run_state.cursor
        if prompt is not None or not messages or cursor.phase != "idle" or self.run_state.interrupt_state.get("activated"):
            return
        last = messages[-1]
        if last["role"] == "assistant" and any("toolUse" in block for block in last["content"]):
            cursor.phase = "tools"
            cursor.results = {}
            cursor.started = []

    def _orphans_closed(self, prompt: Any) -> Any:
        """``prompt`` (new messages) preceded, when the conversation ends with tool uses that
        have no result, by Strands' user message closing them ("Tool was interrupted." error
        results), so the conversation stays valid; other prompts unchanged. It goes in as part
        of the prompt, so it is recorded (and persisted) like the prompt."""
        messages = self.run_state.messages
        if prompt is None or not messages or self.run_state.interrupt_state.get("activated"):
            return prompt
        ids = [block["toolUse"]["toolUseId"] for block in messages[-1]["content"] if "toolUse" in block]
        if not ids:
            return prompt
        parsed = normalize_prompt(prompt)
        if parsed.kind != "messages":
            return prompt
        closing: Message = {
            "role": "user",
            "content": [
                {"toolResult": {"toolUseId": tool_use_id, "status": "error", "content": [{"text": "Tool was interrupted."}]}}
                for tool_use_id in ids
            ],
        }
        return [closing, *parsed.messages]

    def _checkpoint_resume(self, prompt: Any) -> Any:
        """``prompt``, a ``checkpointResume`` marker (Strands' checkpoint dict: no snapshot)
        completed with the agent's current metrics, so a resume continues counting as the
        agent's own state continues (the marker carries no state, as in Strands).

        Raises:
            CheckpointValueError: A ``checkpointResume`` block while the agent was built
                without checkpointing (Strands' ``ValueError``).
        """
        block = prompt[0] if isinstance(prompt, list) and len(prompt) == 1 else prompt
        if not isinstance(block, dict) or "checkpointResume" not in block:
            return prompt
        if not self.checkpointing:
            raise CheckpointValueError(
                "Received checkpointResume block but agent was created with checkpointing=False. "
                "Pass checkpointing=True when constructing the Agent."
            )
        body = block["checkpointResume"]
        raw = body.get("checkpoint") if isinstance(body, dict) else None
        if isinstance(raw, _TetherCheckpoint):
            raw = raw.to_dict()
        if not isinstance(raw, dict) or raw.get("snapshot") or "metrics" in raw:
            return prompt
        marker = {**raw, "metrics": copy.deepcopy(self.run_state.metrics)}
        return {"checkpointResume": {**body, "checkpoint": marker}}

    # -- structured output (deprecated in Strands, still called) ---------------------------

    def structured_output(self, output_model: type[_T], prompt: Any = None) -> _T:
        """The answer to ``prompt`` as an ``output_model`` instance; the conversation is left
        as it was (as in Strands, the prompt and the exchange are not kept)."""
        return self._sync(self.structured_output_async(output_model, prompt))

    async def structured_output_async(self, output_model: type[_T], prompt: Any = None) -> _T:
        """Async :meth:`structured_output`.

        Raises:
            ValueError: No prompt and no conversation (Strands' error).
            RuntimeError: The agent waits for interrupt answers.
        """
        if self.run_state.interrupt_state.get("activated"):
            raise RuntimeError("cannot call structured output during interrupt")
        warnings.warn(
            "Agent.structured_output_async method is deprecated."
            " You should pass in `structured_output_model` directly into the agent invocation."
            " see: https://strandsagents.com/docs/user-guide/concepts/agents/structured-output/",
            category=DeprecationWarning,
            stacklevel=2,
        )
        if not self.messages and not prompt:
            raise ValueError("No conversation history or prompt provided")
        model = self.model_or_none
        direct = getattr(model.model, "structured_output", None) if isinstance(model, CustomModel) else None
        if callable(direct):
            return await self._model_structured_output(direct, output_model, prompt)
        saved = copy.deepcopy(self.run_state.messages)
        try:
            result = await self.invoke_async(prompt, structured_output_model=output_model)
        finally:
            self.run_state.messages[:] = saved  # in place: the list may be the caller's (Agent(messages=...))
        value = result.structured_output
        if isinstance(value, output_model):
            return value
        return output_model.model_validate(value)

    async def _model_structured_output(self, method: Callable[..., Any], output_model: type[_T], prompt: Any) -> _T:
        """Strands' path for a custom model with its own ``structured_output``: the model is
        asked once with the conversation plus the prompt; the conversation is not changed."""
        prompt_messages = normalize_prompt(prompt).messages if prompt is not None else []
        temp_messages = copy.deepcopy(self.run_state.messages) + copy.deepcopy(prompt_messages)
        await self.hooks.fire(BeforeInvocation(self))
        try:
            event: Any = None
            async for item in method(output_model, temp_messages, system_prompt=self.system_prompt):
                event = item  # the last event holds the output, as in Strands
            if not isinstance(event, Mapping) or "output" not in event:
                raise StructuredOutputException(f"{type(self.model).__name__}.structured_output() yielded no {{'output': ...}} event")
            value = event["output"]
        finally:
            await self.hooks.fire(AfterInvocation(self))
        return value if isinstance(value, output_model) else output_model.model_validate(value)

    # -- direct tool calls ----------------------------------------------------------------

    def call_tool_directly(
        self, name: str, arguments: dict[str, Any], user_message_override: str | None = None, record: bool | None = None
    ) -> ToolResult:
        """Run tool ``name`` (or the tool whose dashes ``name`` spells as underscores) with
        ``arguments``, as ``agent.tool.NAME(**arguments)`` does; see :mod:`._tool_caller`.

        Raises:
            AttributeError: No such tool (Strands' error).
            ConcurrencyException: A recorded call while an invocation runs.
            RuntimeError: The agent waits for interrupt answers, or the tool raised an interrupt.
        """
        return self._sync(self._direct_call(name, arguments, user_message_override, record))

    def _find_tool_name(self, name: str) -> str:
        if name in self.tool_registry:
            return name
        if "_" in name:
            for candidate in self.tool_registry.names:
                if candidate.replace("-", "_") == name:
                    return candidate
        raise AttributeError(f"Tool '{name}' not found")

    async def _direct_call(self, name: str, arguments: dict[str, Any], override: str | None, record: bool | None) -> ToolResult:
        if self.run_state.interrupt_state.get("activated"):
            raise RuntimeError("cannot directly call tool during interrupt")
        should_record = self.record_direct_tool_call if record is None else record
        locked = False
        if should_record:
            locked = self._busy.acquire(blocking=False)
            if not locked:
                raise ConcurrencyException(
                    "Direct tool call cannot be made while the agent is in the middle of an invocation. "
                    "Set record_direct_tool_call=False to allow direct tool calls during agent invocation."
                )
        try:
            tool_name = self._find_tool_name(name)
            tool_use: ToolUse = {"toolUseId": direct_call_id(name), "name": tool_name, "input": dict(arguments)}
            await self.tool_registry.start_sources()
            saved = copy.deepcopy(self.run_state.interrupt_state)
            outcome = await call_tool(self.host(), self.run_state, tool_use, invocation_state=arguments)
            if outcome.interrupt is not None or outcome.result is None:
                self.run_state.interrupt_state = saved
                raise RuntimeError("cannot raise interrupt in direct tool call")
            outcome.apply_recorded()
            result = outcome.result
            if should_record:
                tool = self.tool_registry.get(tool_name)
                spec = tool.spec if tool is not None else None
                for message in recorded_messages(tool_use, result, override, spec):
                    self.run_state.messages.append(message)  # each MessageAdded sees its message appended, as in Strands
                    if self.hooks.has(MessageAdded):
                        await self.hooks.fire(MessageAdded(self, message))
            self.conversation_manager.apply_management(self.run_state)
            return result
        finally:
            if locked:
                self._busy.release()


class _ExplicitHook:
    """A hook provider registering one callback for given event types (``add_hook(cb, Type)``)."""

    def __init__(self, callback: Callable[..., Any], event_types: list[Any]) -> None:
        self.callback = callback
        self.event_types = event_types

    def register_hooks(self, registry: Any, **kwargs: Any) -> None:
        for event_type in self.event_types:
            registry.add_callback(event_type, self.callback)


class StrandsAgentTool(AgentTool):
    """Tether's agent tool with Strands' spec; each call's runner keeps the agent's callback handler."""

    @property
    def spec(self) -> Any:
        return {
            "name": self.tool_name,
            "description": self._description,
            "inputSchema": {
                "json": {
                    "type": "object",
                    "properties": {"input": {"type": "string", "description": "The input to send to the agent tool."}},
                    "required": ["input"],
                }
            },
        }

    @property
    def tool_spec(self) -> Any:
        """The spec, under Strands' attribute name."""
        return self.spec

    def __init__(self, agent: Agent, name: str, description: str | None = None, *, keep_conversation: bool = False) -> None:
        super().__init__(agent, name, description, keep_conversation=keep_conversation)
        self._description = description or agent.description or f"Use the {name} agent as a tool by providing a natural language input"

    def runner(self) -> _TetherAgent:
        runner = super().runner()
        child = self.agent
        if isinstance(runner, Agent) and isinstance(child, Agent):
            runner.callback_handler = child.callback_handler
            runner.record_direct_tool_call = child.record_direct_tool_call
            runner.structured_output_model = child.structured_output_model
        return runner


def _check_annotated(callback: Callable[..., Any]) -> None:
    """Refuse, as Strands' ``add_hook`` does, a callback whose event type cannot be read from
    its first parameter's annotation (the message names the callback)."""
    import inspect

    try:
        parameters = list(inspect.signature(callback).parameters.values())
    except (TypeError, ValueError):
        return  # not introspectable: the hooks adapter decides
    if not parameters or parameters[0].annotation is inspect.Parameter.empty:
        name = getattr(callback, "__qualname__", repr(callback))
        raise ConfigurationError(
            f"callback={name} | cannot infer event type, please provide event_type explicitly "
            "(or annotate the callback's first parameter with an event type)"
        )


_PROMPT_TYPES = "Input prompt must be of type: `str | list[Contentblock] | Messages | None`."


def _check_prompt(prompt: Any) -> None:
    """Refuse a prompt of no accepted shape as Strands does (its message first, Tether's
    detail naming the bad part after; the class is Tether's :class:`PromptError`, a ``ValueError``)."""
    try:
        normalize_prompt(prompt)
    except PromptError as exc:
        raise type(exc)(f"{_PROMPT_TYPES} ({exc})") from None


@contextlib.contextmanager
def _strands_errors() -> Iterator[None]:
    """Re-raise a Tether error as the Strands-named class the facade raises for it."""
    try:
        yield
    except TetherError as exc:
        translated = strands_error(exc)
        if translated is None:
            raise
        raise translated from exc


def _strands_result(result: _TetherAgentResult, agent: Agent) -> AgentResult:
    """Strands' view of Tether's ``result``: its interrupts with ``response``, its checkpoint
    with Strands' ``to_dict``, its Strands metric names counted from ``agent``'s construction."""
    final = AgentResult.of(result, agent)
    if final.interrupts:
        final.interrupts = [Interrupt.of(interrupt) for interrupt in final.interrupts]
    if final.checkpoint is not None:
        final.checkpoint = Checkpoint.of(final.checkpoint)
    return final


def _calls_tools(message: Message | None) -> bool:
    return message is not None and any("toolUse" in block for block in message["content"])


class _closing:
    """``contextlib.aclosing`` for any async iterator with ``aclose`` (typed loosely)."""

    def __init__(self, iterator: Any) -> None:
        self.iterator = iterator

    async def __aenter__(self) -> Any:
        return self.iterator

    async def __aexit__(self, *exc_info: object) -> None:
        aclose = getattr(self.iterator, "aclose", None)
        if aclose is not None:
            await aclose()


__all__ = ["Agent", "StrandsAgentTool"]
