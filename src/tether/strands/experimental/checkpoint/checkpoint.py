"""Strands' `strands.experimental.checkpoint.checkpoint` module path (see the package)."""

from . import CHECKPOINT_SCHEMA_VERSION, Checkpoint, CheckpointPosition

__all__ = ["CHECKPOINT_SCHEMA_VERSION", "Checkpoint", "CheckpointPosition"]
