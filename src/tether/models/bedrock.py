"""`BedrockModel`: Amazon Bedrock's Converse / ConverseStream API through ``boto3``.

Tether's messages are Converse-shaped, so formatting is mostly filtering; the work is running
boto3's blocking calls in a thread, mapping the event stream, and mapping AWS errors (throttling,
context overflow, credentials) onto Tether's. ``boto3`` is imported when the first request is made.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from typing import Any

from ..errors import ContextWindowOverflowError, ModelAuthError, ModelError, ModelResponseError, ModelThrottledError
from ..types import ContentBlock, Message, ModelRequest, StopReason, StreamEvent, ToolResultContent
from ._format import check_url, import_sdk, merge_same_role, to_bytes
from .base import output_cap

_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "guardrail_intervened": "guardrail_intervened",
    "content_filtered": "content_filtered",
    "model_context_window_exceeded": "max_tokens",
}

_THROTTLE_CODES = frozenset(
    {
        "ThrottlingException",
        "throttlingException",
        "TooManyRequestsException",
        "ServiceUnavailableException",
        "serviceUnavailableException",
        "InternalServerException",
        "internalServerException",
        "ModelNotReadyException",
    }
)
_AUTH_CODES = frozenset(
    {
        "AccessDeniedException",
        "accessDeniedException",
        "UnrecognizedClientException",
        "InvalidSignatureException",
        "ExpiredTokenException",
        "ExpiredToken",
        "IncompleteSignature",
        "MissingAuthenticationToken",
    }
)
_OVERFLOW_MARKERS = (
    "input is too long",
    "too many input tokens",
    "prompt is too long",
    "exceed context limit",
    "context window",
    "too many total text bytes",
    "maximum context length",
)
_AUTH_HINT = "set AWS credentials (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE) or pass BedrockModel(boto_session=...)"


class BedrockModel:
    """A model on Amazon Bedrock, called through ConverseStream.

    ``inference_config`` is Converse's ``inferenceConfig`` (``maxTokens``, ``temperature``, ...);
    ``additional_request_fields`` is sent verbatim (e.g. Claude's ``thinking``). Credentials and
    region come from ``boto_session`` or boto3's usual chain; ``endpoint_url`` overrides the
    service endpoint (VPC endpoints, local test servers). botocore's own retries are off
    (``total_max_attempts=1``) unless ``client_config`` sets ``retries``: the agent's
    :class:`~tether.RetryPolicy` retries throttled and temporarily failing calls, one retry
    policy, not two.

    Args:
        model: The Bedrock model or inference-profile id.
        region_name: The AWS region (default: the session's or boto3's).
        boto_session: A ``boto3.Session`` giving credentials and region.
        endpoint_url: Another service endpoint (a VPC endpoint, a local test server).
        inference_config: Converse's ``inferenceConfig`` (``maxTokens``, ``temperature``, ...).
        additional_request_fields: Sent verbatim as ``additionalModelRequestFields``.
        client_config: A ``botocore.config.Config`` for the client.
    """

    def __init__(
        self,
        model: str = "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
        *,
        region_name: str | None = None,
        boto_session: Any = None,
        endpoint_url: str | None = None,
        inference_config: dict[str, Any] | None = None,
        additional_request_fields: dict[str, Any] | None = None,
        client_config: Any = None,
    ) -> None:
        self.model = model
        self.region_name = region_name
        self.endpoint_url = endpoint_url
        self.inference_config = dict(inference_config or {})
        self.additional_request_fields = dict(additional_request_fields or {})
        self._session = boto_session
        self._client_config = client_config
        self._client_obj: Any = None
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        return f"bedrock:{self.model}"

    def get_config(self) -> dict[str, Any]:
        """The model's JSON config; never includes credentials."""
        config: dict[str, Any] = {"provider": "bedrock", "model": self.model, "inference_config": dict(self.inference_config)}
        if self.region_name is not None:
            config["region_name"] = self.region_name
        if self.endpoint_url is not None:
            config["endpoint_url"] = self.endpoint_url
        if self.additional_request_fields:
            config["additional_request_fields"] = dict(self.additional_request_fields)
        return config

    def _client(self) -> Any:
        with self._lock:  # boto3 clients are thread-safe once made; making them is not
            if self._client_obj is None:
                boto3 = import_sdk("boto3", "bedrock")
                session = self._session or boto3.session.Session()
                region = self.region_name or session.region_name or "us-east-1"
                config = import_sdk("botocore.config", "bedrock").Config(retries={"total_max_attempts": 1, "mode": "standard"})
                if self._client_config is not None:
                    config = config.merge(self._client_config)  # the caller's settings win
                self._client_obj = session.client("bedrock-runtime", region_name=region, endpoint_url=self.endpoint_url, config=config)
            return self._client_obj

    def preflight(self) -> None:
        """Raise now what the first request would for this configuration (no request is made):
        the ``boto3`` package missing, an ``endpoint_url`` that is not an http(s) URL. AWS
        credentials are not looked up here: the chain may ask the network (instance metadata)."""
        import_sdk("boto3", "bedrock")
        if self.endpoint_url is not None:
            check_url(self.endpoint_url, "BedrockModel endpoint_url")

    def format_request(self, request: ModelRequest) -> dict[str, Any]:
        """The keyword arguments of ``converse_stream`` for ``request``."""
        kwargs: dict[str, Any] = {
            "modelId": self.model,
            "messages": [_format_message(m, f"messages[{i}]") for i, m in enumerate(merge_same_role(request["messages"]))],
        }
        system: list[dict[str, Any]] = []
        for block in request["system_prompt"] or []:
            if "text" in block:
                system.append({"text": block["text"]})
            elif "cachePoint" in block:
                system.append({"cachePoint": {"type": "default"}})
        if system:
            kwargs["system"] = system
        if request["tool_specs"]:
            tool_config: dict[str, Any] = {
                "tools": [
                    {"toolSpec": {"name": s["name"], "description": s["description"], "inputSchema": {"json": s["inputSchema"]["json"]}}}
                    for s in request["tool_specs"]
                ]
            }
            if request["tool_choice"] is not None:
                tool_config["toolChoice"] = dict(request["tool_choice"])
            kwargs["toolConfig"] = tool_config
        if self.inference_config:
            kwargs["inferenceConfig"] = dict(self.inference_config)
        if "max_tokens" in request:  # a run's budget caps the reply
            config = kwargs.setdefault("inferenceConfig", {})
            config["maxTokens"] = output_cap(request, config.get("maxTokens"))
        if self.additional_request_fields:
            kwargs["additionalModelRequestFields"] = dict(self.additional_request_fields)
        return kwargs

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        kwargs = self.format_request(request)
        botocore_exceptions = import_sdk("botocore.exceptions", "bedrock")
        try:
            stream = await asyncio.to_thread(self._open, kwargs)
            try:
                events = iter(stream)
                while True:
                    raw = await asyncio.to_thread(next, events, None)
                    if raw is None:
                        break
                    for event in _mapped(raw):
                        yield event
            finally:
                stream.close()  # also when the caller stops early (cancellation)
        except (botocore_exceptions.ClientError, botocore_exceptions.BotoCoreError) as exc:
            raise _map_error(exc, botocore_exceptions) from exc

    def _open(self, kwargs: dict[str, Any]) -> Any:
        """The botocore ``EventStream`` of a ConverseStream call (iterable of event dicts)."""
        return self._client().converse_stream(**kwargs)["stream"]


def _mapped(raw: Any) -> list[StreamEvent]:
    """:func:`_map_event`, with a malformed event (a missing field, a wrong type) as a
    :class:`~tether.errors.ModelResponseError` naming the event instead of a ``KeyError``."""
    try:
        return _map_event(raw)
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        kind = next(iter(raw), "?") if isinstance(raw, dict) else type(raw).__name__
        raise ModelResponseError(f"Bedrock sent a malformed {kind} event ({type(exc).__name__}: {exc})") from None


def _map_event(raw: dict[str, Any]) -> list[StreamEvent]:
    """One ConverseStream event → Tether events (the shapes are the same, minus indexes)."""
    if "messageStart" in raw:
        return [{"messageStart": {"role": raw["messageStart"].get("role", "assistant")}}]
    if "contentBlockStart" in raw:
        start = raw["contentBlockStart"].get("start", {})
        if "toolUse" in start:
            use = start["toolUse"]
            return [{"contentBlockStart": {"start": {"toolUse": {"toolUseId": use["toolUseId"], "name": use["name"]}}}}]
        return [{"contentBlockStart": {"start": {}}}]
    if "contentBlockDelta" in raw:
        delta = raw["contentBlockDelta"]["delta"]
        if "text" in delta:
            return [{"contentBlockDelta": {"delta": {"text": delta["text"]}}}]
        if "toolUse" in delta:
            return [{"contentBlockDelta": {"delta": {"toolUse": {"input": delta["toolUse"].get("input", "")}}}}]
        if "reasoningContent" in delta:
            reasoning = {k: v for k, v in delta["reasoningContent"].items() if k in ("text", "signature", "redactedContent")}
            return [{"contentBlockDelta": {"delta": {"reasoningContent": reasoning}}}]  # type: ignore[typeddict-item]
        return []
    if "contentBlockStop" in raw:
        return [{"contentBlockStop": {}}]
    if "messageStop" in raw:
        return [{"messageStop": {"stopReason": _STOP_REASONS.get(raw["messageStop"].get("stopReason", ""), "end_turn")}}]
    if "metadata" in raw:
        usage = raw["metadata"].get("usage", {})
        inp = int(usage.get("inputTokens", 0)) + int(usage.get("cacheReadInputTokens", 0)) + int(usage.get("cacheWriteInputTokens", 0))
        out = int(usage.get("outputTokens", 0))
        metadata: dict[str, Any] = {"usage": {"inputTokens": inp, "outputTokens": out, "totalTokens": inp + out}}
        if "metrics" in raw["metadata"]:
            metadata["metrics"] = dict(raw["metadata"]["metrics"])
        return [{"metadata": metadata}]  # type: ignore[typeddict-item]
    return []


def _format_message(message: Message, where: str) -> dict[str, Any]:
    content = [b for i, block in enumerate(message["content"]) if (b := _format_block(block, f"{where}.content[{i}]")) is not None]
    return {"role": message["role"], "content": content}


def _format_block(block: ContentBlock, path: str) -> dict[str, Any] | None:
    if "text" in block:
        return {"text": block["text"]}
    if "image" in block:
        return {"image": _image(block["image"], f"{path}.image")}
    if "document" in block:
        return {"document": _document(block["document"], f"{path}.document")}
    if "toolUse" in block:
        use = block["toolUse"]
        return {"toolUse": {"toolUseId": use["toolUseId"], "name": use["name"], "input": use["input"]}}
    if "toolResult" in block:
        result = block["toolResult"]
        items = [_tool_result_item(item, f"{path}.toolResult.content[{i}]") for i, item in enumerate(result["content"])]
        return {"toolResult": {"toolUseId": result["toolUseId"], "status": result["status"], "content": items}}
    if "reasoningContent" in block:
        reasoning = block["reasoningContent"]
        if "redactedContent" in reasoning:
            return {
                "reasoningContent": {"redactedContent": to_bytes(reasoning["redactedContent"], f"{path}.reasoningContent.redactedContent")}
            }
        text = reasoning.get("reasoningText")
        return {"reasoningContent": {"reasoningText": dict(text)}} if text is not None else None
    if "cachePoint" in block:
        return {"cachePoint": {"type": "default"}}
    return None


def _tool_result_item(item: ToolResultContent, path: str) -> dict[str, Any]:
    if "image" in item:
        return {"image": _image(item["image"], f"{path}.image")}
    if "document" in item:
        return {"document": _document(item["document"], f"{path}.document")}
    if "json" in item:
        return {"json": item["json"]}
    return {"text": item.get("text", "")}


def _image(image: Any, path: str) -> dict[str, Any]:
    return {"format": image["format"], "source": {"bytes": to_bytes(image["source"]["bytes"], f"{path}.source.bytes")}}


def _document(doc: Any, path: str) -> dict[str, Any]:
    return {"format": doc["format"], "name": doc["name"], "source": {"bytes": to_bytes(doc["source"]["bytes"], f"{path}.source.bytes")}}


def _map_error(exc: Exception, botocore_exceptions: Any) -> ModelError:
    """A botocore error (HTTP error, in-stream exception event, missing credentials) → a Tether error."""
    if isinstance(exc, (botocore_exceptions.NoCredentialsError, botocore_exceptions.PartialCredentialsError)):
        return ModelAuthError(f"no usable AWS credentials for Bedrock ({exc}); {_AUTH_HINT}")
    if not isinstance(exc, botocore_exceptions.ClientError):
        return ModelError(f"Bedrock request failed: {type(exc).__name__}: {exc}")
    error = exc.response.get("Error", {})
    code = str(error.get("Code", ""))
    message = str(error.get("Message", "") or exc)
    if code in _THROTTLE_CODES:
        headers = exc.response.get("ResponseMetadata", {}).get("HTTPHeaders", {})
        retry_after: float | None
        try:
            retry_after = float(headers["retry-after"]) if "retry-after" in headers else None
        except ValueError:
            retry_after = None
        return ModelThrottledError(f"Bedrock throttled the request ({code}): {message}", retry_after=retry_after)
    if code in _AUTH_CODES:
        return ModelAuthError(f"Bedrock rejected the credentials ({code}: {message}); {_AUTH_HINT}")
    if any(marker in message.lower() for marker in _OVERFLOW_MARKERS):
        return ContextWindowOverflowError(f"the request exceeds the model's context window ({code}): {message}")
    return ModelError(f"Bedrock request failed ({code}): {message}")
