"""The typed input and output of every Tether activity (agent, graph and swarm).

One ``TypedDict`` per activity input (``...Input``, and the ``...Ref`` of the describing
activities) and per output, as the workflows build them and the activities read them. They are
plain dicts, so the JSON on the wire is the JSON the workflows always sent (every stored history
in ``tests/temporal/histories/`` replays).

**The inputs are typed for the type checker only.** Temporal's data converter converts an
activity's argument by the activity's type hints: the default one key by key (a ``float`` hint
turns ``5`` into ``5.0``), pydantic's (``temporalio.contrib.pydantic``) by validating it (it
refuses ``typing.TypedDict`` on Python < 3.12 and drops keys a TypedDict does not declare). What
an activity receives must be what the workflow sent, whatever converter the application
configured, so at run time each input name below is bound to plain JSON (``dict[str, Any]``,
the hint the activities always had); :data:`INPUTS` lists them, and
``tests/temporal/test_activity_io.py`` checks every registered activity. The outputs need no such
care: Tether's workflows read activity results as plain JSON (no result type).

Compact values (``Compact...``) may hold ``{"$blob": ref}`` placeholders (see
:mod:`tether.temporal.payloads` and :mod:`tether.temporal.claimcheck`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NotRequired, TypeAlias, TypedDict

from ..types import JSONValue
from .shapes import AgentSettings, CompactMessage, CompactRecord, CompactResult, CompactState, Config, SourceTools

# -- agent activities -------------------------------------------------------------------------


class AgentRef(TypedDict):
    """Which agent to build: ``tether.describe`` and ``tether.list_tools``."""

    agent: str
    config: Config
    budget: NotRequired[dict[str, float]]
    """``tether.describe`` of an agent tool's child: what the parent's budget leaves it
    (``Budget.to_dict``); the settings' budget is the tighter of it and the agent's own."""


class AgentCall(AgentRef):
    """The part every agent activity of an invocation gets: the agent, its run, the trace."""

    run_id: str | None
    trace: NotRequired[dict[str, str]]
    """The client's invocation span ids: the activity's spans go under it."""


class Described(TypedDict):
    """``tether.describe``: the agent's initial run (compact) and its settings."""

    conv: str | None
    tail: list[CompactMessage]
    state: CompactState
    conversation_manager_state: JSONValue
    system_prompt: CompactMessage | None
    settings: AgentSettings
    manifest: NotRequired[dict[str, Any]]
    """The agent's run manifest (:mod:`tether.manifest`): what a resume on other code is judged
    against (absent from the outcomes recorded before manifests)."""


class ListedTools(TypedDict):
    """``tether.list_tools``: the tools of the agent's tool sources."""

    source_tools: SourceTools
    non_idempotent: list[str]
    has_tools: bool
    manifest: NotRequired[dict[str, Any]]
    """The agent's manifest with the listed tools (absent from outcomes recorded before manifests)."""


class CallModelInput(AgentCall):
    """``tether.call_model``: persist the pending messages, call the model once."""

    conv: str | None
    pending: list[CompactMessage]
    system_prompt: CompactMessage | None
    tool_choice: JSONValue
    model_state: JSONValue
    state: CompactState
    conversation_manager_state: JSONValue
    cycle_index: int
    source_tools: NotRequired[SourceTools]
    max_tokens: NotRequired[int]
    """The reply's output cap, what the run's budget leaves (absent: none)."""


class ModelOutput(TypedDict):
    """``tether.call_model``: the compact response, and the rebased conversation when the
    conversation manager reduced it (``length``, ``conversation_manager_state``)."""

    conv: str | None
    message: CompactMessage
    stop_reason: str
    usage: JSONValue
    latency_ms: float
    model_state: JSONValue
    rebased: bool
    length: NotRequired[int]
    conversation_manager_state: NotRequired[JSONValue]


class RunToolInput(AgentCall):
    """``tether.run_tool``: one tool call with the interrupts it may take answers from."""

    tool_use: CompactMessage
    interrupts: dict[str, CompactRecord]
    state: CompactState
    source_tools: NotRequired[SourceTools]


class StateChanges(TypedDict):
    """What a tool call changed in the agent state (``set`` values compact)."""

    set: CompactState
    deleted: list[str]


class ToolOutcome(TypedDict, total=False):
    """``tether.run_tool`` and ``tether.reconcile``: a compact ``result`` (with its
    ``duration_ms``), or the ``interrupt`` it raised, or ``rerun`` (reconcile only); with the
    state changes and the usage an agent tool's child added."""

    result: CompactResult
    duration_ms: float
    interrupt: CompactRecord
    rerun: bool
    state_changes: StateChanges
    usage_added: JSONValue


class ReconcileInput(AgentCall):
    """``tether.reconcile``: settle an in-doubt call (``answer``: a ``tether.in_doubt`` interrupt's)."""

    tool_use: CompactMessage
    answer: NotRequired[JSONValue]


class FinishInput(AgentCall):
    """``tether.finish``: persist the pending messages, apply after-call management (``manage``)."""

    conv: str | None
    pending: list[CompactMessage]
    conversation_manager_state: JSONValue
    manage: bool


class Finished(TypedDict):
    """``tether.finish``: the conversation's reference and length, the manager's state."""

    conv: str | None
    length: int
    conversation_manager_state: JSONValue


class HookInput(AgentCall):
    """``tether.invocation_hook``: fire ``before``, ``after`` or ``messages`` (``MessageAdded``)."""

    event: str
    resumed: bool
    resumed_from: str | None
    messages: NotRequired[list[CompactMessage]]


class ChildPromptInput(TypedDict):
    """``tether.child_prompt``: the agent tool call whose input was offloaded."""

    tool_use: CompactMessage


class ChildAnswerInput(TypedDict):
    """``tether.child_answer``: the finished child's final message (compact)."""

    tool_use_id: str
    message: CompactMessage | None


class CheckResumeInput(AgentCall):
    """``tether.check_resume``: judge a resume against the code of the worker running it.

    ``manifest`` is the run's recorded manifest (None: none), ``pending`` its pending tool calls
    (compact), ``allow`` the incompatible differences the caller accepts; ``conv`` is the
    conversation when the pending calls' message is already in it (``persisted``), so a
    migration can rewrite it there too.
    """

    manifest: dict[str, Any] | None
    pending: list[CompactMessage]
    allow: list[str]
    conv: str | None
    persisted: bool
    source_tools: NotRequired[SourceTools]


class CheckedResume(TypedDict):
    """``tether.check_resume``: the verdict (JSON), the refusal naming every blocking difference
    (None: accepted), the agent's manifest now, the migrated pending calls (``toolUseId`` ->
    ``{"name", "input"}``, the input compact), the conversation rewritten for them (None:
    unchanged) and, when the prompt changed, the agent's system prompt."""

    verdict: dict[str, Any]
    refused: str | None
    manifest: dict[str, Any]
    migrated: dict[str, dict[str, Any]]
    conv: str | None
    system_prompt: NotRequired[CompactMessage | None]
    """The agent's system prompt (compact) when it changed since the manifest: the run takes it."""


# -- graph and swarm activities ---------------------------------------------------------------


class ChildOutcome(TypedDict):
    """What a graph or swarm reads of its nested agent workflow's result (``run``: its state only)."""

    stop_reason: str
    message: JSONValue
    metrics: JSONValue
    invocation: JSONValue
    interrupts: JSONValue
    run: JSONValue


SpecData: TypeAlias = dict[str, Any]
"""``tether.describe_graph`` and ``tether.describe_swarm``: the structure of the graph or swarm,
as :meth:`~tether.multiagent.schedule.GraphSpec.to_dict` and
:meth:`~tether.multiagent.swarm_turns.SwarmSpec.to_dict` write it (and ``from_dict`` reads it)."""


class GraphRef(TypedDict):
    """Which graph to build: ``tether.describe_graph``."""

    graph: str
    config: Config


class GraphPromptInput(TypedDict):
    """``tether.graph_prompt``: a node execution's task and the answers that start it (None: an entry point)."""

    node: str
    task: JSONValue
    sources: list[list[JSONValue]] | None


class GraphPrompt(TypedDict):
    """``tether.graph_prompt``: the execution's input (kept in the state) and its compact prompt."""

    input: JSONValue
    message: CompactMessage


class NodeOutcomeInput(TypedDict):
    """``tether.graph_node``: a finished agent node execution."""

    node: str
    out: ChildOutcome


class NestedInput(TypedDict):
    """``tether.graph_nested``: a finished nested graph node execution (its child's snapshot)."""

    node: str
    snapshot: JSONValue
    run_id: str


class ConditionsInput(GraphRef):
    """``tether.graph_conditions``: the edges leaving ``node``, on the graph state ``state``."""

    node: str
    state: JSONValue
    order: list[str]


class CallableInput(GraphRef):
    """``tether.graph_callable``: a callable node's execution on its input (compact)."""

    node: str
    input: JSONValue


class NodeOutput(TypedDict):
    """``tether.graph_node``, ``graph_nested``, ``graph_callable``: the execution's result as a
    graph state holds it (one blob reference when large)."""

    result: JSONValue


class SwarmRef(TypedDict):
    """Which swarm to build: ``tether.describe_swarm``."""

    swarm: str
    config: Config


class SwarmPromptInput(TypedDict):
    """``tether.swarm_prompt``: a member turn's prompt (a user message) to make compact."""

    message: JSONValue


class TurnInput(TypedDict):
    """``tether.swarm_turn``: a finished member turn."""

    member: str
    out: ChildOutcome


class Turn(TypedDict):
    """``tether.swarm_turn``: the turn's result as a swarm state holds it, and its handoff."""

    result: JSONValue
    handoff: JSONValue


class UnwindInput(AgentCall):
    """``tether.compensation_plan``: where the run's whole conversation is (its reference, the
    messages not persisted yet, the open cycle's cursor: ``results``, ``started``, ``phase``)."""

    conv: str | None
    pending: list[CompactMessage]
    cursor: dict[str, Any]


class UndoInput(UnwindInput):
    """``tether.undo``: the planned call to undo (``{"toolUseId", "name", "in_doubt"}``)."""

    entry: dict[str, Any]


INPUTS = (
    "UnwindInput",
    "UndoInput",
    "AgentRef",
    "AgentCall",
    "CallModelInput",
    "RunToolInput",
    "ReconcileInput",
    "FinishInput",
    "HookInput",
    "ChildPromptInput",
    "ChildAnswerInput",
    "CheckResumeInput",
    "GraphRef",
    "GraphPromptInput",
    "NodeOutcomeInput",
    "NestedInput",
    "ConditionsInput",
    "CallableInput",
    "SwarmRef",
    "SwarmPromptInput",
    "TurnInput",
)
"""The names of the activity inputs: plain JSON at run time (see the module docstring)."""

if not TYPE_CHECKING:
    for _name in INPUTS:
        globals()[_name] = dict[str, Any]
    del _name


__all__ = [
    "INPUTS",
    "AgentCall",
    "AgentRef",
    "CallModelInput",
    "CallableInput",
    "CheckResumeInput",
    "CheckedResume",
    "ChildAnswerInput",
    "ChildOutcome",
    "ChildPromptInput",
    "ConditionsInput",
    "Described",
    "FinishInput",
    "Finished",
    "GraphPrompt",
    "GraphPromptInput",
    "GraphRef",
    "HookInput",
    "ListedTools",
    "ModelOutput",
    "NestedInput",
    "NodeOutcomeInput",
    "NodeOutput",
    "ReconcileInput",
    "RunToolInput",
    "SpecData",
    "StateChanges",
    "SwarmPromptInput",
    "SwarmRef",
    "ToolOutcome",
    "Turn",
    "TurnInput",
    "UndoInput",
    "UnwindInput",
]
