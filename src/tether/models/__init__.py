"""Models: the `Model` protocol, `ScriptedModel` for tests, and providers (imported lazily)."""

from .base import Model
from .scripted import ScriptedModel, tool_call, tool_calls

__all__ = ["Model", "ScriptedModel", "tool_call", "tool_calls"]
