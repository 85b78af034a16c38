"""Strands' `strands.types._snapshot`: the agent snapshot (Tether's reads and writes Strands' JSON)."""

from __future__ import annotations

from typing import Literal, TypeAlias

from ...snapshot import SNAPSHOT_SCHEMA_VERSION, Snapshot

SnapshotField: TypeAlias = Literal["messages", "state", "conversation_manager_state", "interrupt_state", "system_prompt", "model_state"]
SnapshotPreset: TypeAlias = Literal["session"]
Scope: TypeAlias = Literal["agent", "multiAgent"]

__all__ = ["SNAPSHOT_SCHEMA_VERSION", "Scope", "Snapshot", "SnapshotField", "SnapshotPreset"]
