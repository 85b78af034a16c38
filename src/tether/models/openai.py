"""`OpenAIModel`: Chat Completions through the official ``openai`` SDK.

Streams with usage, maps tool calls and tool results (``role: "tool"`` messages), images as data
URLs, and OpenAI's errors onto Tether's. ``base_url`` points it at any OpenAI-compatible server
(vLLM, llama.cpp's server, Ollama, ...). The SDK is imported when the first request is made.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

from ..errors import ContextWindowOverflowError, ModelAuthError, ModelError, ModelThrottledError
from ..types import ContentBlock, Message, ModelRequest, StopReason, StreamEvent, ToolChoice, ToolSpec
from ._format import TEXT_DOCUMENT_FORMATS, b64, image_media_type, merge_same_role, to_bytes, tool_result_text
from ._sdk_model import SDKClientModel
from .base import output_cap

_STOP_REASONS: dict[str, StopReason] = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "content_filtered",
}

_OVERFLOW_MARKERS = ("context_length_exceeded", "maximum context length", "context window", "too many tokens", "prompt is too long")


class OpenAIModel(SDKClientModel):
    """A model served by the OpenAI Chat Completions API (or a compatible server).

    ``params`` go into every request verbatim (``temperature``, ``max_tokens``, ...);
    ``client_args`` go to ``openai.AsyncOpenAI`` (``timeout``, ...). The SDK's own retries are
    off (``max_retries=0``): the agent's :class:`~tether.RetryPolicy` retries throttled and
    temporarily failing calls, so there is one retry policy, not two (``client_args`` may still
    set ``max_retries``). The API key
    comes from ``api_key`` or ``OPENAI_API_KEY``; with a ``base_url`` and no key, a placeholder
    is sent, since local servers usually need none.

    Args:
        model: The model id (``"gpt-4o"``).
        api_key: The API key (default: ``OPENAI_API_KEY``).
        base_url: An OpenAI-compatible server's URL (``http://127.0.0.1:8000/v1``).
        params: Request parameters sent with every call (``temperature``, ``max_tokens``, ...).
        client_args: Arguments of ``openai.AsyncOpenAI`` (``timeout``, ...).
        stream_usage: Ask for token usage in the stream (``stream_options``); turn it off for
            servers that refuse the option.
    """

    _sdk = "openai"
    _label = "OpenAIModel"

    def __init__(
        self,
        model: str = "gpt-4o",
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        params: dict[str, Any] | None = None,
        client_args: dict[str, Any] | None = None,
        stream_usage: bool = True,
    ) -> None:
        super().__init__(model, api_key, base_url, params, client_args)
        self.stream_usage = stream_usage

    def _make_client(self, sdk: Any, args: dict[str, Any]) -> Any:
        return sdk.AsyncOpenAI(api_key=self._key(), base_url=self.base_url, **args)

    def _key(self) -> str:
        key = self._given_key("OPENAI_API_KEY")
        if not key:
            if self.base_url is None:
                raise ModelAuthError("no OpenAI API key: set the OPENAI_API_KEY environment variable or pass OpenAIModel(api_key=...)")
            key = "unused"
        return key

    def format_request(self, request: ModelRequest) -> dict[str, Any]:
        """The keyword arguments of ``chat.completions.create`` for ``request`` (without streaming flags)."""
        messages: list[dict[str, Any]] = []
        system = "\n".join(block["text"] for block in request["system_prompt"] or [] if "text" in block)
        if system:
            messages.append({"role": "system", "content": system})
        for index, message in enumerate(merge_same_role(request["messages"])):
            messages.extend(_format_message(message, f"messages[{index}]"))
        kwargs: dict[str, Any] = {"model": self.model, "messages": messages, **self.params}
        if "max_tokens" in request:  # a run's budget caps the reply
            # OpenAI's own API names the cap max_completion_tokens; compatible servers know max_tokens.
            compatible = self.base_url is not None and "max_completion_tokens" not in kwargs
            key = "max_tokens" if "max_tokens" in kwargs or compatible else "max_completion_tokens"
            kwargs[key] = output_cap(request, kwargs.get(key))
        if request["tool_specs"]:
            kwargs["tools"] = [_format_tool(spec) for spec in request["tool_specs"]]
            if request["tool_choice"] is not None:
                kwargs["tool_choice"] = _format_tool_choice(request["tool_choice"])
        return kwargs

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        kwargs = self.format_request(request)
        kwargs["stream"] = True
        if self.stream_usage:
            kwargs["stream_options"] = {"include_usage": True}
        client = self._client()
        # aclosing: a caller that stops early closes the response now, not when the generator is collected.
        stream = self._stream_of(lambda: client.chat.completions.create(**kwargs), _map_stream, _map_error)
        async with contextlib.aclosing(stream) as events:
            async for event in events:
                yield event


async def _map_stream(response: Any) -> AsyncIterator[StreamEvent]:
    """Chat Completions chunks → Tether events (tool calls are emitted whole, in index order)."""
    yield {"messageStart": {"role": "assistant"}}
    in_text = False
    in_reasoning = False
    calls: dict[int, dict[str, Any]] = {}
    finish: str | None = None
    usage: Any = None
    async for chunk in response:
        if getattr(chunk, "usage", None) is not None:
            usage = chunk.usage
        for choice in chunk.choices or ():
            delta = choice.delta
            reasoning = getattr(delta, "reasoning_content", None) if delta is not None else None
            if reasoning:
                if in_text:
                    yield {"contentBlockStop": {}}
                    in_text = False
                in_reasoning = True
                yield {"contentBlockDelta": {"delta": {"reasoningContent": {"text": reasoning}}}}
            if delta is not None and delta.content:
                if in_reasoning:
                    yield {"contentBlockStop": {}}
                    in_reasoning = False
                in_text = True
                yield {"contentBlockDelta": {"delta": {"text": delta.content}}}
            for call in (delta.tool_calls if delta is not None else None) or ():
                slot = calls.setdefault(call.index, {"id": "", "name": "", "arguments": []})
                if call.id:
                    slot["id"] = call.id
                if call.function is not None:
                    name = call.function.name
                    # OpenAI sends the name once; some compatible servers repeat it in every chunk.
                    if name and name != slot["name"]:
                        slot["name"] += name
                    if call.function.arguments:
                        slot["arguments"].append(call.function.arguments)
            if choice.finish_reason:
                finish = choice.finish_reason
    if in_text or in_reasoning:
        yield {"contentBlockStop": {}}
    for index in sorted(calls):
        slot = calls[index]
        yield {"contentBlockStart": {"start": {"toolUse": {"toolUseId": slot["id"] or f"call_{index}", "name": slot["name"]}}}}
        yield {"contentBlockDelta": {"delta": {"toolUse": {"input": "".join(slot["arguments"])}}}}
        yield {"contentBlockStop": {}}
    stop: StopReason = _STOP_REASONS.get(finish or "stop", "end_turn")
    if calls and stop == "end_turn":
        stop = "tool_use"  # some compatible servers report "stop" after tool calls
    yield {"messageStop": {"stopReason": stop}}
    if usage is not None:
        inp = int(usage.prompt_tokens or 0)
        out = int(usage.completion_tokens or 0)
        yield {"metadata": {"usage": {"inputTokens": inp, "outputTokens": out, "totalTokens": int(usage.total_tokens or inp + out)}}}


def _format_tool(spec: ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": spec["name"], "description": spec["description"], "parameters": spec["inputSchema"]["json"]},
    }


def _format_tool_choice(choice: ToolChoice) -> Any:
    if "tool" in choice:
        return {"type": "function", "function": {"name": choice["tool"]["name"]}}
    if "any" in choice:
        return "required"
    return "auto"


def _format_message(message: Message, where: str) -> list[dict[str, Any]]:
    """One Tether message → OpenAI messages (tool results become ``role: "tool"`` messages first)."""
    if message["role"] == "assistant":
        return [_format_assistant(message)]
    tool_messages: list[dict[str, Any]] = []
    parts: list[dict[str, Any]] = []
    for index, block in enumerate(message["content"]):
        path = f"{where}.content[{index}]"
        if "toolResult" in block:
            result = block["toolResult"]
            text = tool_result_text(result["content"])
            tool_messages.append({"role": "tool", "tool_call_id": result["toolUseId"], "content": text})
            # Tool messages take text only: images a tool returned follow as a user message.
            for item_index, item in enumerate(result["content"]):
                if "image" in item:
                    parts.append(_image_part(item["image"], f"{path}.toolResult.content[{item_index}].image"))
        else:
            part = _format_user_block(block, path)
            if part is not None:
                parts.append(part)
    out = tool_messages
    if parts:
        out.append({"role": "user", "content": parts})
    return out


def _format_user_block(block: ContentBlock, path: str) -> dict[str, Any] | None:
    if "text" in block:
        return {"type": "text", "text": block["text"]}
    if "image" in block:
        return _image_part(block["image"], f"{path}.image")
    if "document" in block:
        doc = block["document"]
        fmt = doc["format"].lower()
        if fmt in TEXT_DOCUMENT_FORMATS:
            text = to_bytes(doc["source"]["bytes"], f"{path}.document.source.bytes").decode("utf-8", errors="replace")
            return {"type": "text", "text": f"[document {doc['name']}]\n{text}"}
        if fmt == "pdf":
            data = b64(doc["source"]["bytes"], f"{path}.document.source.bytes")
            return {"type": "file", "file": {"filename": doc["name"], "file_data": f"data:application/pdf;base64,{data}"}}
        raise ModelError(f"{path}.document.format {doc['format']!r} is not supported by OpenAI; use pdf or a text format")
    return None  # cachePoint and reasoning have no Chat Completions form


def _image_part(image: Any, path: str) -> dict[str, Any]:
    media = image_media_type(image["format"], path)
    data = b64(image["source"]["bytes"], f"{path}.source.bytes")
    return {"type": "image_url", "image_url": {"url": f"data:{media};base64,{data}"}}


def _format_assistant(message: Message) -> dict[str, Any]:
    text = "".join(block["text"] for block in message["content"] if "text" in block)
    out: dict[str, Any] = {"role": "assistant", "content": text}
    calls = [
        {
            "id": block["toolUse"]["toolUseId"],
            "type": "function",
            "function": {"name": block["toolUse"]["name"], "arguments": json.dumps(block["toolUse"]["input"], ensure_ascii=False)},
        }
        for block in message["content"]
        if "toolUse" in block
    ]
    if calls:
        # "" rather than null or absent: compatible servers (llama.cpp's) refuse both of those.
        out["tool_calls"] = calls
    return out


def _retry_after(headers: Any) -> float | None:
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value:
            try:
                return float(value) * scale
            except ValueError:
                continue
    return None


def _map_error(exc: Any, openai: Any) -> ModelError:
    """An ``openai.APIError`` → the Tether error the loop knows how to handle."""
    message = str(getattr(exc, "message", None) or exc)
    code = str(getattr(exc, "code", None) or "")
    if isinstance(exc, openai.RateLimitError):
        if code == "insufficient_quota":
            return ModelError(f"OpenAI quota exhausted (not retried): {message}; check the plan and billing of the OPENAI_API_KEY account")
        return ModelThrottledError(f"OpenAI rate limit: {message}", retry_after=_retry_after(getattr(exc.response, "headers", None)))
    if isinstance(exc, (openai.AuthenticationError, openai.PermissionDeniedError)):
        return ModelAuthError(f"OpenAI rejected the credentials ({message}); set a valid OPENAI_API_KEY or pass OpenAIModel(api_key=...)")
    if isinstance(exc, openai.APIConnectionError):  # a timeout too
        request = getattr(exc, "request", None)
        where = f" {request.url}" if request is not None else ""
        return ModelError(f"OpenAI request failed: cannot reach{where} ({type(exc).__name__}: {message}); is the server up at that URL?")
    lowered = f"{code} {message}".lower()
    if isinstance(exc, openai.BadRequestError) and any(marker in lowered for marker in _OVERFLOW_MARKERS):
        return ContextWindowOverflowError(f"the request exceeds the model's context window: {message}")
    if isinstance(exc, openai.APIStatusError) and (exc.status_code >= 500 or exc.status_code in (408, 409)):
        # what the SDK itself would retry: the agent's RetryPolicy does (the SDK's retries are off)
        return ModelThrottledError(
            f"OpenAI is unavailable (HTTP {exc.status_code}): {message}", retry_after=_retry_after(exc.response.headers)
        )
    return ModelError(f"OpenAI request failed: {type(exc).__name__}: {message}")
