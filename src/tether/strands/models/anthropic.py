"""Strands' ``AnthropicModel`` (``strands.models.anthropic``) as Tether's Anthropic provider.

``AnthropicModel(*, client_args=None, **model_config)`` with Strands' config keys
(``model_id`` and ``max_tokens``, both required, and ``params``) over
:class:`tether.models.anthropic.AnthropicModel`; ``client_args`` go to
``anthropic.AsyncAnthropic`` (its ``api_key`` and ``base_url`` as Tether's). The SDK is imported at
the first request (Strands makes its client at construction).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from ...errors import ConfigurationError
from ...models.anthropic import AnthropicModel as _TetherAnthropicModel
from ...types import ModelRequest
from ._provider import StrandsProvider
from .model import BaseModelConfig

_CACHING = "put a cachePoint block in the system prompt or the messages instead"


class AnthropicModel(StrandsProvider, _TetherAnthropicModel):  # type: ignore[misc]  # stream takes Tether\'s request or Strands\' arguments
    """A Claude model through the Anthropic API, configured as Strands' ``AnthropicModel``.

    Args:
        client_args: Arguments of ``anthropic.AsyncAnthropic`` (``api_key``, ``base_url``, ...).
        **model_config: Strands' ``AnthropicConfig`` keys: ``model_id`` and ``max_tokens``
            (required by the first request), ``params`` (sent with every request).

    Raises:
        ConfigurationError: ``anthropic_tools`` or Strands' caching options.
    """

    class AnthropicConfig(BaseModelConfig, total=False):
        """Strands' Anthropic configuration keys."""

        cache_config: Any
        cache_tools: Any
        max_tokens: int
        model_id: str
        params: dict[str, Any] | None
        anthropic_tools: list[dict[str, Any]]
        use_native_token_count: bool

    _keys = frozenset(AnthropicConfig.__annotations__) | frozenset(BaseModelConfig.__annotations__)
    _label = "AnthropicModel"
    _unsupported: ClassVar[Mapping[str, str]] = {
        "cache_config": _CACHING,
        "cache_tools": _CACHING,
        "anthropic_tools": "Anthropic server-side tools are not sent by Tether",
        "use_native_token_count": "Tether does not count tokens before a request",
    }

    def __init__(self, *, client_args: dict[str, Any] | None = None, **model_config: Any) -> None:
        args = dict(client_args or {})
        api_key = args.pop("api_key", None)
        base_url = args.pop("base_url", None)
        _TetherAnthropicModel.__init__(
            self, "", api_key=api_key, base_url=str(base_url) if base_url is not None else None, client_args=args
        )
        self.client_args = dict(client_args or {})
        self.config = {}
        self.update_config(**model_config)

    def _apply(self) -> None:
        self.model = str(self.config.get("model_id") or "")
        max_tokens = self.config.get("max_tokens")
        self.max_tokens = max_tokens if isinstance(max_tokens, int) else 0
        self.params = dict(self.config.get("params") or {})

    def _complete(self) -> None:
        missing = [key for key in ("model_id", "max_tokens") if not self.config.get(key)]
        if missing:
            raise ConfigurationError(f"AnthropicModel config lacks {missing}; pass AnthropicModel(model_id=..., max_tokens=...)")

    def format_request(self, request: ModelRequest) -> dict[str, Any]:
        self._complete()
        return super().format_request(request)

    def preflight(self) -> None:
        """Tether's checks (SDK installed, API key, URL) and the required config keys."""
        self._complete()
        super().preflight()


__all__ = ["AnthropicModel"]
