"""Typed shapes of what Tether sends through Temporal: workflow parameters, options, carried state.

A workflow carries its run (through continue-as-new, the ``snapshot`` query and its result) as
a :class:`CarriedState`: the :class:`~tether.loop.state.RunState` fields, with the conversation
as a blob-store reference plus a few *compact* messages (see :mod:`tether.temporal.claimcheck`).

These ``TypedDict``s type the code that builds and reads those payloads (the activities' own
inputs and outputs are in :mod:`tether.temporal.activity_io`). The workflow's run method, its
update and its signal keep plain JSON types in their signatures on purpose: Temporal's data
converter converts a payload by those type hints (it checks literals and converts numbers key by
key), which would change what arrives. This module imports nothing from ``temporalio``.
"""

from __future__ import annotations

from typing import Any, NotRequired, TypeAlias, TypedDict

from ..types import CursorData, InterruptState, MetricsData

WORKFLOW_NAME = "tether.agent"
"""The agent workflow's name (its workflow type): an agent's run, an agent tool's call, a graph
node's or a swarm member's turn."""

CompactMessage: TypeAlias = dict[str, Any]
"""A message whose large parts are ``{"$blob": ref}`` placeholders (:func:`~tether.temporal.claimcheck.compact_message`).

It keeps the outer shape the loop core reads (roles, tool-use ids and names, tool-result ids
and statuses), which is why the workflow can run the core over compact messages.
"""


CompactToolUse: TypeAlias = dict[str, Any]
"""A ``toolUse`` block whose ``input`` may be one ``{"$blob": ref}`` placeholder (name and id inline)."""

CompactResult: TypeAlias = dict[str, Any]
"""A tool result whose large content items are ``{"$blob": ref}`` placeholders
(:func:`~tether.temporal.claimcheck.compact_result`); ``toolUseId`` and ``status`` stay inline."""

CompactState: TypeAlias = dict[str, Any]
"""An agent state whose large values are ``{"$blob": ref}`` placeholders, key by key (the keys
stay inline: the workflow merges tool calls' changes key by key)."""

CompactRecord: TypeAlias = dict[str, Any]
"""An interrupt record (:class:`~tether.types.InterruptRecord`) whose reason and response may be
``{"$blob": ref}`` placeholders (:func:`~tether.temporal.payloads.compact_interrupt`)."""

Answers: TypeAlias = list[dict[str, Any]]
"""One batch of interrupt answers: ``interruptResponse`` bodies (``{interruptId, response}``).
Kept as plain JSON in the handlers' signatures: Temporal's converter does not check them, the
validator does (a malformed answer is refused with the reason)."""

MultiAgentState: TypeAlias = dict[str, Any]
"""A graph's or swarm's run state, the JSON a local one holds (``take_snapshot()["state"]``),
with its large values compact on Temporal (see :mod:`tether.temporal.graph_wire`)."""

Config: TypeAlias = dict[str, Any]
"""The JSON config a registered factory builds its agent, graph or swarm from (:class:`~tether.temporal.AgentRegistry`)."""


class WorkflowOptions(TypedDict, total=False):
    """Per-run options of the agent workflow; any subset may be given.

    The workflow starts from ``tether.temporal.workflow.DEFAULT_OPTIONS`` (which sets every
    key) and applies the client's options, then the options of the ``start`` call, over it.
    """

    cycles_per_execution: int
    """Model calls per workflow execution before it continues as new."""
    model_timeout_s: float
    """Start-to-close timeout of one model call activity (the whole call, streaming included)."""
    model_heartbeat_s: float
    """Heartbeat timeout of a model call activity: how soon a worker that died mid-call is
    noticed (the activity heartbeats on stream events and on a timer). Default 30 s."""
    tool_timeout_s: float
    """Start-to-close timeout of one tool call activity."""
    heartbeat_s: float
    """Heartbeat timeout of a tool call activity."""
    tool_attempts: int
    """Attempts of a tool call activity of an idempotent tool (a tool declared
    ``idempotent=False`` always gets exactly one)."""
    hook_attempts: int
    """Attempts of an invocation-hook or reconcile activity."""
    tool_failure: str
    """What a tool call whose activity failed for good becomes: ``"error_result"`` (default: an
    error ``toolResult`` the model reads, and the run goes on) or ``"fail"`` (the run fails)."""
    turns_per_execution: int
    """Swarm runs only: member turns per swarm workflow execution before it continues as new
    (default 100; it also continues as new when Temporal suggests it)."""
    nodes_per_execution: int
    """Graph runs only: node executions per graph workflow execution before it continues as new,
    at a moment nothing is in flight (default 100; it also continues as new when Temporal suggests it)."""


class RetrySettings(TypedDict):
    """An agent's retry policy as JSON (what the ``tether.describe`` activity reports; see
    :mod:`tether.temporal.retries`)."""

    max_attempts: int
    initial_delay: float
    max_delay: float
    multiplier: float
    jitter: float


class SourceTools(TypedDict):
    """What ``tether.list_tools`` listed: each source's tool specs and the idempotent tools' names."""

    listings: list[list[Any]]
    idempotent: list[str]


class AgentSettings(TypedDict, total=False):
    """What the workflow needs to know about the agent (the ``tether.describe`` activity).

    The workflow reads every key with a default, so a missing key is allowed.
    """

    max_cycles: int | None
    max_tokens: int | None
    model_attempts: int
    retry: RetrySettings
    """The agent's RetryPolicy as JSON."""
    sequential: bool
    has_tools: bool
    non_idempotent: list[str]
    """Names of the tools declared ``idempotent=False``: their activities get one attempt."""
    invocation_hooks: bool
    sources: int
    """How many tool sources (e.g. MCP servers) the agent has (absent: none)."""
    agent_tools: dict[str, dict[str, Any]]
    """The agent tools (their calls run as child workflows) by name, with their options
    (``keep_conversation``) and the child agent's name (``agent_name``); absent: none."""
    source_tools: SourceTools
    """From the ``tether.list_tools`` activity (absent: not listed): ``listings``, each source's
    tool specs, and ``idempotent``, the names of the idempotent ones."""
    budget: BudgetSettings
    """The agent's budget, priced (absent: none; see :mod:`tether.budget`)."""
    compensate_on: list[str]
    """The agent's ``compensate_on``: when the run unwinds its effects (absent: never; see
    :mod:`tether.temporal.unwinding`)."""


class BudgetSettings(TypedDict):
    """An agent's budget as the workflow's loop core checks it: the limits (``Budget.to_dict``),
    the model's price in dollars per million tokens (``[input, output]``, None: unknown) and the
    tool specs' estimated tokens."""

    limits: dict[str, float]
    price: list[float] | None
    fixed_tokens: int


class CarriedState(TypedDict):
    """The compact run state a workflow carries (``AgentWorkflow._carry``, ``wire.carried_from_run``).

    ``conv`` names the persisted conversation and ``tail`` holds its last compact messages, of
    which the last ``unpersisted`` are not in ``conv`` yet. ``system_prompt`` is a compact
    ``{"role": "system", "content": [...]}`` message. The tool results in ``cursor`` and in
    ``interrupt_state``'s context are compact too, and so are the other values: large values of
    ``state`` (key by key), and ``conversation_manager_state``, ``model_state`` and interrupt
    reasons and responses (whole) are ``{"$blob": ref}`` placeholders
    (:mod:`tether.temporal.payloads`). ``settings`` absent or None makes the workflow
    read them from the agent when it starts; ``started`` says the invocation already began
    (continue-as-new), with ``before_metrics`` and ``resumed_from`` as it began. ``manifest``
    is the run's manifest (:mod:`tether.manifest`; absent from runs carried before manifests).
    ``forked_from`` (``{"run_id", "step"}``) marks the first execution of a fork
    (:mod:`tether.temporal.fork`).
    """

    conv: str | None
    tail: list[CompactMessage]
    unpersisted: int
    state: CompactState
    conversation_manager_state: dict[str, Any]
    interrupt_state: InterruptState
    system_prompt: CompactMessage | None
    model_state: dict[str, Any]
    cursor: CursorData
    metrics: MetricsData
    settings: NotRequired[AgentSettings | None]
    started: NotRequired[bool]
    before_metrics: NotRequired[MetricsData]
    resumed_from: NotRequired[str | None]
    manifest: NotRequired[dict[str, Any]]
    forked_from: NotRequired[dict[str, Any]]


class AgentRunResult(TypedDict):
    """An agent workflow's result: how the invocation stopped, its final message (compact), the
    run's and the invocation's metrics, and the run as the workflow carries it (its state is in
    ``run``); a nested child stopped on interrupts adds them (compact), for its parent to ask."""

    stop_reason: str
    message: CompactMessage | None
    metrics: MetricsData
    invocation: MetricsData
    run: CarriedState
    interrupts: NotRequired[list[CompactRecord]]
    compensation: NotRequired[dict[str, Any]]


class WirePrompt(TypedDict):
    """A prompt as the client sends it: ``kind`` is ``messages``, ``interrupt_responses`` or
    ``continue``; ``messages`` are compact, ``responses`` are ``interruptResponse`` bodies."""

    kind: str
    messages: NotRequired[list[CompactMessage]]
    responses: NotRequired[Answers]


class WorkflowParams(TypedDict):
    """The parameters of one agent workflow execution (``TetherClient.start``).

    ``agent`` names a registered agent and ``config`` is its JSON config; ``carried`` is the run
    to continue (None: a new run from the agent's initial state), ``prompt`` None continues
    (continue-as-new, or waiting for interrupt answers). The workflow reads every key but
    ``agent`` with a default. ``trace`` holds the ids of the client's ``invoke_agent`` span
    when tracing is on: the workflow only hands them to its activities, which open their
    ``chat`` and ``execute_tool`` spans under it (workflow code never opens a span).
    """

    agent: str
    config: NotRequired[Config]
    run_id: NotRequired[str | None]
    prompt: NotRequired[WirePrompt | None]
    carried: NotRequired[CarriedState | None]
    options: NotRequired[WorkflowOptions]
    trace: NotRequired[dict[str, str] | None]
    nested: NotRequired[bool]
    """A child workflow (an agent tool's call, a graph node, a swarm member's turn): it returns
    when it stops on interrupts (``stop_reason`` ``"interrupt"``, the pending ``interrupts``
    in its result) instead of waiting for answers; its parent asks and answers them."""
    parent_run_id: NotRequired[str | None]
    """The parent run of a child workflow (for the reader; the workflow does not use it)."""
    budget: NotRequired[dict[str, float] | None]
    """An agent tool's child workflow: what its parent's budget leaves it (``Budget.to_dict``),
    in the child's own counters; the child spends no more than this and its agent's own budget.
    Read when the child describes its agent: a child resumed with carried settings keeps the
    budget it started with."""
    allow: NotRequired[list[str] | None]
    """The incompatible differences (:mod:`tether.manifest`) the starter accepts when the
    execution continues carried state on changed code (not carried to the next execution)."""


class MultiAgentSnapshot(TypedDict):
    """A graph's or swarm's snapshot, local (``take_snapshot()``) or compact (the workflow's
    ``snapshot`` query and result): a graph's holds ``execution_order``, a swarm's ``node_history``."""

    type: str
    version: int
    state: MultiAgentState
    execution_order: NotRequired[list[str]]
    node_history: NotRequired[list[str]]


class AgentSnapshot(TypedDict):
    """An agent workflow's ``snapshot`` query answer: its status and its run, compact."""

    status: str
    run: CarriedState


class RunStatus(TypedDict):
    """The ``status`` query's answer (and the ``answer_interrupts`` update's result)."""

    status: str
    """``starting``, ``running``, ``interrupted`` or ``done``."""
    interrupts: list[CompactRecord]
    """The interrupts the run waits on (compact records; empty unless ``interrupted``)."""


__all__ = [
    "WORKFLOW_NAME",
    "Answers",
    "AgentRunResult",
    "AgentSettings",
    "AgentSnapshot",
    "CarriedState",
    "CompactMessage",
    "CompactRecord",
    "CompactResult",
    "CompactState",
    "CompactToolUse",
    "Config",
    "MultiAgentSnapshot",
    "MultiAgentState",
    "RetrySettings",
    "RunStatus",
    "SourceTools",
    "WirePrompt",
    "WorkflowOptions",
    "WorkflowParams",
]
