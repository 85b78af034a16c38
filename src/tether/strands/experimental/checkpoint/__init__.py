"""Strands' `strands.experimental.checkpoint` on Tether's checkpoints (:mod:`tether.checkpoint`).

An agent built with ``checkpointing=True`` stops with ``stop_reason == "checkpoint"`` and
``result.checkpoint`` (a :class:`~.checkpoint.Checkpoint`, whose ``to_dict`` is Strands' marker
dict), and a ``checkpointResume`` block continues it from the agent's state, as in Strands.
"""

from .checkpoint import CHECKPOINT_SCHEMA_VERSION, Checkpoint, CheckpointPosition

__all__ = ["CHECKPOINT_SCHEMA_VERSION", "Checkpoint", "CheckpointPosition"]
