"""An :class:`~tether.agent.Agent`'s configuration arguments, checked and normalised.

Every argument check of the agent lives here, so the facade only stores what these functions
return; each raises :class:`~tether.errors.ConfigurationError` (or ``StateError``) naming the
argument, as ``Agent(...)`` and its setters promise.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pydantic

from ._messages import validate_messages, validate_system_prompt
from .agent_state import state_copy
from .budget import Budget, BudgetPolicy, ModelPrice, budget_policy, estimate_tokens
from .errors import ConfigurationError, ShapeError, SnapshotError, StateError
from .loop.state import CHECKPOINT_POSITIONS, CheckpointPosition, RunState
from .snapshot import Snapshot
from .tools.registry import ToolRegistry
from .types import Message, SystemContentBlock, ToolSpec


def system_blocks(prompt: str | list[SystemContentBlock] | None) -> list[SystemContentBlock] | None:
    """``system_prompt`` as content blocks (a string is one text block), validated and copied."""
    if prompt is None:
        return None
    if isinstance(prompt, str):
        return [{"text": prompt}]
    try:
        validate_system_prompt(prompt, ["system_prompt"])
    except ShapeError as exc:
        raise ConfigurationError(str(exc)) from None
    return [dict(block) for block in prompt]  # type: ignore[misc]


def checkpoint_positions(value: bool | Iterable[str]) -> frozenset[CheckpointPosition]:
    """``checkpointing`` as the set of positions an invocation pauses at."""
    if value is True:
        return frozenset(CHECKPOINT_POSITIONS)
    if value is False or value is None:
        return frozenset()
    if isinstance(value, str):
        value = [value]
    positions = frozenset(value)
    unknown = positions - set(CHECKPOINT_POSITIONS)
    if unknown:
        raise ConfigurationError(f"checkpointing positions {sorted(unknown)} are unknown; use True or some of {list(CHECKPOINT_POSITIONS)}")
    return positions  # type: ignore[return-value]


def checked_messages(messages: list[Message]) -> list[Message]:
    """``messages`` validated (a bad one is a ConfigurationError naming it)."""
    try:
        return validate_messages(messages, ["messages"])
    except ShapeError as exc:
        raise ConfigurationError(str(exc)) from None


def initial_run_state(
    messages: list[Message] | None, state: dict[str, Any] | None, system_prompt: str | list[SystemContentBlock] | None
) -> RunState:
    """The run state of a new agent: its messages, state and system prompt, checked and copied."""
    if state is not None and not isinstance(state, dict):
        raise StateError(f"state must be a dict of JSON values, got {type(state).__name__}")
    initial = checked_messages(list(messages or []))
    return RunState(
        messages=[{"role": m["role"], "content": list(m["content"])} for m in initial],
        state=state_copy(state or {}, "state"),
        system_prompt=system_blocks(system_prompt),
    )


def checked_budget(budget: Any, where: str = "budget") -> Budget | None:
    """``budget`` when it is a :class:`~tether.Budget` or None; a ConfigurationError otherwise."""
    if budget is not None and not isinstance(budget, Budget):
        raise ConfigurationError(f"{where} must be a tether.Budget(...) or None, got {type(budget).__name__}")
    return budget


def invocation_budget(budget: Budget | None, model: Any, prices: dict[str, ModelPrice], specs: list[ToolSpec]) -> BudgetPolicy | None:
    """The budget policy of one invocation on ``model`` (None without a budget): priced, with the
    tool specs' estimated tokens; a BudgetPriceError when ``max_cost_usd`` cannot be priced, a
    ConfigurationError when there is no model to price."""
    if budget is None:
        return None
    if model is None and budget.max_cost_usd is not None:
        raise ConfigurationError("this agent has no model; pass Agent(model=...)")
    model_id = getattr(model, "model_id", None)
    return budget_policy(budget, model_id if isinstance(model_id, str) else None, prices, fixed_tokens=estimate_tokens(specs))


def checked_trace_content(value: bool | None) -> bool | None:
    """``trace_content``: True, False or None."""
    if value is not None and not isinstance(value, bool):
        raise ConfigurationError(f"trace_content must be True, False or None, got {value!r}")
    return value


def output_tool_spec(output_model: type[pydantic.BaseModel], tools: ToolRegistry) -> ToolSpec:
    """The spec of the tool the model calls to give a structured answer (``output_model``): named
    after the pydantic model, so it must not clash with one of ``tools``."""
    if not (isinstance(output_model, type) and issubclass(output_model, pydantic.BaseModel)):
        raise ConfigurationError(f"output_model must be a pydantic BaseModel subclass, got {output_model!r}")
    name = output_model.__name__
    if name in tools:
        raise ConfigurationError(f"output_model {name!r} has the same name as a tool; rename one")
    doc = (output_model.__doc__ or "").strip()
    return {
        "name": name,
        "description": doc or f"Return the final answer as a {name}. Call this once you have the answer.",
        "inputSchema": {"json": output_model.model_json_schema()},
    }


def snapshot_argument(snapshot: Any) -> Snapshot:
    """The snapshot ``load_snapshot`` was given: a :class:`Snapshot`, a snapshot dict, or any
    object with a ``to_dict()`` giving one (a Strands ``Snapshot``), read with
    :meth:`Snapshot.from_dict` (which validates its version and scope)."""
    if not isinstance(snapshot, (Snapshot, dict)) and callable(getattr(snapshot, "to_dict", None)):
        snapshot = snapshot.to_dict()
    if isinstance(snapshot, dict):
        snapshot = Snapshot.from_dict(snapshot)
    if not isinstance(snapshot, Snapshot):
        raise SnapshotError(f"load_snapshot takes a Snapshot or a snapshot dict, got {type(snapshot).__name__}")
    return snapshot
