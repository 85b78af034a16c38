"""Checkpoints: a self-contained pause point at a cycle boundary, as JSON.

``position`` is ``after_model`` (the model asked for tools; none has run) or ``after_tools``
(the cycle's tools are done; the next model call is pending). ``cycle_index`` is the 0-based
ReAct cycle the checkpoint belongs to. ``snapshot`` is a full snapshot dict (every field,
``model_state`` included), so a fresh agent with the same tools resumes from the checkpoint
alone. ``metrics`` carries the run's accumulated metrics so they keep adding up across
processes; ``output_tool`` names the structured-output tool of the paused call, so a resume
without the same ``output_model`` is refused instead of silently losing the structured output.

The shape is Strands' (``strands.experimental.checkpoint``): ``schema_version`` ``"1.0"``,
``position``, ``cycle_index`` (default 0), ``snapshot`` and ``app_data`` (default ``{}``);
``metrics``, ``output_tool``, ``trace`` and ``manifest`` are Tether's, and a Strands reader
ignores them (``trace``, written only when tracing was on, holds the ids of the invocation span
that paused, so the invocation that resumes links to it; ``manifest``, the run manifest of the
agent that paused (see :mod:`tether.manifest`), is judged against the resuming agent's). A checkpoint
with an empty ``snapshot`` (what Strands 1.62 writes: a marker whose state lives in a session)
resumes from the agent's current state. Keys this Tether does not know are ignored with a
logged warning, so a newer writer may add fields.

Callers treat the dict as opaque and pass it back in a ``checkpointResume`` block: the snapshot
inside is validated only then.
"""

from __future__ import annotations

import json
import logging
import math
from typing import Any, Literal

from ._json import brief, checked_json_copy, json_roundtrip_copy, parse_json
from .errors import CheckpointError, ShapeError, SnapshotError
from .loop.state import CHECKPOINT_POSITIONS, CheckpointPosition, new_metrics, trace_ids
from .snapshot import Migration, Snapshot, migrate
from .snapshot.migrations import LEGACY_SCHEMA_VERSION, SchemaVersion
from .types import MetricsData, SpendData, ToolFigures

CHECKPOINT_SCHEMA_VERSION = "1.0"
"""The checkpoint schema version this Tether writes (the one Strands writes)."""
CHECKPOINT_VERSIONS: tuple[SchemaVersion, ...] = (LEGACY_SCHEMA_VERSION, CHECKPOINT_SCHEMA_VERSION)
"""Every released checkpoint schema version, oldest first (``1``: Tether's first release)."""

_KEYS = frozenset({"schema_version", "position", "cycle_index", "snapshot", "app_data", "metrics", "output_tool", "trace", "manifest"})
_COUNTS: tuple[Literal["cycle_count", "tool_call_count", "model_call_count"], ...] = ("cycle_count", "tool_call_count", "model_call_count")
_USAGE: tuple[Literal["input_tokens", "output_tokens", "total_tokens"], ...] = ("input_tokens", "output_tokens", "total_tokens")

logger = logging.getLogger(__name__)


class Checkpoint:
    """A pause point; see the module docstring.

    ``snapshot`` may be given as a dict or as a :class:`Snapshot`; it is turned into a dict
    only when read, so a checkpoint that goes straight to ``to_dict`` (the usual path) is
    copied once.
    """

    __slots__ = (
        "_snapshot",
        "_snapshot_dict",
        "app_data",
        "cycle_index",
        "manifest",
        "metrics",
        "output_tool",
        "position",
        "schema_version",
        "trace",
    )

    def __init__(
        self,
        position: CheckpointPosition,
        cycle_index: int = 0,
        snapshot: dict[str, Any] | Snapshot | None = None,
        app_data: dict[str, Any] | None = None,
        metrics: MetricsData | None = None,
        output_tool: str | None = None,
        schema_version: SchemaVersion = CHECKPOINT_SCHEMA_VERSION,
        trace: dict[str, str] | None = None,
        manifest: dict[str, Any] | None = None,
    ) -> None:
        """A checkpoint (not validated: it is validated when resumed).

        Args:
            position: ``after_model`` or ``after_tools``.
            cycle_index: The 0-based cycle it belongs to.
            snapshot: The run's snapshot (dict or :class:`Snapshot`); ``{}`` resumes from the
                agent's current state.
            app_data: The application's own JSON.
            metrics: The run's accumulated metrics at the pause.
            output_tool: The structured-output tool of the paused call, if any.
            schema_version: The document's schema version.
            trace: The ids (``trace_id``, ``span_id``) of the invocation span that paused,
                when tracing was on (the resumed invocation's span links to it).
            manifest: The run manifest of the agent that paused (see :mod:`tether.manifest`).
        """
        self.position: CheckpointPosition = position
        self.cycle_index = cycle_index
        self._snapshot: Snapshot | None = snapshot if isinstance(snapshot, Snapshot) else None
        self._snapshot_dict: dict[str, Any] | None = None if isinstance(snapshot, Snapshot) else ({} if snapshot is None else snapshot)
        self.app_data: dict[str, Any] = {} if app_data is None else app_data
        self.metrics: MetricsData = new_metrics() if metrics is None else metrics
        self.output_tool = output_tool
        self.schema_version = schema_version
        self.trace = trace
        self.manifest = manifest

    @property
    def snapshot(self) -> dict[str, Any]:
        """The run's snapshot as a dict (a live dict: changes to it are part of this checkpoint)."""
        if self._snapshot_dict is None:
            assert self._snapshot is not None
            self._snapshot_dict = self._snapshot.to_dict()
            self._snapshot = None
        return self._snapshot_dict

    @snapshot.setter
    def snapshot(self, value: dict[str, Any]) -> None:
        self._snapshot_dict = value
        self._snapshot = None

    def snapshot_object(self) -> Snapshot:
        """The snapshot as a validated :class:`Snapshot` (e.g. for ``Agent.load_snapshot``)."""
        if self._snapshot is not None:
            return self._snapshot
        try:
            return Snapshot.from_dict(self.snapshot, path="checkpoint.snapshot")
        except SnapshotError as exc:
            raise CheckpointError(str(exc)) from None

    @property
    def messages(self) -> list[Any]:
        """The conversation at the checkpoint (a new list over the snapshot's messages; empty
        when the snapshot has none)."""
        data = self.snapshot.get("data")
        messages = data.get("messages") if isinstance(data, dict) else None
        return list(messages) if isinstance(messages, list) else []

    def to_dict(self) -> dict[str, Any]:
        """A pure-JSON dict, independent of this checkpoint (``CheckpointError`` if a field is not JSON)."""
        try:
            if self._snapshot is not None:
                snapshot = self._snapshot.to_dict()
            else:
                snapshot = json_roundtrip_copy(self._snapshot_dict, "checkpoint.snapshot")
            app_data = json_roundtrip_copy(self.app_data, "checkpoint.app_data")
            metrics = json_roundtrip_copy(self.metrics, "checkpoint.metrics")
        except ShapeError as exc:
            raise CheckpointError(str(exc)) from None
        data = {
            "schema_version": self.schema_version,
            "position": self.position,
            "cycle_index": self.cycle_index,
            "snapshot": snapshot,
            "app_data": app_data,
            "metrics": metrics,
            "output_tool": self.output_tool,
        }
        if self.trace is not None:
            data["trace"] = dict(self.trace)
        if self.manifest is not None:
            data["manifest"] = json_roundtrip_copy(self.manifest, "checkpoint.manifest")
        return data

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Checkpoint):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Checkpoint(position={self.position!r}, cycle_index={self.cycle_index}, schema_version={self.schema_version!r})"

    def to_json(self) -> str:
        """The checkpoint as JSON text (see :meth:`to_dict`)."""
        return json.dumps(self.to_dict(), ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str | bytes) -> Checkpoint:
        """Parse JSON text and read it with :meth:`from_dict`."""
        try:
            value = parse_json(text)
        except ValueError as exc:  # UnicodeDecodeError too
            raise CheckpointError(f"checkpoint is not valid JSON: {exc}") from None
        return cls.from_dict(value)

    @classmethod
    def from_dict(cls, value: Any) -> Checkpoint:
        """Validate and copy a checkpoint dict; problems raise ``CheckpointError`` naming the field.

        The header is checked here; the snapshot is kept as given (a copy) and validated when
        the checkpoint is resumed, as in Strands. Unknown keys are ignored with a warning.

        Args:
            value: The dict (``Checkpoint.to_dict()`` of Tether or Strands).
        """
        value = _migrated(value)
        snapshot = value.get("snapshot", {})
        if not isinstance(snapshot, dict):
            raise CheckpointError(f"checkpoint.snapshot must be an object, got {type(snapshot).__name__}")
        try:
            snapshot_copy = checked_json_copy(snapshot, "checkpoint.snapshot")
        except ShapeError as exc:
            raise CheckpointError(str(exc)) from None
        return cls(snapshot=snapshot_copy, **_header(value))


def parse(value: Any) -> tuple[dict[str, Any], Snapshot]:
    """Validate a checkpoint dict that must carry its snapshot: its header fields (copied) and
    its validated :class:`Snapshot` (see :func:`parse_resumable`)."""
    header, snapshot = parse_resumable(value)
    if snapshot is None:
        raise CheckpointError("checkpoint.snapshot is missing; a checkpoint carries the snapshot of the run")
    return header, snapshot


def parse_resumable(value: Any) -> tuple[dict[str, Any], Snapshot | None]:
    """Validate a checkpoint dict for resuming: its header fields (copied) and its snapshot.

    The snapshot is a validated :class:`Snapshot`, or None when the checkpoint carries none
    (an empty ``snapshot``, as Strands 1.62 writes: resume from the agent's current state).
    The resume path loads the ``Snapshot`` directly, sparing the extra copy ``from_dict``
    makes. Every problem is a :class:`CheckpointError` naming the field.
    """
    value = _migrated(value)
    header = _header(value)
    raw = value.get("snapshot", {})
    if isinstance(raw, dict) and not raw:
        return header, None
    try:
        snapshot = Snapshot.from_dict(raw, path="checkpoint.snapshot")
    except SnapshotError as exc:
        raise CheckpointError(str(exc)) from None
    # Snapshot.from_dict validated the input's data; read the messages there instead of
    # thawing the snapshot's copy.
    messages = raw["data"].get("messages")
    if messages is None:
        raise CheckpointError("checkpoint.snapshot.data.messages is missing; a checkpoint needs the messages")
    check_position(header["position"], messages)
    return header, snapshot


def _migrated(value: Any) -> dict[str, Any]:
    """``value`` at the current schema version, with unknown keys reported."""
    if not isinstance(value, dict):
        raise CheckpointError(f"checkpoint must be an object, got {type(value).__name__}")
    try:
        value = migrate(
            value, target=CHECKPOINT_SCHEMA_VERSION, versions=CHECKPOINT_VERSIONS, migrations=CHECKPOINT_MIGRATIONS, what="checkpoint"
        )
    except SnapshotError as exc:
        raise CheckpointError(str(exc)) from None
    if not _KEYS.issuperset(value):
        extra = sorted(str(key) for key in value if key not in _KEYS)
        logger.warning("unknown_keys=<%s> | ignoring unknown fields in checkpoint data", extra)
    result: dict[str, Any] = value
    return result


def _header(value: dict[str, Any]) -> dict[str, Any]:
    """The checked, copied header fields of a checkpoint dict (``Checkpoint`` keyword arguments)."""
    position = value.get("position")
    if position not in CHECKPOINT_POSITIONS:
        raise CheckpointError(f"checkpoint.position must be one of {', '.join(CHECKPOINT_POSITIONS)}, got {brief(position)}")
    cycle_index = value.get("cycle_index", 0)
    if not isinstance(cycle_index, int) or isinstance(cycle_index, bool) or cycle_index < 0:
        raise CheckpointError(f"checkpoint.cycle_index must be a non-negative integer, got {brief(cycle_index)}")
    app_data = value.get("app_data")
    if app_data is None:
        app_data = {}
    if not isinstance(app_data, dict):
        raise CheckpointError(f"checkpoint.app_data must be an object, got {type(app_data).__name__}")
    metrics = value.get("metrics")
    output_tool = value.get("output_tool")
    if output_tool is not None and (not isinstance(output_tool, str) or not output_tool):
        raise CheckpointError(f"checkpoint.output_tool must be a tool name or null, got {brief(output_tool)}")
    manifest = value.get("manifest")
    if manifest is not None and not isinstance(manifest, dict):
        raise CheckpointError(f"checkpoint.manifest must be an object or null, got {type(manifest).__name__}")
    try:
        return {
            "position": position,
            "cycle_index": cycle_index,
            "app_data": checked_json_copy(app_data, "checkpoint.app_data"),
            "metrics": new_metrics() if metrics is None else check_metrics(metrics),
            "output_tool": output_tool,
            "trace": trace_ids(value.get("trace")),
            "manifest": None if manifest is None else checked_json_copy(manifest, "checkpoint.manifest"),
        }
    except ShapeError as exc:
        raise CheckpointError(str(exc)) from None


def check_position(position: str, messages: list[Any], where: str = "checkpoint.snapshot.data.messages") -> None:
    """Raise :class:`CheckpointError` unless the conversation ends where ``position`` says the
    run stopped (``where`` names the messages in the error)."""
    last = messages[-1] if messages else None
    if position == "after_model":
        if last is None or last["role"] != "assistant" or not any("toolUse" in block for block in last["content"]):
            raise CheckpointError(f"{where} must end with an assistant message calling tools at position after_model")
    elif last is None or last["role"] != "user" or not any("toolResult" in block for block in last["content"]):
        raise CheckpointError(f"{where} must end with a user message of tool results at position after_tools")


def check_metrics(value: Any, where: str = "checkpoint.metrics") -> MetricsData:
    """A validated copy of accumulated metrics, so resumed runs can keep adding to them.

    Raises :class:`~tether.errors.ShapeError` naming the bad field under ``where``; callers
    convert it to the error of their context (a checkpoint's is :class:`CheckpointError`).
    """
    if not isinstance(value, dict):
        raise _bad([where], f"must be an object, got {type(value).__name__}")
    out = new_metrics()
    for key in _COUNTS:
        item = value.get(key, 0)
        if not isinstance(item, int) or isinstance(item, bool) or item < 0:
            raise _bad([where, key], f"must be a non-negative integer, got {brief(item)}")
        out[key] = item
    latency = value.get("model_latency_ms", 0.0)
    if not _non_negative_number(latency):
        raise _bad([where, "model_latency_ms"], f"must be a non-negative number, got {brief(latency)}")
    out["model_latency_ms"] = float(latency)
    usage = value.get("usage", {})
    if not isinstance(usage, dict):
        raise _bad([where, "usage"], "must be an object")
    for part in _USAGE:
        item = usage.get(part, 0)
        if not isinstance(item, int) or isinstance(item, bool) or item < 0:
            raise _bad([where, "usage", part], f"must be a non-negative integer, got {brief(item)}")
        out["usage"][part] = item
    tools = value.get("tools", {})
    if not isinstance(tools, dict):
        raise _bad([where, "tools"], "must be an object")
    for name, figures in tools.items():
        out["tools"][name] = _tool_figures(figures, [where, "tools", name])
    spend = value.get("spend")
    if spend is not None:
        out["spend"] = _spend_figures(spend, [where, "spend"])
    return out


def _spend_figures(spend: Any, at: list[Any]) -> SpendData:
    """The checked copy of a run's budget spend figures (see :mod:`tether.budget.spend`)."""
    if not isinstance(spend, dict):
        raise _bad(at, "must be an object")
    cost, wall, nested = spend.get("cost_usd", 0.0), spend.get("wall_s", 0.0), spend.get("nested_tool_calls", 0)
    for name, number in (("cost_usd", cost), ("wall_s", wall)):
        if not _non_negative_number(number):
            raise _bad(at + [name], f"must be a non-negative number, got {brief(number)}")
    if not isinstance(nested, int) or isinstance(nested, bool) or nested < 0:
        raise _bad(at + ["nested_tool_calls"], f"must be a non-negative integer, got {brief(nested)}")
    return {"cost_usd": float(cost), "wall_s": float(wall), "nested_tool_calls": nested}


def _tool_figures(figures: Any, at: list[Any]) -> ToolFigures:
    """The checked copy of one tool's accumulated figures."""
    if not isinstance(figures, dict):
        raise _bad(at, "must be an object")
    calls, errors, duration = figures.get("calls", 0), figures.get("errors", 0), figures.get("total_duration_ms", 0.0)
    if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in (calls, errors)):
        problem = "calls and errors must be non-negative integers"
        raise _bad(at, problem, message=f"{_dotted(at)}.calls and .errors must be non-negative integers")
    if not _non_negative_number(duration):
        raise _bad(at + ["total_duration_ms"], "must be a non-negative number")
    return {"calls": calls, "errors": errors, "total_duration_ms": float(duration)}


def _bad(path: list[Any], problem: str, *, message: str | None = None) -> ShapeError:
    """A metrics error, worded ``"<where>.<key> <problem>"`` as checkpoint errors always were."""
    return ShapeError(path, problem, message=f"{_dotted(path)} {problem}" if message is None else message)


def _dotted(path: list[Any]) -> str:
    return ".".join(map(str, path))


def _non_negative_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0


def _legacy_checkpoint(document: dict[str, Any]) -> dict[str, Any]:
    """Legacy ``1`` -> ``"1.0"``: the same fields (the snapshot inside migrates itself)."""
    return document


CHECKPOINT_MIGRATIONS: dict[SchemaVersion, Migration] = {LEGACY_SCHEMA_VERSION: _legacy_checkpoint}
"""``CHECKPOINT_MIGRATIONS[v]`` upgrades a checkpoint dict from version ``v`` to the next one (pure)."""

__all__ = [
    "CHECKPOINT_MIGRATIONS",
    "CHECKPOINT_SCHEMA_VERSION",
    "CHECKPOINT_VERSIONS",
    "Checkpoint",
    "check_metrics",
    "check_position",
    "parse",
    "parse_resumable",
]
