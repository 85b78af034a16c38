"""Checkpoints: a self-contained pause point at a cycle boundary, as JSON.

``position`` is ``after_model`` (the model asked for tools; none has run) or ``after_tools``
(the cycle's tools are done; the next model call is pending). ``snapshot`` is a full snapshot
dict, so a fresh agent with the same tools resumes from the checkpoint alone; ``metrics`` carries
the run's accumulated metrics so they keep adding up across processes. Callers treat the dict
as opaque and pass it back in a ``checkpointResume`` block.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ._json import copy_json
from .errors import CheckpointError, SnapshotError
from .loop.state import POSITIONS, Position, new_metrics
from .snapshot import Snapshot, migrate, to_json_copy

CHECKPOINT_SCHEMA_VERSION = 1

_METRIC_KEYS = ("cycle_count", "tool_call_count", "model_call_count", "usage", "model_latency_ms", "tools")


@dataclass
class Checkpoint:
    """A pause point; see the module docstring."""

    position: Position
    cycle_index: int
    snapshot: dict[str, Any]
    app_data: dict[str, Any] = field(default_factory=dict)
    metrics: dict[str, Any] = field(default_factory=new_metrics)
    schema_version: int = CHECKPOINT_SCHEMA_VERSION

    def to_dict(self) -> dict[str, Any]:
        """A pure-JSON dict, independent of this checkpoint."""
        return {
            "schema_version": self.schema_version,
            "position": self.position,
            "cycle_index": self.cycle_index,
            "snapshot": copy_json(self.snapshot),
            "app_data": copy_json(self.app_data),
            "metrics": copy_json(self.metrics),
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str | bytes) -> Checkpoint:
        try:
            value = json.loads(text)
        except (ValueError, UnicodeDecodeError) as exc:
            raise CheckpointError(f"checkpoint is not valid JSON: {exc}") from None
        return cls.from_dict(value)

    @classmethod
    def from_dict(cls, value: Any) -> Checkpoint:
        """Validate a checkpoint dict; problems raise ``CheckpointError`` naming the field."""
        if not isinstance(value, dict):
            raise CheckpointError(f"checkpoint must be an object, got {type(value).__name__}")
        value = migrate(value, target=CHECKPOINT_SCHEMA_VERSION, migrations=CHECKPOINT_MIGRATIONS, what="checkpoint", error=CheckpointError)
        position = value.get("position")
        if position not in POSITIONS:
            raise CheckpointError(f"checkpoint.position must be one of {', '.join(POSITIONS)}, got {position!r}")
        cycle_index = value.get("cycle_index")
        if not isinstance(cycle_index, int) or isinstance(cycle_index, bool) or cycle_index < 0:
            raise CheckpointError(f"checkpoint.cycle_index must be a non-negative integer, got {cycle_index!r}")
        try:
            snapshot = Snapshot.from_dict(value.get("snapshot"), path="checkpoint.snapshot")
        except SnapshotError as exc:
            raise CheckpointError(str(exc)) from None
        if "messages" not in snapshot.data:
            raise CheckpointError("checkpoint.snapshot.data.messages is missing; a checkpoint needs the messages")
        app_data = value.get("app_data") or {}
        if not isinstance(app_data, dict):
            raise CheckpointError("checkpoint.app_data must be an object")
        metrics = value.get("metrics") or new_metrics()
        if not isinstance(metrics, dict) or any(key not in metrics for key in _METRIC_KEYS):
            raise CheckpointError("checkpoint.metrics must be an object with the run's metrics")
        extra = set(value) - {"schema_version", "position", "cycle_index", "snapshot", "app_data", "metrics"}
        if extra:
            raise CheckpointError(f"checkpoint.{sorted(extra)[0]} is not a checkpoint key")
        try:
            app_copy = to_json_copy(app_data, "checkpoint.app_data")
            metrics_copy = to_json_copy(metrics, "checkpoint.metrics")
        except SnapshotError as exc:
            raise CheckpointError(str(exc)) from None
        return cls(
            position=position,
            cycle_index=cycle_index,
            snapshot=snapshot.to_dict(),
            app_data=app_copy,
            metrics=metrics_copy,
        )


CHECKPOINT_MIGRATIONS: dict[int, Any] = {}
"""``CHECKPOINT_MIGRATIONS[v]`` upgrades a checkpoint dict from schema ``v`` to ``v + 1``."""

__all__ = ["CHECKPOINT_SCHEMA_VERSION", "Checkpoint"]
