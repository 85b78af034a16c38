"""Folding normalized model stream events into one assistant message.

Pure: the accumulator takes events and builds the message; the driver decides what to forward
to the caller.
"""

from __future__ import annotations

from typing import Any, cast

from .._json import brief, decode_bytes, describe_non_json, is_json, parse_json
from ..errors import ModelResponseError
from ..types import ContentBlock, Message, StreamEvent


class StreamAccumulator:
    """Builds the assistant message, stop reason, usage and model state from stream events."""

    __slots__ = (
        "_bad",
        "_reasoning",
        "_redacted",
        "_signature",
        "_text",
        "_tool",
        "_tool_input",
        "content",
        "metrics",
        "model_state",
        "stop_reason",
        "usage",
    )

    def __init__(self) -> None:
        self.content: list[ContentBlock] = []
        self.stop_reason: str = "end_turn"
        self.usage: dict[str, int] = {}
        self.model_state: dict[str, Any] | None = None
        self.metrics: dict[str, Any] = {}
        self._text: list[str] | None = None
        self._tool: dict[str, str] | None = None
        self._tool_input: list[str] = []
        self._reasoning: list[str] | None = None
        self._signature: str | None = None
        self._redacted: bytes | None = None
        self._bad: str | None = None

    def add(self, event: StreamEvent) -> None:
        """Fold one event.

        Events come from a model (a provider's adapter or the application's own ``Model``), so
        each is checked as it is folded: a malformed one (not an object, a missing ``delta`` or
        ``stopReason``, text that is not a string, usage that is not token counts, ...) raises
        :class:`~tether.errors.ModelResponseError` naming the event and field, never a
        ``KeyError`` or ``TypeError`` from deeper in. Keys this fold does not read are ignored.
        """
        if type(event) is not dict:
            raise _malformed("a model stream event", "an object", event)
        fields = cast("dict[str, Any]", event)
        if "contentBlockDelta" in event:
            delta = _object(_object(fields, "contentBlockDelta", ""), "delta", "contentBlockDelta")
            if "text" in delta:
                text = delta["text"]
                if type(text) is not str:
                    raise _malformed("contentBlockDelta.delta.text", "a string", text)
                if self._text is None:
                    self._text = []
                self._text.append(text)
            elif "toolUse" in delta:
                use = _object(delta, "toolUse", "contentBlockDelta.delta")
                self._tool_input.append(_string(use, "input", "contentBlockDelta.delta.toolUse"))
            elif "reasoningContent" in delta:
                reasoning = _object(delta, "reasoningContent", "contentBlockDelta.delta")
                where = "contentBlockDelta.delta.reasoningContent"
                if "text" in reasoning:
                    if self._reasoning is None:
                        self._reasoning = []
                    self._reasoning.append(_string(reasoning, "text", where))
                if "signature" in reasoning:
                    self._signature = _string(reasoning, "signature", where)
                if "redactedContent" in reasoning:
                    self._redacted = _bytes(reasoning["redactedContent"], f"{where}.redactedContent")
        elif "contentBlockStart" in event:
            self._close_block()
            block = _object(fields, "contentBlockStart", "")
            start = _object(block, "start", "contentBlockStart") if "start" in block else {}
            if "toolUse" in start:
                use = _object(start, "toolUse", "contentBlockStart.start")
                where = "contentBlockStart.start.toolUse"
                self._tool = {"toolUseId": _string(use, "toolUseId", where), "name": _string(use, "name", where)}
                self._tool_input = []
        elif "contentBlockStop" in event:
            self._close_block()
        elif "messageStop" in event:
            self._close_block()
            self.stop_reason = _string(_object(fields, "messageStop", ""), "stopReason", "messageStop")
        elif "metadata" in event:
            metadata = _object(fields, "metadata", "")
            if "usage" in metadata:
                self.usage = _usage(metadata["usage"])
            if "metrics" in metadata:
                self.metrics = dict(_object(metadata, "metrics", "metadata"))
        elif "modelState" in event:
            state = _object(fields, "modelState", "")
            if not is_json(state):
                raise ModelResponseError(describe_non_json(state, "the model stream event modelState"))
            self.model_state = dict(state)

    def _close_block(self) -> None:
        if self._tool is not None:
            raw = "".join(self._tool_input)
            try:
                value = parse_json(raw) if raw.strip() else {}
            except ValueError as exc:
                # Judged in message(): a truncated call is expected when the stop reason is
                # max_tokens (the loop drops it), an error otherwise.
                self._bad = f"tool call {self._tool['name']!r} ({self._tool['toolUseId']}) has invalid JSON input: {exc}"
            else:
                self.content.append({"toolUse": {"toolUseId": self._tool["toolUseId"], "name": self._tool["name"], "input": value}})
            self._tool = None
            self._tool_input = []
        if self._reasoning is not None or self._redacted is not None:
            block: dict[str, Any] = {}
            if self._reasoning is not None:
                text: dict[str, Any] = {"text": "".join(self._reasoning)}
                if self._signature is not None:
                    text["signature"] = self._signature
                block["reasoningText"] = text
            if self._redacted is not None:
                block["redactedContent"] = self._redacted
            self.content.append({"reasoningContent": block})  # type: ignore[typeddict-item]
            self._reasoning = None
            self._signature = None
            self._redacted = None
        if self._text is not None:
            self.content.append({"text": "".join(self._text)})
            self._text = None

    def message(self) -> Message:
        """The complete assistant message."""
        self._close_block()
        if self._bad is not None and self.stop_reason != "max_tokens":
            raise ModelResponseError(self._bad)
        return {"role": "assistant", "content": self.content}


def _malformed(where: str, expected: str, got: Any) -> ModelResponseError:
    """The error for a malformed stream event: the field, what it must be and what it was."""
    return ModelResponseError(f"the model stream event {where} must be {expected}, got {type(got).__name__} {brief(got)}")


def _object(container: dict[str, Any], key: str, where: str) -> dict[str, Any]:
    """``container[key]``, which must be an object (a missing key is ``None``)."""
    value = container.get(key)
    if type(value) is not dict:
        raise _malformed(f"{where}.{key}" if where else key, "an object", value)
    return value


def _string(container: dict[str, Any], key: str, where: str) -> str:
    """``container[key]``, which must be a string (a missing key is ``None``)."""
    value = container.get(key)
    if type(value) is not str:
        raise _malformed(f"{where}.{key}", "a string", value)
    return value


def _bytes(value: Any, where: str) -> bytes:
    """``value`` as bytes: bytes, or a ``{"$b64": ...}`` envelope (a replayed cassette's)."""
    try:
        decoded = decode_bytes(value)
    except ValueError:
        decoded = None
    if decoded is None:
        raise _malformed(where, "bytes", value)
    return decoded


def _usage(value: Any) -> dict[str, int]:
    """A copy of ``metadata.usage``: an object of non-negative integer token counts."""
    if type(value) is not dict:
        raise _malformed("metadata.usage", "an object of token counts", value)
    for key, count in value.items():
        if type(count) is not int or count < 0:
            raise _malformed(f"metadata.usage.{key}", "a non-negative integer", count)
    return dict(value)
