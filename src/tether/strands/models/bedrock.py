"""Strands' ``BedrockModel`` (``strands.models.bedrock``) as Tether's Bedrock provider.

Strands' signature, config keys and defaults (model ``global.anthropic.claude-sonnet-4-6``,
region from the argument, the session, ``AWS_REGION`` or ``us-west-2``) over
:class:`tether.models.bedrock.BedrockModel`, so requests, retries, errors and usage are Tether's.
``boto3`` is imported at the first request, not here (Strands makes its client at construction).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, ClassVar, Literal

from ...errors import ConfigurationError
from ...models._format import import_sdk
from ...models.bedrock import BedrockModel as _TetherBedrockModel
from ...types import ModelRequest
from ._provider import StrandsProvider
from .model import BaseModelConfig

DEFAULT_BEDROCK_MODEL_ID = "global.anthropic.claude-sonnet-4-6"
"""Strands' default Bedrock model (``strands.models.bedrock.DEFAULT_BEDROCK_MODEL_ID``)."""

DEFAULT_BEDROCK_REGION = "us-west-2"
"""Strands' region when neither the argument, the session nor ``AWS_REGION`` names one."""

_CACHING = "put a cachePoint block in the system prompt or the messages instead"


class BedrockModel(StrandsProvider, _TetherBedrockModel):  # type: ignore[misc]  # stream takes Tether\'s request or Strands\' arguments
    """An Amazon Bedrock model, configured as Strands' ``BedrockModel``.

    Args:
        boto_session: A ``boto3.Session`` giving credentials and region.
        boto_client_config: A ``botocore.config.Config`` for the client.
        region_name: The AWS region (not together with ``boto_session``).
        endpoint_url: Another service endpoint (a VPC endpoint, a local server).
        api_key: Bedrock API-key (bearer) authentication: not supported, use AWS credentials.
        **model_config: Strands' ``BedrockConfig`` keys (``model_id``, ``max_tokens``,
            ``temperature``, ``top_p``, ``stop_sequences``, ``additional_request_fields``,
            ``additional_args``, ``service_tier``, ``streaming``, ...).

    Raises:
        ConfigurationError: ``region_name`` with ``boto_session``, ``api_key``, or a config key
            Tether cannot honour (guardrails, Strands' caching options, strict tools, ...).
    """

    class BedrockConfig(BaseModelConfig, total=False):
        """Strands' Bedrock configuration keys."""

        additional_args: dict[str, Any] | None
        additional_request_fields: dict[str, Any] | None
        additional_response_field_paths: list[str] | None
        cache_prompt: str | None
        cache_config: Any
        cache_tools: Any
        guardrail_id: str | None
        guardrail_trace: Literal["enabled", "disabled", "enabled_full"] | None
        guardrail_stream_processing_mode: Literal["sync", "async"] | None
        guardrail_version: str | None
        guardrail_redact_input: bool | None
        guardrail_redact_input_message: str | None
        guardrail_redact_output: bool | None
        guardrail_redact_output_message: str | None
        guardrail_latest_message: bool | None
        max_tokens: int | None
        model_id: str
        include_tool_result_status: Literal["auto"] | bool | None
        service_tier: str | None
        stop_sequences: list[str] | None
        streaming: bool | None
        strict_tools: bool | None
        temperature: float | None
        top_p: float | None
        use_native_token_count: bool

    _keys = frozenset(BedrockConfig.__annotations__) | frozenset(BaseModelConfig.__annotations__)
    _label = "BedrockModel"
    _unsupported: ClassVar[Mapping[str, str]] = {
        **{
            key: "Bedrock guardrails are not applied by Tether; configure them on the model's inference profile"
            for key in BedrockConfig.__annotations__
            if key.startswith("guardrail_")
        },
        "cache_prompt": _CACHING,
        "cache_config": _CACHING,
        "cache_tools": _CACHING,
        "strict_tools": "Tether sends tool schemas as given",
        "additional_response_field_paths": "Tether reads no additional response fields",
        "use_native_token_count": "Tether does not count tokens before a request",
    }

    def __init__(
        self,
        *,
        boto_session: Any = None,
        boto_client_config: Any = None,
        region_name: str | None = None,
        endpoint_url: str | None = None,
        api_key: str | None = None,
        **model_config: Any,
    ) -> None:
        if region_name and boto_session:
            raise ConfigurationError("Cannot specify both `region_name` and `boto_session`.")
        if api_key is not None:
            raise ConfigurationError(
                "BedrockModel(api_key=...) is not supported by Tether; use AWS credentials (a boto_session, AWS_PROFILE or the environment)"
            )
        _TetherBedrockModel.__init__(
            self, DEFAULT_BEDROCK_MODEL_ID, region_name=region_name, boto_session=boto_session, endpoint_url=endpoint_url,
            client_config=boto_client_config,
        )  # fmt: skip
        self.config = {"model_id": DEFAULT_BEDROCK_MODEL_ID, "include_tool_result_status": "auto"}
        self.update_config(**model_config)

    def _check(self, config: Mapping[str, Any]) -> None:
        if config.get("include_tool_result_status") is False:
            raise ConfigurationError("BedrockModel config include_tool_result_status=False is not supported: Tether always sends it")
        if not isinstance(config.get("model_id"), str) or not config["model_id"]:
            raise ConfigurationError(f"BedrockModel config model_id must be a non-empty string, got {config.get('model_id')!r}")

    def _apply(self) -> None:
        config = self.config
        self.model = str(config["model_id"])
        self.inference_config = {
            key: config[name]
            for key, name in (
                ("maxTokens", "max_tokens"),
                ("temperature", "temperature"),
                ("topP", "top_p"),
                ("stopSequences", "stop_sequences"),
            )
            if config.get(name) is not None
        }
        self.additional_request_fields = dict(config.get("additional_request_fields") or {})

    def format_request(self, request: ModelRequest) -> dict[str, Any]:
        """Tether's ConverseStream arguments plus Strands' ``service_tier`` and ``additional_args``."""
        kwargs = super().format_request(request)
        if self.config.get("service_tier"):
            kwargs["serviceTier"] = {"type": self.config["service_tier"]}
        kwargs.update(self.config.get("additional_args") or {})
        return kwargs

    @property
    def client(self) -> Any:
        """The ``bedrock-runtime`` client, as Strands' ``model.client`` (made on first use here)."""
        return self._client()

    def _client(self) -> Any:
        # Strands' region order: the argument, the session's, AWS_REGION, then us-west-2 (Tether's
        # own provider falls back to us-east-1); settled once, with boto3 imported only now.
        if self._client_obj is None and self.region_name is None:
            boto3 = import_sdk("boto3", "bedrock")
            session = self._session or boto3.session.Session()
            self._session = session
            self.region_name = session.region_name or os.environ.get("AWS_REGION") or DEFAULT_BEDROCK_REGION
        return super()._client()


__all__ = ["DEFAULT_BEDROCK_MODEL_ID", "DEFAULT_BEDROCK_REGION", "BedrockModel"]
