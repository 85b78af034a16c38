"""Typed shapes of what Tether sends through Temporal: workflow parameters, options, carried state.

A workflow carries its run (through continue-as-new, the ``snapshot`` query and its result) as
a :class:`CarriedState`: the :class:`~tether.loop.state.RunState` fields, with the conversation
as a blob-store reference plus a few *compact* messages (see :mod:`tether.temporal.claimcheck`).

These ``TypedDict``s type the code that builds and reads those payloads. The methods Temporal
itself calls (the workflow's run method, its queries and updates, the activities) keep
``dict[str, Any]`` in their signatures on purpose: Temporal's data converter converts a payload
by those type hints (it checks literals and converts values key by key), which would change
what arrives. This module imports nothing from ``temporalio``.
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


class AgentSettings(TypedDict, total=False):
    """What the workflow needs to know about the agent (the ``tether.describe`` activity).

    The workflow reads every key with a default, so a missing key is allowed.
    """

    max_cycles: int | None
    max_tokens: int | None
    model_attempts: int
    retry: dict[str, Any]
    """The agent's RetryPolicy as JSON (:class:`tether.temporal.retries.RetrySettings`)."""
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
    source_tools: dict[str, Any]
    """From the ``tether.list_tools`` activity (absent: not listed): ``listings``, each source's
    tool specs, and ``idempotent``, the names of the idempotent ones."""


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
    (continue-as-new), with ``before_metrics`` and ``resumed_from`` as it began.
    """

    conv: str | None
    tail: list[CompactMessage]
    unpersisted: int
    state: dict[str, Any]
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


class WirePrompt(TypedDict):
    """A prompt as the client sends it: ``kind`` is ``messages``, ``interrupt_responses`` or
    ``continue``; ``messages`` are compact, ``responses`` are ``interruptResponse`` bodies."""

    kind: str
    messages: NotRequired[list[CompactMessage]]
    responses: NotRequired[list[dict[str, Any]]]


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
    config: NotRequired[dict[str, Any]]
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


class RunStatus(TypedDict):
    """The ``status`` query's answer (and the ``answer_interrupts`` update's result)."""

    status: str
    """``starting``, ``running``, ``interrupted`` or ``done``."""
    interrupts: list[dict[str, Any]]
    """The interrupts the run waits on (compact records; empty unless ``interrupted``)."""


__all__ = ["AgentSettings", "CarriedState", "CompactMessage", "RunStatus", "WirePrompt", "WorkflowOptions", "WorkflowParams"]
