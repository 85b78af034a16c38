"""Replay with override, for tests: the engine is :mod:`tether.durable.replay` (what
``agent.replay`` runs); its names are re-exported here so ``tether.testing.replay`` keeps working."""

from __future__ import annotations

from ..durable.replay import divergence, replay_run

__all__ = ["divergence", "replay_run"]
