"""The sans-I/O loop core, its effects and state, and the local asyncio driver."""

from .core import CoreConfig, LoopCore, ModelOutcome
from .driver import AgentEvent, DriverOptions, LocalDriver
from .effects import CallModel, Effect, Pause, RunTools, Stop
from .policies import Limits, RetryPolicy
from .state import CHECKPOINT_POSITIONS, CheckpointPosition, Cursor, RunState

__all__ = [
    "CHECKPOINT_POSITIONS",
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
    "CheckpointPosition",
    "RetryPolicy",
    "RunState",
    "RunTools",
    "Stop",
]
