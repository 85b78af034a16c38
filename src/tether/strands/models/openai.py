"""Strands' ``OpenAIModel`` (``strands.models.openai``) as Tether's OpenAI provider.

``OpenAIModel(client=None, client_args=None, **model_config)`` with Strands' config keys
(``model_id``, ``params``, ``stream``) over :class:`tether.models.openai.OpenAIModel`:
``client_args`` go to ``openai.AsyncOpenAI`` (its ``api_key`` and ``base_url`` as Tether's), a
pre-built ``client`` is used as given. The SDK is imported at the first request.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from ...errors import ConfigurationError
from ...models.openai import OpenAIModel as _TetherOpenAIModel
from ...types import ModelRequest
from ._provider import StrandsProvider
from .model import BaseModelConfig


class OpenAIModel(StrandsProvider, _TetherOpenAIModel):  # type: ignore[misc]  # stream takes Tether\'s request or Strands\' arguments
    """An OpenAI (or OpenAI-compatible) chat model, configured as Strands' ``OpenAIModel``.

    Args:
        client: A pre-built async OpenAI-compatible client, used for every request (not with
            ``client_args``).
        client_args: Arguments of ``openai.AsyncOpenAI`` (``api_key``, ``base_url``, ``timeout``, ...).
        bedrock_mantle_config: Bedrock's OpenAI-compatible endpoints: not supported.
        **model_config: Strands' ``OpenAIConfig`` keys: ``model_id``, ``params`` (sent with
            every request), ``stream`` (Tether always streams; the result is the same).

    Raises:
        ConfigurationError: ``client`` with ``client_args``, ``bedrock_mantle_config``, or
            ``cache_config``.
    """

    class OpenAIConfig(BaseModelConfig, total=False):
        """Strands' OpenAI configuration keys."""

        model_id: str
        params: dict[str, Any] | None
        stream: bool
        cache_config: Any

    _keys = frozenset(OpenAIConfig.__annotations__) | frozenset(BaseModelConfig.__annotations__)
    _label = "OpenAIModel"
    _unsupported: ClassVar[Mapping[str, str]] = {
        "cache_config": "OpenAI caches prompt prefixes by itself; set params={'prompt_cache_key': ...} to route it"
    }

    def __init__(
        self,
        client: Any = None,
        client_args: dict[str, Any] | None = None,
        bedrock_mantle_config: Any = None,
        **model_config: Any,
    ) -> None:
        if client is not None and client_args:
            raise ConfigurationError("Only one of 'client' or 'client_args' should be provided, not both.")
        if bedrock_mantle_config is not None:
            raise ConfigurationError("OpenAIModel(bedrock_mantle_config=...) is not supported by Tether; use BedrockModel")
        args = dict(client_args or {})
        api_key = args.pop("api_key", None)
        base_url = args.pop("base_url", None)
        _TetherOpenAIModel.__init__(self, "", api_key=api_key, base_url=str(base_url) if base_url is not None else None, client_args=args)
        self.client_args = dict(client_args or {})
        self._custom_client = client
        self.config = {}
        self.update_config(**model_config)

    def _apply(self) -> None:
        self.model = str(self.config.get("model_id") or "")
        self.params = dict(self.config.get("params") or {})

    def _client(self) -> Any:
        return self._custom_client if self._custom_client is not None else super()._client()

    def _named_model(self) -> None:
        if not self.model:
            raise ConfigurationError("OpenAIModel has no model_id; pass OpenAIModel(model_id='gpt-4o', ...)")

    def format_request(self, request: ModelRequest) -> dict[str, Any]:
        self._named_model()
        return super().format_request(request)

    def preflight(self) -> None:
        """Tether's checks (SDK installed, API key, URL), the model id; none of the key with a ``client``."""
        self._named_model()
        if self._custom_client is None:
            super().preflight()


__all__ = ["OpenAIModel"]
