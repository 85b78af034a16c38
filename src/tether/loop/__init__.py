"""The sans-I/O loop core, its effects and state, and the local asyncio driver."""

from .core import CoreConfig, LoopCore, ModelOutcome
from .driver import AgentEvent, DriverOptions, LocalDriver
from .effects import CallModel, Effect, Pause, RunTools, Stop
from .policies import Limits, RetryPolicy
from .state import POSITIONS, Cursor, Position, RunState

__all__ = [
    "POSITIONS",
    "AgentEvent",
    "CallModel",
    "CoreConfig",
    "Cursor",
    "DriverOptions",
    "Effect",
    "Limits",
    "LocalDriver",
    "LoopCore",
    "ModelOutcome",
    "Pause",
    "Position",
    "RetryPolicy",
    "RunState",
    "RunTools",
    "Stop",
]
