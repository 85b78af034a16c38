"""Snapshots of an agent: take its run as a :class:`~tether.snapshot.Snapshot`, load one into it.

:class:`AgentSnapshots` is a part of :class:`~tether.Agent` (which supplies the run state, the
conversation manager, the manifest and migrations a snapshot with pending work is judged by).
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterable
from typing import Any

import pydantic

from . import agent_config
from ._capture import load, take
from .conversation import ConversationManager
from .errors import SnapshotError
from .loop.state import RunState
from .manifest import Migrations, ResumeCheck, pending_calls
from .snapshot import Snapshot, resolve_fields


class AgentSnapshots:
    """``take_snapshot`` and ``load_snapshot`` (as in Strands)."""

    run_state: RunState
    conversation_manager: ConversationManager
    migrations: Migrations
    _busy: threading.Lock

    def manifest(self, output_model: type[pydantic.BaseModel] | None = None) -> dict[str, Any]:
        """The agent's run manifest (the agent's)."""
        raise NotImplementedError

    def take_snapshot(
        self,
        *,
        preset: str | None = None,
        include: Iterable[str] | None = None,
        exclude: Iterable[str] | None = None,
        app_data: dict[str, Any] | None = None,
    ) -> Snapshot:
        """Capture the selected fields as a :class:`Snapshot` (independent of the agent).

        As in Strands, ``preset`` is the base, ``include`` adds and ``exclude`` removes; a
        selection with no field (no ``preset`` nor ``include``) raises :class:`SnapshotError`.

        Args:
            preset: ``"session"`` (every field but the system prompt) or ``"all"``.
            include: Fields to add.
            exclude: Fields to remove.
            app_data: The application's own JSON, stored verbatim.
        """
        return take(self.run_state, self.conversation_manager, resolve_fields(preset, include, exclude), app_data)

    def load_snapshot(self, snapshot: Snapshot | dict[str, Any], *, allow: Iterable[str] | None = None) -> None:
        """Apply a snapshot: fields present in it replace the agent's, absent ones are kept.

        Its version and scope are validated first (``SnapshotError``). A snapshot dict, and
        any object with a ``to_dict()`` giving one (a Strands ``Snapshot``), is read with
        :meth:`Snapshot.from_dict`. A snapshot with pending work (taken at an interrupt) is
        judged against this agent's manifest first (:mod:`tether.manifest`): an incompatible
        change raises :class:`~tether.errors.IncompatibleResumeError` and the agent is unchanged.

        Args:
            snapshot: The snapshot (a :class:`Snapshot`, its dict, a Strands ``Snapshot``, or Strands TypeScript's document).
            allow: Incompatible differences to accept, by name or code.
        """
        snapshot = agent_config.snapshot_argument(snapshot)
        if self._busy.locked():
            raise SnapshotError("cannot load a snapshot while the agent is running an invocation")
        loaded = dataclasses.replace(self.run_state)  # a scratch run: the agent changes only if all is well
        load(loaded, self.conversation_manager, snapshot)
        if pending_calls(loaded):
            check = ResumeCheck(self.manifest(), self.migrations, frozenset(allow or ()))
            check.settle(loaded, loaded.interrupt_state.get("manifest"), what="the snapshot")
            if "manifest" in loaded.interrupt_state:
                loaded.interrupt_state["manifest"] = check.manifest
        for item in dataclasses.fields(RunState):
            setattr(self.run_state, item.name, getattr(loaded, item.name))


__all__ = ["AgentSnapshots"]
