"""Deterministic ids of nested runs: moved to :mod:`tether.durable.ids` (run ids are the durable
layer's); these names stay importable from here."""

from __future__ import annotations

from ..durable.adoption import adopt_child
from ..durable.ids import child_run_id

__all__ = ["adopt_child", "child_run_id"]
