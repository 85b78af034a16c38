"""Ported from strands-agents/sdk-python ``tests/fixtures/mocked_model_provider.py``.

A custom model written as a Strands ``Model`` subclass: it streams pre-defined assistant
messages as Bedrock-style events, one message per model call. Import-swapped like the tests,
so under ``tether.strands`` it exercises "custom models written as ``strands.models.Model``
subclasses run as Tether models".

Changes from upstream: a scripted response that is an exception is raised by that call
(upstream tests set a mock's ``side_effect``); ``structured_output`` yields ``{"output": ...}`` from a scripted list
(upstream leaves it empty and mocks it per test), and ``calls`` records what each ``stream``
call was given (upstream tests mock the model instead).
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Iterable, Sequence
from typing import Any, TypedDict

from pydantic import BaseModel

from tether.strands.models import Model


class RedactionMessage(TypedDict):
    """A scripted guardrail intervention (the user's input and the answer get redacted)."""

    redactedUserContent: str
    redactedAssistantContent: str


class MockedModelProvider(Model):
    """A model that answers with ``agent_responses`` in order (one per call)."""

    def __init__(
        self,
        agent_responses: Sequence[dict[str, Any] | BaseException],
        structured_outputs: Sequence[BaseModel] = (),
    ) -> None:
        self.agent_responses = [*agent_responses]
        self.structured_outputs = [*structured_outputs]
        self.index = 0
        self.calls: list[dict[str, Any]] = []
        self.structured_calls: list[dict[str, Any]] = []

    def get_config(self) -> Any:
        return {}

    def update_config(self, **model_config: Any) -> None:
        pass

    async def structured_output(
        self,
        output_model: type[BaseModel],
        prompt: Any,
        system_prompt: str | None = None,
        **kwargs: Any,
    ) -> AsyncGenerator[Any, None]:
        self.structured_calls.append({"output_model": output_model, "messages": plain_messages(prompt), "system_prompt": system_prompt})
        yield {"output": self.structured_outputs.pop(0)}

    async def stream(
        self,
        messages: Any,
        tool_specs: list[Any] | None = None,
        system_prompt: str | None = None,
        tool_choice: Any | None = None,
        **kwargs: Any,
    ) -> AsyncGenerator[Any, None]:
        self.calls.append(
            {
                "messages": plain_messages(messages),
                "tool_names": [spec["name"] for spec in tool_specs or []],
                "system_prompt": system_prompt,
            }
        )
        response = self.agent_responses[self.index]
        if isinstance(response, BaseException):
            self.index += 1
            raise response
        events = self.map_agent_message_to_events(response)
        for event in events:
            yield event

        self.index += 1

    def map_agent_message_to_events(self, agent_message: Any) -> Iterable[dict[str, Any]]:
        stop_reason = "end_turn"
        yield {"messageStart": {"role": "assistant"}}
        if agent_message.get("redactedAssistantContent"):
            yield {"redactContent": {"redactUserContentMessage": agent_message["redactedUserContent"]}}
            yield {"contentBlockStart": {"start": {}}}
            yield {"contentBlockDelta": {"delta": {"text": agent_message["redactedAssistantContent"]}}}
            yield {"contentBlockStop": {}}
            stop_reason = "guardrail_intervened"
        else:
            for content in agent_message["content"]:
                if "reasoningContent" in content:
                    yield {"contentBlockStart": {"start": {}}}
                    yield {"contentBlockDelta": {"delta": {"reasoningContent": content["reasoningContent"]}}}
                    yield {"contentBlockStop": {}}
                if "text" in content:
                    yield {"contentBlockStart": {"start": {}}}
                    yield {"contentBlockDelta": {"delta": {"text": content["text"]}}}
                    yield {"contentBlockStop": {}}
                if "toolUse" in content:
                    stop_reason = "tool_use"
                    yield {
                        "contentBlockStart": {
                            "start": {
                                "toolUse": {
                                    "name": content["toolUse"]["name"],
                                    "toolUseId": content["toolUse"]["toolUseId"],
                                }
                            }
                        }
                    }
                    yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(content["toolUse"]["input"])}}}}
                    yield {"contentBlockStop": {}}

        if "stopReason" in agent_message:
            stop_reason = agent_message["stopReason"]
        yield {"messageStop": {"stopReason": stop_reason}}
        if "usage" in agent_message:
            yield {"metadata": {"usage": agent_message["usage"], "metrics": {"latencyMs": 1}}}


def text(value: str) -> dict[str, Any]:
    """An assistant message with one text block (what the model answers)."""
    return {"role": "assistant", "content": [{"text": value}]}


def tool_call(name: str, input: dict[str, Any], tool_use_id: str) -> dict[str, Any]:
    """An assistant message calling one tool."""
    return {"role": "assistant", "content": [{"toolUse": {"name": name, "toolUseId": tool_use_id, "input": input}}]}


def plain(message: Any) -> dict[str, Any]:
    """A message's role and content only (Strands 1.62 adds ``metadata`` and ``tracking_id`` keys)."""
    return {"role": message["role"], "content": message["content"]}


def plain_messages(messages: Any) -> list[dict[str, Any]]:
    """A JSON copy of ``messages`` with role and content only (bytes become their ``str``)."""
    return [plain(m) for m in json.loads(json.dumps(list(messages), default=str))]
