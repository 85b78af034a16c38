"""Strands' ``LlamaCppModel`` (``strands.models.llamacpp``): a llama.cpp *server*, over HTTP.

Strands' model talks to ``llama-server``'s OpenAI-compatible ``/v1/chat/completions``; so this
one is Tether's OpenAI provider pointed at ``{base_url}/v1`` (Tether's own
:class:`tether.models.llamacpp.LlamaCppModel` runs a GGUF in-process instead). ``params`` are
split as Strands splits them: OpenAI's parameters go as such, llama.cpp's own (``top_k``,
``grammar``, ``json_schema``, ``repeat_penalty``, ...) in the request body beside them
(``extra_body``). No API key is sent from the environment: llama.cpp needs none.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from ...models._format import import_sdk
from ...models.openai import OpenAIModel as _TetherOpenAIModel
from ._provider import StrandsProvider
from .model import BaseModelConfig

OPENAI_PARAMS = frozenset(
    {
        "temperature",
        "max_tokens",
        "top_p",
        "frequency_penalty",
        "presence_penalty",
        "stop",
        "seed",
        "n",
        "logprobs",
        "top_logprobs",
        "response_format",
    }
)
"""The ``params`` Strands sends as OpenAI parameters; every other one goes in the body as llama.cpp's."""


class LlamaCppModel(StrandsProvider, _TetherOpenAIModel):  # type: ignore[misc]  # stream takes Tether\'s request or Strands\' arguments
    """A model served by llama.cpp's server, configured as Strands' ``LlamaCppModel``.

    Args:
        base_url: The server's URL (``http://localhost:8080``; ``/v1`` is appended).
        timeout: Request timeout in seconds, or ``(connect, read[, write[, pool]])`` (default 30 s).
        **model_config: Strands' ``LlamaCppConfig`` keys: ``model_id`` (default ``"default"``),
            ``params``, ``cache_config`` (any value asks the server to cache the prompt).
    """

    class LlamaCppConfig(BaseModelConfig, total=False):
        """Strands' llama.cpp configuration keys."""

        model_id: str
        params: dict[str, Any] | None
        use_native_token_count: bool
        cache_config: Any

    _keys = frozenset(LlamaCppConfig.__annotations__) | frozenset(BaseModelConfig.__annotations__)
    _label = "LlamaCppModel"
    _unsupported: ClassVar[Mapping[str, str]] = {"use_native_token_count": "Tether does not count tokens before a request"}

    def __init__(
        self, base_url: str = "http://localhost:8080", timeout: float | tuple[float, ...] | None = None, **model_config: Any
    ) -> None:
        self.server_url = base_url.rstrip("/")
        self.timeout = timeout
        _TetherOpenAIModel.__init__(self, "default", api_key="no-key", base_url=f"{self.server_url}/v1")
        model_config.setdefault("model_id", "default")
        self.config = {}
        self.update_config(**model_config)

    @property
    def model_id(self) -> str:
        """The Tether model string of the same server and model (``openai-compatible:URL:MODEL``)."""
        return f"openai-compatible:{self.base_url}:{self.model}"

    def _apply(self) -> None:
        self.model = str(self.config.get("model_id") or "default")
        params = dict(self.config.get("params") or {})
        own = {key: value for key, value in params.items() if key not in OPENAI_PARAMS}
        if self.config.get("cache_config") is not None:
            own.setdefault("cache_prompt", True)
        self.params = {key: value for key, value in params.items() if key in OPENAI_PARAMS}
        if own:
            self.params["extra_body"] = own

    def _make_client(self, sdk: Any, args: dict[str, Any]) -> Any:
        timeout: Any = 30.0 if self.timeout is None else self.timeout
        if isinstance(timeout, tuple):
            parts = [*timeout, None, None, None, None][:4]
            timeout = import_sdk("httpx", "openai").Timeout(connect=parts[0], read=parts[1], write=parts[2], pool=parts[3])
        return super()._make_client(sdk, {"timeout": timeout, **args})


__all__ = ["OPENAI_PARAMS", "LlamaCppModel"]
