"""The seam between Strands-style model arguments and Tether models.

``Agent(model=...)`` in Strands takes a model object, a Bedrock model id, or nothing (Strands'
default Bedrock model); :func:`to_tether_model` turns each into the Tether model the facade's
agent passes to :class:`tether.Agent`.
"""

from __future__ import annotations

from typing import Any, cast

from ...errors import ConfigurationError
from ...models.base import Model
from ...models.registry import PROVIDERS, from_string
from ._custom import CustomModel, is_strands_model
from ._provider import StrandsProvider


def to_tether_model(model: Any) -> Model | None:
    """A Tether model for what ``Agent(model=...)`` of the Strands facade was given.

    - ``None`` (or ``""``): Strands' default, a :class:`~tether.strands.models.bedrock.BedrockModel`
      (``boto3`` is imported at its first request, not now).
    - a string: a Bedrock model id, as in Strands (``"us.anthropic.claude-sonnet-4-5-20250929-v1:0"``,
      an inference-profile ARN), unless it starts with one of Tether's model-string prefixes
      (``openai:``, ``anthropic:``, ``bedrock:``, ``openai-compatible:``, ``llamacpp``), which
      no Bedrock id does: those build Tether's model as :func:`tether.models.from_string`.
    - a facade provider (``BedrockModel(...)``, ``OpenAIModel(...)``, ...) or any Tether model: as is.
    - an instance of a Strands ``Model`` subclass (this facade's or the real package's): run
      through :class:`~tether.strands.models._custom.CustomModel`.

    Args:
        model: What the program passed as ``model``.

    Returns:
        The Tether model (never None: Strands always has a model).

    Raises:
        ConfigurationError: ``model`` is none of these.
    """
    from .bedrock import BedrockModel

    if model is None or model == "":
        return cast(Model, BedrockModel())
    if isinstance(model, str):
        head, _, _ = model.strip().partition(":")
        if head in PROVIDERS:
            return from_string(model)
        return cast(Model, BedrockModel(model_id=model))
    if isinstance(model, StrandsProvider):
        return cast(Model, model)
    if is_strands_model(model):
        return CustomModel(model)
    if isinstance(model, Model):
        return model
    raise ConfigurationError(
        f"model must be a Model (a Strands Model subclass or a Tether model), a Bedrock model id or None, got {type(model).__name__}"
    )


def strands_model_of(model: Any) -> Any:
    """The object the program passed for a model :func:`to_tether_model` made (the custom model
    inside a :class:`CustomModel`; any other model is itself), for ``agent.model``."""
    return model.model if isinstance(model, CustomModel) else model
