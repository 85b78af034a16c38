"""`ScriptedModel`: a deterministic model for testing agents and the loop itself.

``ScriptedModel(responses)`` answers each call with the next item: a ``str`` (a text reply that
ends the turn), an assistant message dict (its ``toolUse`` blocks make the loop run tools), a
callable taking the request's messages and returning one of those, or an exception instance
(raised, to test error paths). Running out of responses raises
:class:`~tether.errors.ScriptExhaustedError`.

A request's ``max_tokens`` (a run's budget) is honoured as a provider honours it: a reply whose
scripted output usage is larger reports ``max_tokens`` output tokens and stops with
``max_tokens`` (its text kept, its tool calls dropped by the loop).

The position in the script is ``model_state["scripted_index"]`` when ``stateful=True``, so a
scripted run resumed from a snapshot in a fresh process continues the same script; by default
the index lives on the instance (a reused model keeps counting).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from typing import Any, TypeAlias

from ..errors import ConfigurationError, ScriptExhaustedError
from ..types import Message, ModelRequest, StreamEvent

ScriptItem: TypeAlias = "str | Message | dict[str, Any] | BaseException | Callable[[list[Message]], Any]"


class ScriptedModel:
    """A model that replays a script; see the module docstring."""

    def __init__(
        self,
        responses: Iterable[Any],
        *,
        usage: tuple[int, int] = (10, 5),
        stateful: bool = False,
        model_id: str = "scripted",
    ) -> None:
        """A model answering each call with the next item of a script.

        Args:
            responses: The script: strings, assistant messages, callables of the messages, or
                exception instances to raise (see the module docstring).
            usage: The ``(input, output)`` token counts reported for every reply.
            stateful: Keep the script position in the run's ``model_state`` (so a resumed run
                continues the script in another process) instead of on the instance.
            model_id: The id the model reports (``model_id``).
        """
        self.responses: list[Any] = list(responses)
        self.index = 0
        self.calls: list[ModelRequest] = []
        self.record_requests = False
        self.usage = usage
        self.stateful = stateful
        self._model_id = model_id

    @property
    def model_id(self) -> str:
        return self._model_id

    def get_config(self) -> dict[str, Any]:
        return {"provider": "scripted", "responses": len(self.responses)}

    def _next(self, request: ModelRequest) -> Any:
        index = int(request["model_state"].get("scripted_index", 0)) if self.stateful else self.index
        if index >= len(self.responses):
            raise ScriptExhaustedError(
                f"ScriptedModel ran out of responses: call #{index + 1} but the script has "
                f"{len(self.responses)}; add responses or check why the agent called the model again"
            )
        self.index = index + 1
        item = self.responses[index]
        if callable(item) and not isinstance(item, (dict, str)):
            item = item(request["messages"])
        return item

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        if self.record_requests:
            # The request's lists are the run's live ones: record them as they are now.
            self.calls.append({**request, "messages": list(request["messages"])})
        item = self._next(request)
        if self.stateful:
            yield {"modelState": {"scripted_index": self.index}}
        if isinstance(item, BaseException):
            raise item
        message = _as_message(item)
        yield {"messageStart": {"role": "assistant"}}
        stop = "end_turn"
        for block in message["content"]:
            if "text" in block:
                yield {"contentBlockDelta": {"delta": {"text": block["text"]}}}
                yield {"contentBlockStop": {}}
            elif "toolUse" in block:
                use = block["toolUse"]
                stop = "tool_use"
                yield {"contentBlockStart": {"start": {"toolUse": {"toolUseId": use.get("toolUseId", ""), "name": use["name"]}}}}
                yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(use.get("input", {}))}}}}
                yield {"contentBlockStop": {}}
            elif "reasoningContent" in block:
                reasoning = block["reasoningContent"]
                text = reasoning.get("reasoningText", {})
                delta: dict[str, Any] = {}
                if "text" in text:
                    delta["text"] = text["text"]
                if "signature" in text:
                    delta["signature"] = text["signature"]
                if "redactedContent" in reasoning:
                    delta["redactedContent"] = reasoning["redactedContent"]
                yield {"contentBlockDelta": {"delta": {"reasoningContent": delta}}}  # type: ignore[typeddict-item]
                yield {"contentBlockStop": {}}
        stop_reason: Any = dict(message).get("stopReason", stop)
        inp, out = self.usage
        cap = request.get("max_tokens")
        if cap is not None and out > cap:
            out, stop_reason = cap, "max_tokens"
        yield {"messageStop": {"stopReason": stop_reason}}
        yield {"metadata": {"usage": {"inputTokens": inp, "outputTokens": out, "totalTokens": inp + out}}}


def _as_message(item: Any) -> Message:
    if isinstance(item, str):
        return {"role": "assistant", "content": [{"text": item}]}
    if isinstance(item, dict) and isinstance(item.get("content"), list):
        return item  # type: ignore[return-value]
    raise ConfigurationError(
        f"ScriptedModel response must be a str, an assistant message dict or a callable returning one; got {item!r:.80}"
    )


def tool_call(name: str, input: dict[str, Any] | None = None, *, tool_use_id: str | None = None, text: str | None = None) -> Message:
    """An assistant message that calls one tool (a convenience for scripts).

    Args:
        name: The tool's name.
        input: The tool's input (default: ``{}``).
        tool_use_id: The call's ``toolUseId`` (default: none, so the loop assigns a
            deterministic one).
        text: Text the message says before the call.
    """
    content: list[Any] = []
    if text:
        content.append({"text": text})
    use: dict[str, Any] = {"name": name, "input": input or {}}
    if tool_use_id is not None:
        use["toolUseId"] = tool_use_id
    content.append({"toolUse": use})
    return {"role": "assistant", "content": content}


def tool_calls(calls: Sequence[tuple[str, dict[str, Any]]]) -> Message:
    """An assistant message that calls several tools at once.

    Args:
        calls: ``(name, input)`` of each call, in order (the loop assigns their ids).
    """
    return {"role": "assistant", "content": [{"toolUse": {"name": n, "input": i}} for n, i in calls]}  # type: ignore[typeddict-item]
