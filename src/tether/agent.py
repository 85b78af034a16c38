"""`Agent`: a thin facade over configuration, a `RunState` and a driver.

No loop logic lives here: the loop is :mod:`tether.loop`, snapshots are :mod:`tether.snapshot`.
The agent's durable-run methods (``resume``, ``fork``, ``replay``) are in :mod:`tether.agent_runs`
and its snapshot methods in :mod:`tether.agent_snapshots`.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Coroutine, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, TypedDict, TypeVar, Unpack, cast

import pydantic

from . import agent_config
from ._prompt import normalize_prompt
from ._sync import run_sync
from .agent_runs import DurableRuns
from .agent_snapshots import AgentSnapshots
from .agent_state import AgentState
from .agent_tool import AgentTool
from .answers import allow_names
from .budget import Budget, ModelPrice
from .budget.prices import checked_prices
from .conversation import ConversationManager, SlidingWindowConversationManager
from .errors import AgentBusyError, ConfigurationError, PromptError
from .events import AgentEvent, final_result
from .hooks import HookRegistry
from .invocation import InvocationOptions, invoke_stream
from .loop.core import LoopCore
from .loop.driver import DriverOptions, LocalDriver
from .loop.host import Host, LoopHost
from .loop.policies import Limits, RetryPolicy
from .loop.state import RunState
from .loop.tracing import NULL_TRACER, Tracer
from .manifest import Migrations, ResumeCheck, build_manifest, effect_of
from .models.base import Model
from .models.registry import from_string
from .result import AgentResult
from .telemetry import global_tracer, resolve_tracer
from .tools.base import Tool
from .tools.compensation import checked_triggers, compensation_name
from .tools.executors import ConcurrentToolExecutor, ToolExecutor
from .tools.registry import ToolRegistry
from .tools.source import ToolSource
from .turn import abandon_interrupts
from .types import Message, SystemContentBlock, ToolSpec

if TYPE_CHECKING:
    from .durable.indoubt import InDoubtCall
    from .durable.runner import DurableBinding
    from .durable.store import RunStore

_T = TypeVar("_T")

if TYPE_CHECKING:
    from .durable.compensation import CompensationReport

_ABANDONED_STREAM_GRACE = 20
"""Event-loop iterations a new invocation waits for an abandoned stream to be finalized."""


class RunOptions(TypedDict, total=False):
    """The keyword arguments of one invocation, described in :meth:`Agent.invoke_async` (and
    taken the same by ``agent(...)`` and :meth:`Agent.stream_async`)."""

    output_model: type[pydantic.BaseModel] | None
    invocation_state: dict[str, Any] | None
    run_id: str | None
    parent_run_id: str | None
    budget: Budget | None
    allow: Iterable[str] | None


class Agent(DurableRuns, AgentSnapshots):
    """A model, a system prompt and tools, run in a ReAct loop whose whole state is JSON.

    Call it (``agent("prompt")``), await ``invoke_async`` or iterate ``stream_async``. A prompt
    is a string, a list of content blocks, a list of messages, or ``None`` to continue.
    """

    def __init__(
        self,
        model: Model | str | None = None,
        tools: Iterable[Tool | ToolSource | Callable[..., Any]] | None = None,
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
        store: RunStore | None = None,
        reconcile: Callable[[InDoubtCall], Any] | None = None,
        tracer: Tracer | None = None,
        trace_content: bool | None = None,
        budget: Budget | None = None,
        prices: Mapping[str, ModelPrice] | None = None,
        compensate_on: Iterable[str] = (),
    ) -> None:
        """Configure an agent; nothing runs and no provider SDK is imported until the first call.

        Args:
            model: The model: a :class:`~tether.models.Model` (``OpenAIModel(...)``, ...) or a
                model string, the same the ``tether`` command takes: ``"openai:MODEL"``,
                ``"anthropic:MODEL"``, ``"bedrock:MODEL"``, ``"openai-compatible:URL:MODEL"``,
                ``"llamacpp"`` or ``"llamacpp:PATH"`` (see :func:`tether.models.from_string`).
                ``None`` leaves it unset (a run then fails naming ``Agent(model=...)``).
            tools: The tools: ``@tool`` functions, plain functions (wrapped as if decorated),
                :class:`~tether.tools.Tool` objects and tool sources (started on first use).
            system_prompt: The system prompt: a string or system content blocks (``text``,
                ``cachePoint``).
            messages: The conversation to start from (validated, then copied).
            state: The agent state, a dict of JSON values (copied); tools and hooks read and
                write it as ``agent.state`` and it is part of snapshots and durable runs.
            conversation_manager: Keeps the conversation within the context window (default:
                :class:`~tether.conversation.SlidingWindowConversationManager`).
            hooks: Hook providers (objects with ``register_hooks``) or typed callbacks
                (``def on_tool(event: BeforeToolCall)``).
            tool_executor: How one cycle's tool calls are scheduled (default: all at once,
                :class:`~tether.tools.ConcurrentToolExecutor`).
            name: A human name, used in traces and messages (default ``"agent"``); an agent
                passed in another agent's ``tools`` is its tool of that name, so it needs one
                given here (``name_given``).
            agent_id: A stable id of the agent (default: ``name``).
            retry: The backoff of throttled model calls (default :class:`~tether.RetryPolicy`);
                provider SDKs' own retries are turned off, so this is the only retry policy.
            limits: Per-invocation limits on cycles, tokens and context reductions
                (default: none but three reductions, see :class:`~tether.Limits`).
            checkpointing: Where an invocation pauses with a resumable checkpoint: ``True``
                (after every model call and every tool round), ``False`` (never) or some of
                ``"after_model"``, ``"after_tools"``.
            description: What the agent does, in a sentence (for people and for agents that
                use it).
            store: Where durable runs (``agent(prompt, run_id=...)``) are kept (default: a
                SQLite file under ``$TETHER_HOME``, created on first use).
            reconcile: Decides a durable run's in-doubt calls of non-idempotent tools after a
                crash: returns a result to record or ``tether.durable.RERUN`` (default: the run
                stops with a ``tether.in_doubt`` interrupt).
            tracer: Receives spans at invocation, model-call and tool-call boundaries
                (default: OpenTelemetry spans when the application set a global tracer
                provider, else none; pass ``tether.loop.tracing.NULL_TRACER`` to turn tracing
                off). See :mod:`tether.telemetry`.
            trace_content: Record message contents, tool arguments and results on spans
                (default ``None``: only when ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``
                is ``true``). Off by default: contents may be personal data.
            budget: What each run of the agent may spend over its whole life (tokens, dollars,
                tool and model calls, seconds), nested runs included; a call may pass its own
                (see :class:`~tether.Budget` and the Budgets guide).
            prices: Model prices (model id or id prefix → :class:`~tether.ModelPrice`) that win
                over the built-in table, for ``Budget.max_cost_usd``.
            compensate_on: When a durable run's turn is compensated at once (its performed
                effects undone by their tools' ``compensate``, newest first, each at most once):
                any of ``"failed"``, ``"cancelled"``, ``"budget"`` (default: never; call
                :meth:`compensate`). See :mod:`tether.durable.compensation`.

        Raises:
            ConfigurationError: An invalid value, naming it: an unknown model string (the
                message lists the valid forms), an ``Agent`` without a name among ``tools``, bad messages,
                an unknown checkpointing position, a ``max_cost_usd`` budget on a model without a
                known price (:class:`~tether.errors.BudgetPriceError`).
            StateError: ``state`` is not a dict of JSON values.
        """
        self._model = from_string(model) if isinstance(model, str) else model
        self.name = name or "agent"
        self.name_given = name is not None
        self.agent_id = agent_id or self.name
        self.description = description
        tools = list(tools or ())
        for index, item in enumerate(tools):
            if isinstance(item, Agent):
                if not item.name_given:
                    raise ConfigurationError(
                        f"tools[{index}] is an Agent without a name; an agent used as a tool is called by its name: "
                        "build it with Agent(name=..., description=...) or pass agent.as_tool(name=...)"
                    )
                tools[index] = item.as_tool()
        self.tool_registry = ToolRegistry(tools)
        self.hooks = HookRegistry()
        for hook in hooks or ():
            self.hooks.add(hook)
        self.conversation_manager = conversation_manager or SlidingWindowConversationManager()
        self.tool_executor = tool_executor or ConcurrentToolExecutor()
        self.retry = retry or RetryPolicy()
        self.limits = limits or Limits()
        self.checkpointing = agent_config.checkpoint_positions(checkpointing)
        self.run_state = agent_config.initial_run_state(messages, state, system_prompt)
        self.state = AgentState(lambda: self.run_state.state)
        self._cancel = threading.Event()
        self._busy = threading.Lock()
        self._output_specs: dict[type[pydantic.BaseModel], ToolSpec] = {}
        self.store = store
        self.reconcile = reconcile
        self.tracer: Tracer = tracer or NULL_TRACER
        self.trace_content = agent_config.checked_trace_content(trace_content)
        self._global_tracer = tracer is None  # resolved per invocation (a provider may be set later)
        self._binding: DurableBinding | None = None
        self._children: set[Agent] = set()  # runners of this agent's agent-tool calls now running
        self.budget = agent_config.checked_budget(budget)
        self.prices = checked_prices(prices)
        self.compensate_on = checked_triggers(compensate_on)
        if self._model is not None:
            agent_config.invocation_budget(self.budget, self._model, self.prices, [])  # an unpriced max_cost_usd fails now
        self.migrations = Migrations()
        """What this code says about pending calls of runs started by older code (see
        :mod:`tether.manifest`): ``agent.migrations.rename_tool(old, new)``,
        ``agent.migrations.tool_input(name, fn)``."""

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
    def model_or_none(self) -> Model | None:
        """The model, or None when none was given (``model`` raises then)."""
        return self._model

    def as_tool(self, name: str | None = None, description: str | None = None, *, keep_conversation: bool = False) -> AgentTool:
        """This agent as a tool of another agent: its input is one string, ``input``; the
        agent's final text is the result (see :mod:`tether.agent_tool`).

        Args:
            name: The tool name (default: this agent's name, which must have been given).
            description: What it does, for the calling model (default: ``description``).
            keep_conversation: Continue this agent's conversation across calls (kept in the
                caller's state) instead of a fresh conversation per call.
        """
        return AgentTool(self, name, description, keep_conversation=keep_conversation)

    @property
    def messages(self) -> list[Message]:
        """The conversation (live list)."""
        return self.run_state.messages

    @messages.setter
    def messages(self, value: list[Message]) -> None:
        agent_config.checked_messages(value)
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
        self.run_state.system_prompt = agent_config.system_blocks(value)
        if self._binding is not None:  # the agent's definition: new durable runs start from it, manifests record it
            self._binding.base.system_prompt = self.run_state.system_prompt

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
            spec = self._output_specs[output_model] = agent_config.output_tool_spec(output_model, self.tool_registry)
        return spec

    def tool_specs_for(self, output_model: type[pydantic.BaseModel] | None) -> list[ToolSpec]:
        specs = self.tool_registry.specs
        if output_model is None:
            return specs
        return [*specs, self._output_spec(output_model)]

    def manifest(self, output_model: type[pydantic.BaseModel] | None = None) -> dict[str, Any]:
        """This agent's run manifest now (JSON, see :mod:`tether.manifest`): each tool's schema
        digest, parameters and effect contract, the system prompt's digest, the model id, the
        conversation manager, the output model and the Tether version. A durable run records it,
        checkpoints and interrupts carry it, and a resume is judged against it.

        Args:
            output_model: The structured-output model of a call, if any.
        """
        reconciles = self.reconcile is not None
        tools = []
        compensations: dict[str, str] = {}
        for name in self.tool_registry.names:
            item = self.tool_registry.get(name)
            if item is not None:
                transactional = bool(getattr(item, "transactional", False))  # the outbox's flag (issue 32 C)
                tools.append((item.spec, effect_of(bool(item.idempotent), reconciles, transactional)))
                compensations.update({name: undo} if (undo := compensation_name(item.compensate)) else {})
        base = self._binding.base if self._binding is not None else self.run_state
        return build_manifest(
            tools=tools,
            system_prompt=base.system_prompt,
            model=getattr(self._model, "model_id", None),
            conversation_manager=self.conversation_manager.state_name(),
            output_model=None if output_model is None else self._output_spec(output_model),
            compensations=compensations,
        )

    def host(self) -> Host:
        """The services the loop uses for one invocation (see :class:`~tether.loop.host.LoopHost`)."""
        return Host(
            owner=self,
            name=self.name,
            hooks=self.hooks,
            model_or_none=self._model,
            tools=self.tool_registry,
            tool_executor=self.tool_executor,
            conversation_manager=self.conversation_manager,
            retry=self.retry,
            limits=self.limits,
            specs_for=self.tool_specs_for,
            tracer=self._tracer(),
        )

    def _tracer(self) -> Tracer:
        """The tracer of one invocation: the given one, else the global provider's (if set)."""
        tracer = self.tracer
        if tracer is NULL_TRACER and self._global_tracer:
            return global_tracer(self.trace_content)
        return resolve_tracer(tracer, self.trace_content)

    def make_driver(self, host: LoopHost, core: LoopCore, options: DriverOptions, cancel: threading.Event) -> LocalDriver:
        """The driver of one in-process invocation (durable runs bring their own).

        Override it to wrap the local driver; the arguments are those of
        :data:`tether.invocation.DriverFactory`.
        """
        return LocalDriver(host, core, options, cancel)

    def _adopt(self, run: RunState) -> None:
        """Make ``run`` this agent's run state (a durable run loaded from its store)."""
        self.run_state = run

    # -- running --------------------------------------------------------------------------

    def __call__(self, prompt: Any = None, **options: Unpack[RunOptions]) -> AgentResult:
        """Run one invocation synchronously (from a thread with no running event loop, or any).

        With ``run_id`` the invocation is a turn of that durable run (see :mod:`tether.durable`);
        ``parent_run_id`` makes a new durable run a nested run of that one (multi-agent: a child
        agent's run is listed under its parent's). Both are described in :meth:`invoke_async`.
        """
        return self._sync(self.invoke_async(prompt, **options))

    @staticmethod
    def _sync(coro: Coroutine[Any, Any, _T]) -> _T:
        return run_sync(coro)

    async def invoke_async(
        self,
        prompt: Any = None,
        *,
        output_model: type[pydantic.BaseModel] | None = None,
        invocation_state: dict[str, Any] | None = None,
        run_id: str | None = None,
        parent_run_id: str | None = None,
        budget: Budget | None = None,
        allow: Iterable[str] | None = None,
    ) -> AgentResult:
        """Run one invocation and return its result.

        Args:
            prompt: What to send: a string, content blocks, messages, ``interruptResponse``
                blocks answering interrupts, or a ``checkpointResume`` block (None: continue).
            output_model: A pydantic model the final answer must fill (structured output).
            invocation_state: Values for tools and hooks of this invocation only (not stored).
            run_id: Make the invocation a turn of this durable run in the agent's store.
            parent_run_id: With ``run_id``, the durable run this new run is nested in (a
                multi-agent child run); recorded in the new run's head (``RunSummary.
                parent_run_id``). A run that already exists keeps the parent it was created with.
            budget: The run's budget for this call (default: the agent's ``budget``); what the
                run spent in earlier calls counts against it.
            allow: Incompatible differences between the run's manifest and this agent to accept
                when the call resumes a run (interrupt answers, a checkpoint, a durable run), by
                name or code as :class:`~tether.errors.IncompatibleResumeError` names them.
        """
        options = RunOptions(
            output_model=output_model,
            invocation_state=invocation_state,
            run_id=run_id,
            parent_run_id=parent_run_id,
            budget=budget,
            allow=allow,
        )
        return cast(AgentResult, await final_result(self._events(prompt, forward_deltas=False, **options)))

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
        """The events of one invocation run as a nested run (an agent tool's call), deltas
        included: ``stream_async`` plus ``resume`` (continue durable run ``run_id``, as
        :meth:`resume_async` does, instead of starting it) and ``budget`` (what the parent has
        left, already combined with this agent's own)."""
        options = RunOptions(invocation_state=invocation_state, run_id=run_id, parent_run_id=parent_run_id, budget=budget)
        return self._events(prompt, forward_deltas=True, resume=resume, **options)

    async def stream_async(self, prompt: Any = None, **options: Unpack[RunOptions]) -> AsyncIterator[AgentEvent]:
        """Run one invocation, yielding events (:data:`tether.AgentEvent`): ``text_delta``,
        ``reasoning_delta``, ``message``, ``tool_start``, ``tool_result`` and finally ``result``
        (an AgentResult). Narrow an event by its kind: ``if event["type"] == "tool_start": ...``.
        The parameters are those of :meth:`invoke_async`."""
        # aclosing: a caller that stops iterating closes the whole invocation in one step.
        async with contextlib.aclosing(self._events(prompt, forward_deltas=True, **options)) as events:
            async for event in events:
                yield event

    async def _events(
        self,
        prompt: Any,
        *,
        forward_deltas: bool,
        output_model: type[pydantic.BaseModel] | None = None,
        invocation_state: dict[str, Any] | None = None,
        run_id: str | None = None,
        resume: bool = False,
        parent_run_id: str | None = None,
        budget: Budget | None = None,
        allow: Iterable[str] | None = None,
    ) -> AsyncGenerator[AgentEvent, None]:
        if not self._busy.acquire(blocking=False):
            # A stream the caller broke out of is closed by the event loop's async-generator
            # finalizer a couple of loop iterations later: give it that long before refusing.
            for _ in range(_ABANDONED_STREAM_GRACE):
                await asyncio.sleep(0)
                if self._busy.acquire(blocking=False):
                    break
            else:
                raise AgentBusyError(
                    "this agent is already running an invocation; agents run one at a time "
                    "(a stream_async you stopped iterating but still hold must be closed with aclose())"
                )
        try:
            normalized = normalize_prompt(prompt)
            await self.tool_registry.start_sources()
            check = ResumeCheck(self.manifest(output_model), self.migrations, frozenset(allow_names(allow)))
            options = InvocationOptions(
                checkpointing=self.checkpointing,
                output_model=output_model,
                output_tool=self.output_tool_name(output_model),
                invocation_state=invocation_state or {},
                forward_deltas=forward_deltas,
                cancel=self._cancel,
                budget=agent_config.invocation_budget(
                    agent_config.checked_budget(budget) or self.budget, self._model, self.prices, self.tool_specs_for(output_model)
                ),
                resume_check=check,
            )
            host = self.host()
            if run_id is None and parent_run_id is not None:
                raise PromptError("parent_run_id names the parent of a durable run: pass run_id too")
            if run_id is None:
                stream = invoke_stream(host, self.run_state, normalized, options, self.make_driver)
            else:
                from .durable.runner import DurableBinding, durable_stream
                from .durable.store import validate_run_id

                validate_run_id(run_id)
                if self._binding is None:
                    self._binding = DurableBinding(self.run_state)
                stream = durable_stream(
                    self._binding,
                    self._store(),
                    host,
                    run_id,
                    normalized,
                    options,
                    resume=resume,
                    reconcile=self.reconcile,
                    adopt=self._adopt,
                    parent_run_id=parent_run_id,
                    check=check,
                    compensate_on=self.compensate_on,
                )
            async with contextlib.aclosing(cast("AsyncGenerator[AgentEvent, None]", stream)):
                async for event in stream:
                    yield event
        finally:
            self._cancel.clear()  # a cancel applies to one invocation (this one, or the next if idle)
            self._busy.release()

    # -- lifecycle of tool sources ---------------------------------------------------------

    async def start(self) -> None:
        """Start the agent's tool sources (done on first use anyway; call it to fail early)."""
        await self.tool_registry.start_sources()

    async def aclose(self) -> None:
        """Close the agent's tool sources (they start again on the next invocation)."""
        await self.tool_registry.close_sources()

    def close(self) -> None:
        """Synchronous :meth:`aclose`."""
        if self.tool_registry.sources:
            self._sync(self.aclose())

    async def __aenter__(self) -> Agent:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def __enter__(self) -> Agent:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @contextlib.contextmanager
    def running_child(self, child: Agent) -> Iterator[None]:
        """While the block runs, ``child`` (the runner of an agent-tool call of this agent's
        invocation) is cancelled with this agent: :meth:`cancel` cancels it too."""
        self._children.add(child)
        try:
            yield
        finally:
            self._children.discard(child)

    def compensate(self, run_id: str) -> CompensationReport:
        """Undo durable run ``run_id``'s performed effects: its tools' ``compensate``, newest
        call first, each at most once, each a recorded step (a compensation cut short goes on
        where it stopped). See :mod:`tether.durable.compensation`.

        Args:
            run_id: The durable run, in the agent's store.
        """
        return self._sync(self.compensate_async(run_id))

    async def compensate_async(self, run_id: str) -> CompensationReport:
        """Async :meth:`compensate`.

        Args:
            run_id: The durable run, in the agent's store.
        """
        from .durable.compensation import compensate_run

        return await compensate_run(self._store(), run_id, self.tool_registry.get)

    def cancel(self) -> None:
        """Ask the running invocation to stop at the next step (thread-safe).

        Tool calls that had not started get an error result; the result's stop reason is
        ``cancelled`` and the conversation stays valid. Called while no invocation runs, it
        applies to the next one, which returns ``cancelled`` without calling the model (as in
        Strands) — unless the agent waits for interrupt answers: then it gives up on them (the
        interrupted tool calls get a "cancelled" error result) and the agent accepts new
        prompts again. Child agents running as this agent's tools are cancelled too.
        """
        for child in list(self._children):
            child.cancel()
        if self._busy.acquire(blocking=False):
            try:
                if self.run_state.interrupt_state.get("activated"):
                    abandon_interrupts(self.run_state)
                else:
                    self._cancel.set()
            finally:
                self._busy.release()
            return
        self._cancel.set()

    def __repr__(self) -> str:
        model = getattr(self._model, "model_id", None)
        return f"Agent(name={self.name!r}, model={model!r}, tools={self.tool_names})"
