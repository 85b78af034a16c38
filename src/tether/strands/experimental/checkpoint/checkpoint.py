"""Strands' `strands.experimental.checkpoint.checkpoint`: the checkpoint as Strands shows it.

Strands' checkpoint is a pause-point marker, ``{"position", "cycle_index", "schema_version"}``:
the state it pauses lives in the agent (and its session manager). Tether's
:class:`tether.checkpoint.Checkpoint` is self-contained (it carries the run's snapshot, metrics
and structured-output tool). The facade's :class:`Checkpoint` is Tether's class presenting
Strands' shape: ``to_dict`` gives Strands' three keys, so a Strands program stores and prints
what Strands stores and prints, and resuming it continues from the agent's current state
(checked against the position: a conversation that does not end where the checkpoint says is
refused), as in Strands. ``from_dict`` reads Strands' dict and Tether's (the snapshot kept,
``snapshot_object()`` gives it). Problems raise :class:`CheckpointException`.
"""

from __future__ import annotations

from typing import Any

from ....checkpoint import CHECKPOINT_SCHEMA_VERSION
from ....checkpoint import Checkpoint as _TetherCheckpoint
from ....errors import CheckpointError
from ....loop.state import CheckpointPosition
from ...types.exceptions import CheckpointException


class Checkpoint(_TetherCheckpoint):
    """A pause point; ``to_dict()`` is Strands' marker (see the module docstring)."""

    __slots__ = ()

    @classmethod
    def of(cls, checkpoint: _TetherCheckpoint) -> Checkpoint:
        """The Strands view of Tether's ``checkpoint`` (sharing its values)."""
        if isinstance(checkpoint, cls):
            return checkpoint
        view = cls(
            checkpoint.position,
            checkpoint.cycle_index,
            snapshot=checkpoint.snapshot,
            app_data=checkpoint.app_data,
            metrics=checkpoint.metrics,
            output_tool=checkpoint.output_tool,
            schema_version=checkpoint.schema_version,
            trace=checkpoint.trace,
        )
        return view

    def to_dict(self) -> dict[str, Any]:
        """Strands' serialized checkpoint: ``position``, ``cycle_index``, ``schema_version``."""
        return {"position": self.position, "cycle_index": self.cycle_index, "schema_version": self.schema_version}

    @classmethod
    def from_dict(cls, value: Any) -> Checkpoint:
        """Read a checkpoint dict (Strands' or Tether's ``to_dict``).

        Raises:
            CheckpointException: An incompatible ``schema_version`` or a malformed field (named).
        """
        try:
            checkpoint = _TetherCheckpoint.from_dict(value)
        except CheckpointError as exc:
            if isinstance(exc, CheckpointException):
                raise
            raise CheckpointException(str(exc)) from None
        return cls.of(checkpoint)

    @classmethod
    def from_json(cls, text: str | bytes) -> Checkpoint:
        """Parse JSON text and read it with :meth:`from_dict`.

        Raises:
            CheckpointException: Not JSON, or what :meth:`from_dict` refuses.
        """
        try:
            checkpoint = _TetherCheckpoint.from_json(text)
        except CheckpointError as exc:
            if isinstance(exc, CheckpointException):
                raise
            raise CheckpointException(str(exc)) from None
        return cls.of(checkpoint)


__all__ = ["CHECKPOINT_SCHEMA_VERSION", "Checkpoint", "CheckpointPosition"]
