"""The checks of decoded rows: a head (every field the stores and the timeline read), a step,
and the open cycle's tool results against the last live message. Failures are ShapeErrors
naming the field (the decoders turn them into StoreErrors naming the row)."""

from __future__ import annotations

from typing import Any

from ..._messages import validate_system_prompt
from ...checkpoint import check_metrics
from ...errors import ShapeError, StoreError
from ...loop.core import tool_uses_of
from ...snapshot.validation import check_cursor, check_interrupt_state, check_manager_state
from ...types import Message, ToolResult
from ..history import STATUSES, STEP_POSITIONS, Step
from ..incarnation import INCARNATION, INCARNATION_PATTERN, PARENT_INCARNATION
from ..store import RUN_ID_PATTERN, SCHEMA_VERSION
from .parse import damaged


def check_count(value: Any, path: list[Any]) -> int:
    """``value`` if it is a non-negative int (not a bool), else ShapeError."""
    if type(value) is not int or value < 0:
        raise ShapeError(path, f"must be a non-negative integer, got {value!r:.60}")
    return value


def newer_schema(run_id: str, head: Any) -> StoreError | None:
    """The error for a head written by a newer Tether (checked before the shape, which may differ)."""
    version = head.get("schema_version") if isinstance(head, dict) else None
    if type(version) is int and version > SCHEMA_VERSION:
        return StoreError(
            f"run {run_id!r} was written by a newer Tether (schema {version}, this one knows {SCHEMA_VERSION}); upgrade Tether"
        )
    return None


def check_head(head: Any, root: str = "head") -> dict[str, Any]:
    """``head`` if it is a valid head row, with its metrics normalized; else ShapeError naming the field.

    Checks every field the stores, ``run_state_of``, ``summary_of`` and ``Timeline`` read:
    ``rev``, ``start_seq <= next_seq`` (non-negative ints), the cursor (what
    ``Cursor.from_dict`` needs), the metrics (as a checkpoint's, filled in where older heads
    lack a figure), the state dicts, the interrupt state, the system prompt and the timeline
    fields (``status``, ``turns``, ``steps``, ``created_at``, ``updated_at``, which heads
    written before step history existed lack), ``parent_run_id`` (nested runs only) and the
    incarnations (``incarnation``, ``parent_incarnation``; missing in legacy heads). ``schema_version`` defaults to the current one.
    """
    if type(head) is not dict:
        raise ShapeError([root], f"must be an object, got {type(head).__name__}")
    version = head.get("schema_version", SCHEMA_VERSION)
    if type(version) is not int or not 1 <= version <= SCHEMA_VERSION:
        raise ShapeError([root, "schema_version"], f"must be an integer from 1 to {SCHEMA_VERSION}, got {version!r:.60}")
    for key in ("rev", "start_seq", "next_seq"):
        check_count(head.get(key), [root, key])
    if head["start_seq"] > head["next_seq"]:
        raise ShapeError([root, "start_seq"], f"({head['start_seq']}) is after next_seq ({head['next_seq']})")
    if "cursor" not in head:
        raise ShapeError([root, "cursor"], "is missing")
    check_cursor(head["cursor"], [root, "cursor"])
    if "metrics" not in head:
        raise ShapeError([root, "metrics"], "is missing")
    head["metrics"] = check_metrics(head["metrics"], f"{root}.metrics")
    for key in ("model_state", "state", "conversation_manager_state", "interrupt_state", "manifest", "compensation"):
        if head.get(key) is not None and type(head[key]) is not dict:
            raise ShapeError([root, key], f"must be an object, got {type(head[key]).__name__}")
    check_manager_state(head.get("conversation_manager_state") or {}, [root, "conversation_manager_state"])
    interrupts = head.get("interrupt_state") or {}
    check_interrupt_state(interrupts, [root, "interrupt_state"])
    if interrupts.get("metrics") is not None:
        check_metrics(interrupts["metrics"], f"{root}.interrupt_state.metrics")
    if interrupts.get("output_tool") is not None and type(interrupts["output_tool"]) is not str:
        raise ShapeError([root, "interrupt_state", "output_tool"], "must be a tool name (a string) or null")
    if head.get("system_prompt") is not None:
        validate_system_prompt(head["system_prompt"], [root, "system_prompt"])
    if head.get("status") is not None and head["status"] not in STATUSES:
        raise ShapeError([root, "status"], f"must be one of {', '.join(STATUSES)}, got {head['status']!r:.60}")
    for key in ("turns", "steps"):
        if key in head:
            check_count(head[key], [root, key])
    for key in ("created_at", "updated_at"):
        if head.get(key) is not None and type(head[key]) is not str:
            raise ShapeError([root, key], f"must be a timestamp string, got {type(head[key]).__name__}")
    parent = head.get("parent_run_id")
    if parent is not None and (type(parent) is not str or not RUN_ID_PATTERN.fullmatch(parent)):
        raise ShapeError([root, "parent_run_id"], f"must be a run id or null, got {parent!r:.60}")
    for key in (INCARNATION, PARENT_INCARNATION):
        value = head.get(key)
        if value is not None and (type(value) is not str or not INCARNATION_PATTERN.fullmatch(value)):
            raise ShapeError([root, key], f"must be an incarnation (1-64 characters from A-Z a-z 0-9 _ -) or null, got {value!r:.60}")
    return head


def _optional(row: dict[str, Any], key: str, kind: type, what: str) -> Any:
    """``row[key]`` if it is None/missing or of ``kind``, else ShapeError."""
    value = row.get(key)
    if value is not None and type(value) is not kind:
        raise ShapeError(["step", key], f"must be {what} or null, got {type(value).__name__}")
    return value


def _number(value: Any) -> bool:
    return type(value) in (int, float)


def check_step(row: Any, number: int) -> Step:
    """The :class:`Step` of a step row, every field checked (ShapeError naming it otherwise)."""
    if type(row) is not dict:
        raise ShapeError(["step"], f"must be an object, got {type(row).__name__}")
    if row.get("step") != number or type(row.get("step")) is not int:
        raise ShapeError(["step", "step"], f"is {row.get('step')!r:.60}, not the row's step number {number}")
    if row.get("position") not in STEP_POSITIONS:
        raise ShapeError(["step", "position"], f"must be one of {', '.join(STEP_POSITIONS)}")
    counts = {key: check_count(row.get(key), ["step", key]) for key in ("cycle_index", "seq", "message_count")}
    if type(row.get("created_at")) is not str:
        raise ShapeError(["step", "created_at"], "must be a timestamp string")
    status = row.get("status") or "running"
    if status not in STATUSES:
        raise ShapeError(["step", "status"], f"must be one of {', '.join(STATUSES)}")
    model = _optional(row, "model", dict, "an object")
    if model is not None and not all(_number(figure) for figure in model.values()):
        raise ShapeError(["step", "model"], "must map figures to numbers")
    lists: dict[str, list[Any]] = {}
    for key in ("tools", "in_doubt", "results"):
        lists[key] = _optional(row, key, list, "a list") or []
    if not all(type(call) is dict and (call.get("duration_ms") is None or _number(call["duration_ms"])) for call in lists["tools"]):
        raise ShapeError(["step", "tools"], "must be a list of {toolUseId, name, error, duration_ms, in_doubt} objects")
    if not all(type(marker) is dict for marker in lists["in_doubt"]):
        raise ShapeError(["step", "in_doubt"], "must be a list of objects")
    if not all(type(ident) is str for ident in lists["results"]):
        raise ShapeError(["step", "results"], "must be a list of tool-use ids")
    if "head" not in row:
        raise ShapeError(["step", "head"], "is missing")
    return Step(
        step=number,
        position=row["position"],
        cycle_index=counts["cycle_index"],
        seq=counts["seq"],
        message_count=counts["message_count"],
        created_at=row["created_at"],
        status=status,
        stop_reason=_optional(row, "stop_reason", str, "a string"),
        model=model,
        tools=lists["tools"],
        in_doubt=lists["in_doubt"],
        results=lists["results"],
        forked_from=_optional(row, "forked_from", dict, "an object"),
        head=check_head(row["head"], "step.head"),
        verdict=_optional(row, "verdict", dict, "an object"),
        undo=_optional(row, "undo", dict, "an object"),
    )


def check_open_cycle(run_id: str, cursor: dict[str, Any], messages: list[Message], results: dict[str, ToolResult]) -> None:
    """In the tools phase every result row must answer a tool call of the last live message.

    A foreign row would otherwise count toward "every call answered" and close the cycle
    with a result the model never asked for.
    """
    if not results or cursor["phase"] != "tools":
        return
    last = messages[-1] if messages else None
    uses = {use["toolUseId"] for use in tool_uses_of(last)} if last is not None and last["role"] == "assistant" else set()
    for tool_use_id in results:
        if tool_use_id not in uses:
            where = f"results cycle {cursor['cycle_index']} toolUseId {tool_use_id!r}"
            raise damaged(run_id, where, "the result answers no tool call of the open cycle (the last live message)")
