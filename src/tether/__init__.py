"""Tether: model-driven AI agents whose runs are plain, versioned JSON.

The public API is re-exported here; everything else is importable but not promised.

Tether logs through ``logging.getLogger("tether")`` and its children (``tether.loop``,
``tether.durable``, ``tether.conversation``, ...): WARNING for retries with their wait and
attempt, INFO for lock waits, in-doubt decisions and conversation reductions, DEBUG for each
step. Message contents are never logged at INFO or above. Like any library it adds only a
``NullHandler``; configure logging (``logging.basicConfig(level=logging.INFO)``) to see them.
"""

import logging as _logging

from ._version import __version__ as __version__
from .agent import Agent
from .budget import Budget, ModelPrice, Spend
from .checkpoint import Checkpoint
from .conversation import (
    ConversationManager,
    NullConversationManager,
    SlidingWindowConversationManager,
    SummarizingConversationManager,
)
from .errors import (
    BudgetPriceError,
    CheckpointError,
    CheckpointException,
    CheckpointResumeError,
    CompensationError,
    ConfigurationError,
    ContextWindowExhaustedError,
    ContextWindowOverflowError,
    IncompatibleResumeError,
    InterruptError,
    LeaseLostError,
    ModelAuthError,
    ModelError,
    ModelResponseError,
    ModelThrottledError,
    PromptError,
    PromptShapeError,
    ResultError,
    RowTooLargeError,
    RunLockedError,
    RunNotFoundError,
    RunReplacedError,
    ScriptExhaustedError,
    ShapeError,
    SnapshotError,
    SnapshotException,
    StateError,
    StoreError,
    StructuredOutputError,
    TetherError,
    ToolError,
)
from .events import AgentEvent, ResultEvent
from .hooks import (
    AfterInvocation,
    AfterModelCall,
    AfterToolCall,
    BeforeInvocation,
    BeforeModelCall,
    BeforeToolCall,
    HookProvider,
    HookRegistry,
    MessageAdded,
)
from .interrupts import Interrupt
from .loop.policies import Limits, RetryPolicy
from .metrics import Metrics
from .models import Model, ScriptedModel
from .result import AgentResult
from .snapshot import Snapshot
from .tools import (
    ConcurrentToolExecutor,
    SequentialToolExecutor,
    Tool,
    ToolContext,
    ToolExecutor,
    Undo,
    tool,
)
from .types import (
    MessageEvent,
    ReasoningDeltaEvent,
    TextDeltaEvent,
    ToolResultEvent,
    ToolStartEvent,
)

_logging.getLogger("tether").addHandler(_logging.NullHandler())

__all__ = [
    "AfterInvocation",
    "AfterModelCall",
    "AfterToolCall",
    "Agent",
    "AgentEvent",
    "AgentResult",
    "BeforeInvocation",
    "BeforeModelCall",
    "BeforeToolCall",
    "Budget",
    "BudgetPriceError",
    "Checkpoint",
    "CheckpointError",
    "CheckpointException",
    "CheckpointResumeError",
    "CompensationError",
    "ConcurrentToolExecutor",
    "ConfigurationError",
    "ContextWindowExhaustedError",
    "ContextWindowOverflowError",
    "ConversationManager",
    "HookProvider",
    "HookRegistry",
    "IncompatibleResumeError",
    "Interrupt",
    "InterruptError",
    "LeaseLostError",
    "Limits",
    "MessageAdded",
    "MessageEvent",
    "Metrics",
    "Model",
    "ModelPrice",
    "ModelAuthError",
    "ModelError",
    "ModelResponseError",
    "ModelThrottledError",
    "NullConversationManager",
    "PromptError",
    "PromptShapeError",
    "ResultError",
    "ReasoningDeltaEvent",
    "ResultEvent",
    "RetryPolicy",
    "RowTooLargeError",
    "RunLockedError",
    "RunNotFoundError",
    "RunReplacedError",
    "ScriptExhaustedError",
    "ScriptedModel",
    "SequentialToolExecutor",
    "ShapeError",
    "SlidingWindowConversationManager",
    "Snapshot",
    "SnapshotError",
    "SnapshotException",
    "Spend",
    "StateError",
    "StoreError",
    "StructuredOutputError",
    "SummarizingConversationManager",
    "TetherError",
    "TextDeltaEvent",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolExecutor",
    "Undo",
    "ToolResultEvent",
    "ToolStartEvent",
    "tool",
]
