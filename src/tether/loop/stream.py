"""Folding normalized model stream events into one assistant message.

Pure: the accumulator takes events and builds the message; the driver decides what to forward
to the caller.
"""

from __future__ import annotations

import json
from typing import Any

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
        """Fold one event."""
        if "contentBlockDelta" in event:
            delta = event["contentBlockDelta"]["delta"]
            if "text" in delta:
                if self._text is None:
                    self._text = []
                self._text.append(delta["text"])
            elif "toolUse" in delta:
                self._tool_input.append(delta["toolUse"]["input"])
            elif "reasoningContent" in delta:
                reasoning = delta["reasoningContent"]
                if "text" in reasoning:
                    if self._reasoning is None:
                        self._reasoning = []
                    self._reasoning.append(reasoning["text"])
                if "signature" in reasoning:
                    self._signature = reasoning["signature"]
                if "redactedContent" in reasoning:
                    self._redacted = reasoning["redactedContent"]
        elif "contentBlockStart" in event:
            self._close_block()
            start = event["contentBlockStart"].get("start", {})
            if "toolUse" in start:
                self._tool = {"toolUseId": start["toolUse"]["toolUseId"], "name": start["toolUse"]["name"]}
                self._tool_input = []
        elif "contentBlockStop" in event:
            self._close_block()
        elif "messageStop" in event:
            self._close_block()
            self.stop_reason = event["messageStop"]["stopReason"]
        elif "metadata" in event:
            metadata = event["metadata"]
            if "usage" in metadata:
                self.usage = dict(metadata["usage"])  # type: ignore[arg-type]
            if "metrics" in metadata:
                self.metrics = dict(metadata["metrics"])
        elif "modelState" in event:
            self.model_state = dict(event["modelState"])

    def _close_block(self) -> None:
        if self._tool is not None:
            raw = "".join(self._tool_input)
            try:
                value = json.loads(raw) if raw.strip() else {}
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
