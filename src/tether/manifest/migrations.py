"""`Migrations`: what an agent's new code says about the pending calls of runs started by its old code.

Registered on the agent (``agent.migrations``) next to the change they cover::

    agent.migrations.rename_tool("lookup", "search")          # calls of "lookup" now go to "search"
    agent.migrations.tool_input("search", lambda old: {**old, "limit": 10})  # reshape pending inputs

A resume applies them to the run's *pending* calls only (calls of the open cycle with no result
recorded, in-doubt ones included): recorded history is never rewritten. An input migration runs
for a pending call of a tool whose schema changed since the run's manifest (or that it was
renamed into), so it runs once per call however often the run is resumed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import ConfigurationError

InputMigration = Callable[[dict[str, Any]], dict[str, Any]]
"""Turns a pending call's old input (a dict) into the input the new tool takes."""


class Migrations:
    """The migrations an agent's code registers for runs in flight (see the module docstring)."""

    def __init__(self) -> None:
        self._renames: dict[str, str] = {}
        self._inputs: dict[str, InputMigration] = {}

    def rename_tool(self, old: str, new: str) -> Migrations:
        """Pending calls of tool ``old`` go to tool ``new`` (returns the migrations, to chain).

        Args:
            old: The tool's name in the run's manifest.
            new: The name of the tool that now does its job.
        """
        for what, name in (("old", old), ("new", new)):
            if not isinstance(name, str) or not name:
                raise ConfigurationError(f"migrations.rename_tool: {what} must be a tool name, got {name!r}")
        if old == new:
            raise ConfigurationError(f"migrations.rename_tool({old!r}, {new!r}) renames a tool to itself")
        if old in self._renames and self._renames[old] != new:
            raise ConfigurationError(f"migrations.rename_tool: {old!r} is already renamed to {self._renames[old]!r}")
        self._renames[old] = new
        return self

    def tool_input(self, name: str, migrate: InputMigration) -> Migrations:
        """Reshape the input of pending calls of tool ``name`` (its new name, after a rename).

        Args:
            name: The tool (as the agent names it now).
            migrate: Takes a pending call's input dict and returns the new one (a pure function).
        """
        if not isinstance(name, str) or not name:
            raise ConfigurationError(f"migrations.tool_input: name must be a tool name, got {name!r}")
        if not callable(migrate):
            raise ConfigurationError(f"migrations.tool_input({name!r}, ...): the migration must be callable")
        self._inputs[name] = migrate
        return self

    def renamed(self, name: str) -> str | None:
        """The tool a pending call of ``name`` goes to now, if renamed (renames chain)."""
        seen = {name}
        target = self._renames.get(name)
        while target is not None and target in self._renames and self._renames[target] not in seen:
            seen.add(target)
            target = self._renames[target]
        return target

    def input_migration(self, name: str) -> InputMigration | None:
        """The input migration of tool ``name``, if one is registered."""
        return self._inputs.get(name)

    def __bool__(self) -> bool:
        return bool(self._renames or self._inputs)

    def __repr__(self) -> str:
        return f"Migrations(renames={self._renames!r}, inputs={sorted(self._inputs)!r})"


__all__ = ["InputMigration", "Migrations"]
