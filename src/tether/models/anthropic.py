"""`AnthropicModel`: the Messages API through the official ``anthropic`` SDK.

Streams raw Messages events onto Tether's, keeps thinking blocks (text + signature, and redacted
thinking as bytes) in the conversation so extended thinking survives tool use, maps cache points
to ``cache_control`` on the preceding block, and maps Anthropic's errors onto Tether's. The SDK
is imported when the first request is made.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import AsyncIterator
from typing import Any

from ..errors import ContextWindowOverflowError, ModelAuthError, ModelError, ModelThrottledError
from ..types import ContentBlock, Message, ModelRequest, StopReason, StreamEvent, ToolChoice, ToolResultContent
from ._format import TEXT_DOCUMENT_FORMATS, b64, image_media_type, merge_same_role, to_bytes
from ._sdk_model import SDKClientModel
from .base import output_cap

_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "refusal": "content_filtered",
    "model_context_window_exceeded": "max_tokens",
    "pause_turn": "end_turn",
}

_OVERFLOW_MARKERS = ("prompt is too long", "exceed context limit", "context window", "too many tokens", "input is too long")
_THROTTLE_TYPES = ("rate_limit_error", "overloaded_error")
_AUTH_TYPES = ("authentication_error", "permission_error")


class AnthropicModel(SDKClientModel):
    """A Claude model through the Anthropic Messages API.

    ``max_tokens`` is required by the API; ``params`` go into every request verbatim
    (``temperature``, ``thinking``, ...); ``client_args`` go to ``anthropic.AsyncAnthropic``. The
    SDK's own retries are off (``max_retries=0``): the agent's :class:`~tether.RetryPolicy`
    retries throttled and temporarily failing calls, one retry policy, not two (``client_args``
    may still set ``max_retries``).
    The API key comes from ``api_key`` or ``ANTHROPIC_API_KEY``.

    Args:
        model: The model id (``"claude-sonnet-4-6"``).
        max_tokens: The most tokens one reply may take (the API requires it).
        api_key: The API key (default: ``ANTHROPIC_API_KEY``).
        base_url: Another endpoint of the Messages API.
        params: Request parameters sent with every call (``temperature``, ``thinking``, ...).
        client_args: Arguments of ``anthropic.AsyncAnthropic`` (``timeout``, ...).
    """

    _sdk = "anthropic"
    _label = "AnthropicModel"

    def __init__(
        self,
        model: str = "claude-sonnet-4-6",
        *,
        max_tokens: int = 4096,
        api_key: str | None = None,
        base_url: str | None = None,
        params: dict[str, Any] | None = None,
        client_args: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(model, api_key, base_url, params, client_args)
        self.max_tokens = max_tokens

    def _settings(self) -> dict[str, Any]:
        return {"max_tokens": self.max_tokens}

    def _make_client(self, sdk: Any, args: dict[str, Any]) -> Any:
        key = self._key()
        if key:
            args["api_key"] = key
        if self.base_url is not None:
            args["base_url"] = self.base_url
        return sdk.AsyncAnthropic(**args)

    def _key(self) -> str | None:
        """The API key (None when an auth token stands in for it); ModelAuthError when there is neither."""
        key = self._given_key("ANTHROPIC_API_KEY")
        if not key and not (self._client_args.get("auth_token") or os.environ.get("ANTHROPIC_AUTH_TOKEN")):
            raise ModelAuthError("no Anthropic API key: set the ANTHROPIC_API_KEY environment variable or pass AnthropicModel(api_key=...)")
        return key

    def format_request(self, request: ModelRequest) -> dict[str, Any]:
        """The keyword arguments of ``messages.create`` for ``request`` (without ``stream``)."""
        kwargs: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "messages": [_format_message(m, f"messages[{i}]") for i, m in enumerate(merge_same_role(request["messages"]))],
            **self.params,
        }
        kwargs["max_tokens"] = output_cap(request, kwargs["max_tokens"])  # a run's budget may lower it
        system: list[dict[str, Any]] = []
        for block in request["system_prompt"] or []:
            if "text" in block:
                system.append({"type": "text", "text": block["text"]})
            elif "cachePoint" in block and system:
                system[-1]["cache_control"] = {"type": "ephemeral"}
        if system:
            kwargs["system"] = system
        if request["tool_specs"]:
            kwargs["tools"] = [
                {"name": spec["name"], "description": spec["description"], "input_schema": spec["inputSchema"]["json"]}
                for spec in request["tool_specs"]
            ]
            if request["tool_choice"] is not None:
                kwargs["tool_choice"] = _format_tool_choice(request["tool_choice"])
        return kwargs

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        kwargs = self.format_request(request)
        client = self._client()
        # aclosing: a caller that stops early closes the response now, not when the generator is collected.
        stream = self._stream_of(lambda: client.messages.create(stream=True, **kwargs), _map_stream, _map_error)
        async with contextlib.aclosing(stream) as events:
            async for event in events:
                yield event


async def _map_stream(response: Any) -> AsyncIterator[StreamEvent]:
    """Raw Messages stream events → Tether events."""
    input_tokens = 0
    output_tokens = 0
    stop: StopReason = "end_turn"
    async for event in response:
        kind = event.type
        if kind == "message_start":
            usage = event.message.usage
            input_tokens = _input_tokens(usage)
            output_tokens = int(getattr(usage, "output_tokens", 0) or 0)
            yield {"messageStart": {"role": "assistant"}}
        elif kind == "content_block_start":
            block = event.content_block
            if block.type == "tool_use":
                yield {"contentBlockStart": {"start": {"toolUse": {"toolUseId": block.id, "name": block.name}}}}
            elif block.type == "redacted_thinking":
                yield {"contentBlockDelta": {"delta": {"reasoningContent": {"redactedContent": block.data.encode("utf-8")}}}}
            elif block.type == "text" and block.text:
                yield {"contentBlockDelta": {"delta": {"text": block.text}}}
            elif block.type == "thinking" and block.thinking:
                yield {"contentBlockDelta": {"delta": {"reasoningContent": {"text": block.thinking}}}}
        elif kind == "content_block_delta":
            delta = event.delta
            if delta.type == "text_delta":
                yield {"contentBlockDelta": {"delta": {"text": delta.text}}}
            elif delta.type == "input_json_delta":
                yield {"contentBlockDelta": {"delta": {"toolUse": {"input": delta.partial_json}}}}
            elif delta.type == "thinking_delta":
                yield {"contentBlockDelta": {"delta": {"reasoningContent": {"text": delta.thinking}}}}
            elif delta.type == "signature_delta":
                yield {"contentBlockDelta": {"delta": {"reasoningContent": {"signature": delta.signature}}}}
        elif kind == "content_block_stop":
            yield {"contentBlockStop": {}}
        elif kind == "message_delta":
            if event.delta.stop_reason:
                stop = _STOP_REASONS.get(event.delta.stop_reason, "end_turn")
            usage = event.usage
            if usage is not None:
                output_tokens = int(getattr(usage, "output_tokens", 0) or output_tokens)
                input_tokens = max(input_tokens, _input_tokens(usage))
    yield {"messageStop": {"stopReason": stop}}
    yield {"metadata": {"usage": {"inputTokens": input_tokens, "outputTokens": output_tokens, "totalTokens": input_tokens + output_tokens}}}


def _input_tokens(usage: Any) -> int:
    """All input tokens, cached or not."""
    names = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
    return sum(int(getattr(usage, name, 0) or 0) for name in names)


def _format_tool_choice(choice: ToolChoice) -> dict[str, Any]:
    if "tool" in choice:
        return {"type": "tool", "name": choice["tool"]["name"]}
    if "any" in choice:
        return {"type": "any"}
    return {"type": "auto"}


def _format_message(message: Message, where: str) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = []
    for index, block in enumerate(message["content"]):
        path = f"{where}.content[{index}]"
        if "cachePoint" in block:
            if blocks:
                blocks[-1]["cache_control"] = {"type": "ephemeral"}
            continue
        formatted = _format_block(block, path)
        if formatted is not None:
            blocks.append(formatted)
    # The API wants a user turn's tool results before anything else in it.
    blocks.sort(key=lambda b: b["type"] != "tool_result")
    return {"role": message["role"], "content": blocks}


def _format_block(block: ContentBlock, path: str) -> dict[str, Any] | None:
    if "text" in block:
        return {"type": "text", "text": block["text"]}
    if "image" in block:
        return _image(block["image"], f"{path}.image")
    if "document" in block:
        return _document(block["document"], f"{path}.document")
    if "toolUse" in block:
        use = block["toolUse"]
        return {"type": "tool_use", "id": use["toolUseId"], "name": use["name"], "input": use["input"]}
    if "toolResult" in block:
        result = block["toolResult"]
        content = [_tool_result_item(item, f"{path}.toolResult.content[{i}]") for i, item in enumerate(result["content"])]
        return {"type": "tool_result", "tool_use_id": result["toolUseId"], "content": content, "is_error": result["status"] == "error"}
    if "reasoningContent" in block:
        reasoning = block["reasoningContent"]
        if "redactedContent" in reasoning:
            data = to_bytes(reasoning["redactedContent"], f"{path}.reasoningContent.redactedContent")
            return {"type": "redacted_thinking", "data": data.decode("utf-8")}
        text = reasoning.get("reasoningText")
        if text is not None:
            return {"type": "thinking", "thinking": text["text"], "signature": text.get("signature", "")}
    return None


def _tool_result_item(item: ToolResultContent, path: str) -> dict[str, Any]:
    if "image" in item:
        return _image(item["image"], f"{path}.image")
    if "document" in item:
        return _document(item["document"], f"{path}.document")
    if "json" in item:
        return {"type": "text", "text": json.dumps(item["json"], ensure_ascii=False)}
    return {"type": "text", "text": item.get("text", "")}


def _image(image: Any, path: str) -> dict[str, Any]:
    media = image_media_type(image["format"], path)
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": media, "data": b64(image["source"]["bytes"], f"{path}.source.bytes")},
    }


def _document(doc: Any, path: str) -> dict[str, Any]:
    fmt = doc["format"].lower()
    if fmt == "pdf":
        source = {"type": "base64", "media_type": "application/pdf", "data": b64(doc["source"]["bytes"], f"{path}.source.bytes")}
    elif fmt in TEXT_DOCUMENT_FORMATS:
        text = to_bytes(doc["source"]["bytes"], f"{path}.source.bytes").decode("utf-8", errors="replace")
        source = {"type": "text", "media_type": "text/plain", "data": text}
    else:
        raise ModelError(f"{path}.format {doc['format']!r} is not supported by Anthropic; use pdf or a text format")
    return {"type": "document", "source": source, "title": doc["name"]}


def _error_type(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict) and isinstance(error.get("type"), str):
            return str(error["type"])
    return ""


def _retry_after(exc: Any) -> float | None:
    response = getattr(exc, "response", None)
    value = response.headers.get("retry-after") if response is not None else None
    try:
        return float(value) if value else None
    except ValueError:
        return None


def _map_error(exc: Any, anthropic: Any) -> ModelError:
    """An ``anthropic.APIError`` (HTTP status or an in-stream error event) → a Tether error."""
    message = str(getattr(exc, "message", None) or exc)
    kind = _error_type(exc)
    status = getattr(exc, "status_code", None)
    transient = isinstance(status, int) and (status >= 500 or status in (408, 409))  # what the SDK would retry (its retries are off)
    if isinstance(exc, anthropic.RateLimitError) or kind in _THROTTLE_TYPES or transient:
        return ModelThrottledError(f"Anthropic throttled the request ({kind or status}): {message}", retry_after=_retry_after(exc))
    if isinstance(exc, (anthropic.AuthenticationError, anthropic.PermissionDeniedError)) or kind in _AUTH_TYPES:
        return ModelAuthError(
            f"Anthropic rejected the credentials ({message}); set a valid ANTHROPIC_API_KEY or pass AnthropicModel(api_key=...)"
        )
    if (status == 400 or kind == "invalid_request_error") and any(marker in message.lower() for marker in _OVERFLOW_MARKERS):
        return ContextWindowOverflowError(f"the request exceeds the model's context window: {message}")
    return ModelError(f"Anthropic request failed: {type(exc).__name__}: {message}")
