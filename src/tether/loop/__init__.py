"""The sans-I/O loop core (state, effects, core) and its driver half (host, driver, one model
call, one tool call, tracing seam). Nothing here imports the agent facade or the turn protocol."""

from .core import CoreConfig, LoopCore, ModelOutcome
from .driver import DriverOptions, LocalDriver, LoopEvent
from .effects import CallModel, CloseCycle, Effect, Pause, RunTools, Stop
from .host import Host, LoopHost
from .policies import Limits, RetryPolicy
from .state import CHECKPOINT_POSITIONS, CheckpointPosition, Cursor, RunState
from .tracing import NULL_TRACER, Span, Tracer

__all__ = [
    "CHECKPOINT_POSITIONS",
    "NULL_TRACER",
    "LoopEvent",
    "CallModel",
    "CloseCycle",
    "CoreConfig",
    "Cursor",
    "DriverOptions",
    "Effect",
    "Host",
    "Limits",
    "LocalDriver",
    "LoopHost",
    "LoopCore",
    "ModelOutcome",
    "Pause",
    "CheckpointPosition",
    "RetryPolicy",
    "RunState",
    "RunTools",
    "Span",
    "Stop",
    "Tracer",
]
