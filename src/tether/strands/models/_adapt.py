"""The seam between Strands-style model arguments and Tether models."""

from __future__ import annotations

from typing import Any

from ...errors import ConfigurationError
from ...models.base import Model
from ...models.registry import from_string


def to_tether_model(model: Any) -> Model | None:
    """A Tether model for what ``Agent(model=...)`` of the Strands facade was given.

    Args:
        model: ``None``, a Tether model, or a model string.

    Returns:
        The Tether model, or None when ``model`` is None.

    Raises:
        ConfigurationError: ``model`` is none of these.
    """
    if model is None or isinstance(model, Model):
        return model
    if isinstance(model, str):
        return from_string(model)
    raise ConfigurationError(f"model must be a Model or a model id string, got {type(model).__name__}")
