"""Strands' `strands.experimental.checkpoint` on Tether's checkpoints (:mod:`tether.checkpoint`).

A Tether :class:`~tether.checkpoint.Checkpoint` reads and writes Strands' checkpoint JSON
(``to_dict``/``from_dict``); an agent built with ``checkpointing=True`` stops with
``stop_reason == "checkpoint"`` and ``result.checkpoint``, and a ``checkpointResume`` block
continues it, in any process.
"""

from ....checkpoint import CHECKPOINT_SCHEMA_VERSION, Checkpoint
from ....loop.state import CheckpointPosition

__all__ = ["CHECKPOINT_SCHEMA_VERSION", "Checkpoint", "CheckpointPosition"]
