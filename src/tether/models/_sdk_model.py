"""The part the OpenAI and Anthropic models share: an async SDK client made lazily, one per
event loop, from an API key (argument or environment variable) and an optional base URL, with
the SDK's own retries off."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from typing import Any, ClassVar

from ..errors import ModelError
from ..types import StreamEvent
from ._format import check_url, import_sdk


class SDKClientModel:
    """Base of a model spoken to through a provider's async SDK client (``openai``,
    ``anthropic``): the configuration every such model keeps, the per-loop client cache and the
    preflight check, its ``model_id`` and JSON config. A subclass names its SDK and makes the client (:meth:`_make_client`) and
    says where its key comes from (:meth:`_key`)."""

    _sdk: ClassVar[str]
    """The SDK's module, which is also the name of the extra that installs it."""
    _label: ClassVar[str]
    """The class name used in error messages (``"OpenAIModel"``)."""

    def __init__(
        self, model: str, api_key: str | None, base_url: str | None, params: dict[str, Any] | None, client_args: dict[str, Any] | None
    ) -> None:
        self.model = model
        self.base_url = base_url
        self.params = dict(params or {})
        self._api_key = api_key
        self._client_args = dict(client_args or {})
        self._clients: dict[int, Any] = {}

    @property
    def model_id(self) -> str:
        """``<provider>:<model>`` (the provider is the SDK's name: ``openai:gpt-4o``)."""
        return f"{self._sdk}:{self.model}"

    def get_config(self) -> dict[str, Any]:
        """The model's JSON config; never includes the API key."""
        config: dict[str, Any] = {"provider": self._sdk, "model": self.model, **self._settings(), "params": dict(self.params)}
        if self.base_url is not None:
            config["base_url"] = self.base_url
        return config

    def _settings(self) -> dict[str, Any]:
        """A subclass's own settings in :meth:`get_config` (between ``model`` and ``params``)."""
        return {}

    def _client(self) -> Any:
        # An httpx client belongs to one event loop; keep one per loop.
        loop_key = id(asyncio.get_running_loop())
        client = self._clients.get(loop_key)
        if client is None:
            sdk = import_sdk(self._sdk, self._sdk)
            args: dict[str, Any] = {"max_retries": 0, **self._client_args}  # Tether's RetryPolicy retries
            client = self._make_client(sdk, args)
            self._clients = {loop_key: client}
        return client

    def _make_client(self, sdk: Any, args: dict[str, Any]) -> Any:
        """The SDK's async client, given the imported SDK and the arguments so far (``client_args``
        over ``max_retries=0``)."""
        raise NotImplementedError

    def _key(self) -> str | None:
        """The API key; ModelAuthError when the configuration has none the SDK could use."""
        raise NotImplementedError

    def _given_key(self, variable: str) -> str | None:
        """The ``api_key`` argument, else the environment variable ``variable`` (None if neither)."""
        return self._api_key or os.environ.get(variable)

    async def _stream_of(
        self,
        open_stream: Callable[[], Awaitable[Any]],
        map_stream: Callable[[Any], AsyncIterator[StreamEvent]],
        map_error: Callable[[Any, Any], ModelError],
    ) -> AsyncGenerator[StreamEvent, None]:
        """The Tether events of one streamed request: ``open_stream()`` makes it, ``map_stream``
        turns the SDK's stream into events, and an SDK ``APIError`` (HTTP status or an in-stream
        error) becomes ``map_error(exc, sdk)``. The response is closed however the stream ends."""
        sdk = import_sdk(self._sdk, self._sdk)
        try:
            response = await open_stream()
            try:
                async for event in map_stream(response):
                    yield event
            finally:
                await response.close()  # also when the caller stops early (cancellation)
        except sdk.APIError as exc:
            raise map_error(exc, sdk) from exc

    def preflight(self) -> None:
        """Raise now what the first request would for this configuration (no request is made):
        the SDK package missing, no API key, a ``base_url`` that is not an http(s) URL."""
        import_sdk(self._sdk, self._sdk)
        self._key()
        if self.base_url is not None:
            check_url(self.base_url, f"{self._label} base_url")
