"""A Strands-style custom model run as a Tether model.

A Strands program's own model is a subclass of ``strands.models.Model`` (or of
:class:`tether.strands.models.Model`, after the import is changed) whose ``stream(messages,
tool_specs, system_prompt, *, tool_choice, system_prompt_content, invocation_state, ...)``
yields Bedrock ConverseStream-style events. :class:`CustomModel` is the Tether
:class:`~tether.models.Model` around it: it makes that call from Tether's
:class:`~tether.types.ModelRequest` with the arguments Strands' event loop passes, and re-emits
the events so Tether's stream fold builds the message Strands' fold builds (see
:class:`_StrandsFold`). Errors the model raises named like Strands' ``ModelThrottledException``
and ``ContextWindowOverflowException`` become Tether's retry and overflow errors.
"""

from __future__ import annotations

import contextvars
import copy
import json
import logging
import re
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

from ..._json import decode_bytes, is_envelope
from ...errors import ConfigurationError, ContextWindowOverflowError, ModelError, ModelResponseError, ModelThrottledError
from ...types import ModelRequest, StreamEvent

_log = logging.getLogger(__name__)

INVOCATION_STATE: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar("tether_strands_invocation_state", default=None)
"""The ``invocation_state`` a custom model's ``stream`` receives: the facade's agent sets it for
the duration of an invocation (Strands passes the keyword arguments the agent was called with);
unset, the model receives ``{}``."""

THROTTLED_NAMES = frozenset({"ModelThrottledException"})
"""Exception class names (anywhere in the raised exception's MRO) that mean "throttled, retry"."""

OVERFLOW_NAMES = frozenset({"ContextWindowOverflowException"})
"""Exception class names that mean "the context window overflowed, reduce and retry"."""

_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_\-]{1,64}$")


def is_strands_model(value: Any) -> bool:
    """True for an instance of a Strands ``Model`` subclass: this facade's or the real package's
    (recognised by the base class's name and module, so ``strands`` is never imported here)."""
    return any(
        cls.__name__ == "Model" and cls.__module__ in ("strands.models.model", "tether.strands.models.model") for cls in type(value).__mro__
    )


class CustomModel:
    """A Tether model that runs a Strands-style model's ``stream``.

    Args:
        model: An instance of a ``Model`` subclass written for Strands.
    """

    def __init__(self, model: Any) -> None:
        if not callable(getattr(model, "stream", None)):
            raise ConfigurationError(f"model {type(model).__name__} has no stream() method; a Strands Model subclass must define one")
        self.model = model

    @property
    def model_id(self) -> str:
        """``strands:<class name>``, with the config's ``model_id`` when it has one."""
        configured = self.get_config().get("model_id")
        name = f"strands:{type(self.model).__name__}"
        return f"{name}:{configured}" if isinstance(configured, str) and configured else name

    def get_config(self) -> dict[str, Any]:
        """The wrapped model's ``get_config()`` as a dict (empty when it is not a mapping)."""
        config = self.model.get_config()
        return dict(config) if isinstance(config, Mapping) else {}

    async def stream(self, request: ModelRequest, *, raw: Callable[[Any], None] | None = None) -> AsyncIterator[StreamEvent]:
        """Call the wrapped model's ``stream`` as Strands' event loop does and re-emit its events.

        Args:
            request: Tether's model request.
            raw: Called with each event the wrapped model yields, unchanged and before the
                events re-emitted for it: the stream adapter forwards these as Strands'
                ``{"event": ...}`` (Strands forwards every chunk its model yields).
        """
        blocks = copy.deepcopy(request["system_prompt"]) if request["system_prompt"] is not None else None
        texts = [block["text"] for block in blocks or [] if "text" in block]
        model_state = copy.deepcopy(request["model_state"])
        before = copy.deepcopy(model_state)
        events: Any = None
        try:
            events = self.model.stream(
                strands_messages(request["messages"]),
                copy.deepcopy(request["tool_specs"]) or None,
                "\n".join(texts) if texts else None,
                tool_choice=copy.deepcopy(request["tool_choice"]),
                system_prompt_content=blocks,
                invocation_state=INVOCATION_STATE.get() or {},
                model_state=model_state,
                cancel_signal=None,
                agent_metadata=None,
            )
            if not hasattr(events, "__aiter__"):
                raise ConfigurationError(
                    f"{type(self.model).__name__}.stream() returned {type(events).__name__}, not an async iterable; "
                    "define it with async def and yield the events"
                )
            fold = _StrandsFold(type(self.model).__name__)
            async for event in events:
                if raw is not None:
                    raw(event)
                for out in fold.feed(event):
                    yield out
        except Exception as exc:
            mapped = map_error(exc)
            if mapped is None:
                raise
            raise mapped from exc
        finally:
            close = getattr(events, "aclose", None)
            if callable(close):
                await close()
        if model_state != before:
            yield {"modelState": model_state}


def map_error(exc: BaseException) -> ModelError | None:
    """The Tether error for an exception a Strands-style model raised, or None to raise it as is.

    Tether's own model errors pass unchanged (so a facade exception class deriving from
    :class:`~tether.errors.ModelThrottledError` keeps its class); an exception whose class, or
    a base of it, is named ``ModelThrottledException`` becomes
    :class:`~tether.errors.ModelThrottledError` (retried by the agent's ``RetryPolicy``), and
    ``ContextWindowOverflowException`` becomes :class:`~tether.errors.ContextWindowOverflowError`
    (the conversation manager reduces the conversation). Anything else propagates as raised.
    """
    if isinstance(exc, ModelError):
        return None
    names = {cls.__name__ for cls in type(exc).__mro__}
    if names & THROTTLED_NAMES:
        return ModelThrottledError(f"the model was throttled: {exc}")
    if names & OVERFLOW_NAMES:
        return ContextWindowOverflowError(f"the request exceeds the model's context window: {exc}")
    return None


def strands_messages(messages: list[Any]) -> list[dict[str, Any]]:
    """A deep copy of ``messages`` as Strands hands them to a model: role and content only, bytes
    as bytes (not base64 envelopes), and assistant messages normalised as Strands does (an empty
    one says ``[blank text]``; blank text is dropped beside tool calls and replaced otherwise; an
    invalid tool name becomes ``INVALID_TOOL_NAME``)."""
    out: list[dict[str, Any]] = []
    for message in messages:
        content = [_with_bytes(block) for block in message["content"]]
        if message["role"] == "assistant":
            content = _normalized(content)
        out.append({"role": message["role"], "content": content})
    return out


def _with_bytes(value: Any) -> Any:
    if is_envelope(value):
        return decode_bytes(value)
    if isinstance(value, dict):
        return {key: _with_bytes(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_with_bytes(item) for item in value]
    return value


def _normalized(content: list[dict[str, Any]]) -> list[dict[str, Any]]:
    if not content:
        return [{"text": "[blank text]"}]
    uses = [block["toolUse"] for block in content if "toolUse" in block]
    for use in uses:
        if not isinstance(use.get("name"), str) or not _TOOL_NAME.match(use["name"]):
            use["name"] = "INVALID_TOOL_NAME"
    if uses:
        return [block for block in content if "text" not in block or (block["text"] is not None and block["text"].strip())]
    for block in content:
        if "text" in block and (block["text"] is None or not block["text"].strip()):
            block["text"] = "[blank text]"
    return content


class _StrandsFold:
    """Re-emits a Strands-style model's events so Tether's fold builds Strands' message.

    Strands' fold differs from Tether's in ways a custom model can see, so the events are
    re-shaped here: a content block ends only at ``contentBlockStop`` (a ``contentBlockStart``
    closes nothing); a tool call is buffered and emitted whole when its block stops, with an
    empty or invalid JSON input as ``{}`` and a call missing its id or name skipped (both
    logged); reasoning signatures and redacted content accumulate; text, reasoning and redacted
    content in one block become separate blocks in that order; ``end_turn`` with tool calls is
    ``tool_use``; usage and metrics get Strands' zero defaults; empty deltas add nothing.
    """

    def __init__(self, model_name: str) -> None:
        self.model_name = model_name
        self.tool: dict[str, Any] | None = None
        self.open: str | None = None  # "text" | "reasoning" | "redacted" open in Tether's fold
        self.signature = ""
        self.redacted = b""
        self.tool_calls = 0

    def feed(self, event: Any) -> list[StreamEvent]:
        if not isinstance(event, dict):
            raise ModelResponseError(f"{self.model_name}.stream() yielded {type(event).__name__}, not an event dict")
        try:
            return self._feed(event)
        except (KeyError, TypeError, AttributeError) as exc:
            kind = next(iter(event), "?")
            raise ModelResponseError(f"{self.model_name}.stream() yielded a malformed {kind} event ({type(exc).__name__}: {exc})") from None

    def _feed(self, event: dict[str, Any]) -> list[StreamEvent]:
        if "messageStart" in event:
            return [{"messageStart": {"role": "assistant"}}]
        if "contentBlockStart" in event:
            start = event["contentBlockStart"].get("start") or {}
            use = start.get("toolUse")
            self.tool = {"toolUseId": use["toolUseId"], "name": use["name"], "input": ""} if use else {}
            return []
        if "contentBlockDelta" in event:
            return self._delta(event["contentBlockDelta"]["delta"])
        if "contentBlockStop" in event:
            return self._stop()
        if "messageStop" in event:
            reason = event["messageStop"]["stopReason"]
            if reason == "end_turn" and self.tool_calls:
                reason = "tool_use"
            return [{"messageStop": {"stopReason": reason}}]
        if "metadata" in event:
            metadata = event["metadata"]
            usage = {"inputTokens": 0, "outputTokens": 0, "totalTokens": 0, **dict(metadata.get("usage") or {})}
            metrics = {"latencyMs": 0, **dict(metadata.get("metrics") or {})}
            return [{"metadata": {"usage": usage, "metrics": metrics}}]  # type: ignore[typeddict-item]
        if "redactContent" in event:
            _log.warning("%s.stream() yielded redactContent, which the Strands facade does not apply", self.model_name)
        return []

    def _switch(self, kind: str) -> list[StreamEvent]:
        """Close the open kind of content in Tether's fold when another kind starts in the same block."""
        out: list[StreamEvent] = []
        if self.open is not None and self.open != kind:
            out.append({"contentBlockStop": {}})
        self.open = kind
        return out

    def _delta(self, delta: dict[str, Any]) -> list[StreamEvent]:
        if "toolUse" in delta:
            if self.tool is None:
                self.tool = {}
            self.tool["input"] = self.tool.get("input", "") + delta["toolUse"].get("input", "")
            for field in ("toolUseId", "name"):
                if field not in self.tool and field in delta["toolUse"]:
                    self.tool[field] = delta["toolUse"][field]
            return []
        if "text" in delta:
            if not delta["text"]:
                return []
            return [*self._switch("text"), {"contentBlockDelta": {"delta": {"text": delta["text"]}}}]
        if "reasoningContent" in delta:
            reasoning = delta["reasoningContent"]
            if "text" in reasoning:
                if not reasoning["text"]:
                    return []
                return [*self._switch("reasoning"), {"contentBlockDelta": {"delta": {"reasoningContent": {"text": reasoning["text"]}}}}]
            if "signature" in reasoning:
                opened = self.open != "reasoning"
                out = self._switch("reasoning")
                self.signature += reasoning["signature"]
                # Strands concatenates signature deltas; Tether's fold keeps the last, so send the whole.
                body: dict[str, Any] = {"signature": self.signature}
                if opened:
                    body["text"] = ""  # a signature alone still makes a reasoning block, as in Strands
                out.append({"contentBlockDelta": {"delta": {"reasoningContent": body}}})  # type: ignore[typeddict-item]
                return out
            if reasoning.get("redactedContent"):
                out = self._switch("redacted")
                self.redacted += bytes(reasoning["redactedContent"])
                out.append({"contentBlockDelta": {"delta": {"reasoningContent": {"redactedContent": self.redacted}}}})
                return out
        return []  # citations and unknown deltas: no Tether block holds them

    def _stop(self) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        tool, self.tool = self.tool, None
        if tool:
            raw = tool.get("input", "")
            if isinstance(raw, str) and not raw.strip():
                value: Any = {}
            else:
                try:
                    value = json.loads(raw)
                except ValueError:
                    _log.warning("%s: tool %r sent invalid JSON input, using {} as Strands does", self.model_name, tool.get("name"))
                    value = {}
            if tool.get("toolUseId") and tool.get("name"):
                self.tool_calls += 1
                out.append({"contentBlockStart": {"start": {"toolUse": {"toolUseId": tool["toolUseId"], "name": tool["name"]}}}})
                out.append({"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(value)}}}})
            else:
                _log.warning("%s: incomplete tool use block (no toolUseId or name), skipped as Strands does", self.model_name)
        self.open = None
        self.signature = ""
        self.redacted = b""
        out.append({"contentBlockStop": {}})
        return out
