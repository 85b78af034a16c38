"""Strands Agents' public API on Tether's core: change ``strands`` to ``tether.strands`` in a
program's imports and it runs on Tether, with its session manager turned into a durable run.

A facade and adapters only: every run is Tether's loop (:mod:`tether.loop`), no second loop
lives here. Importing this package imports no provider SDK and not ``strands-agents`` itself.
See ``docs/guides/from-strands.md`` for what changes and what you gain.
"""

from . import agent, models, types
from .agent.agent import Agent
from .tools import ToolContext, tool
from .types._snapshot import Snapshot

__all__ = ["Agent", "Snapshot", "ToolContext", "agent", "models", "tool", "types"]
