"""A custom provider written as a strands.models.Model subclass: config, streaming several deltas, tool specs, system prompt."""

import json
from collections.abc import AsyncIterable
from typing import Any, TypedDict

from show import dump, show_messages, show_result
from strands import Agent, tool
from strands.models import Model
from strands.types.content import Messages
from strands.types.streaming import StreamEvent
from strands.types.tools import ToolSpec


class EchoConfig(TypedDict, total=False):
    model_id: str
    prefix: str


class EchoModel(Model):
    """Echoes the last user text word by word; calls a tool first when the prompt asks to 'shout'."""

    def __init__(self, **config: Any) -> None:
        self.config: EchoConfig = EchoConfig(model_id="echo-1", prefix="echo:")
        self.update_config(**config)
        self.seen_system_prompts: list[str | None] = []

    def update_config(self, **model_config: Any) -> None:
        self.config.update(model_config)  # type: ignore[typeddict-item]

    def get_config(self) -> EchoConfig:
        return self.config

    async def structured_output(self, output_model: Any, prompt: Messages, system_prompt: str | None = None, **kwargs: Any) -> Any:
        raise NotImplementedError
        yield

    async def stream(
        self, messages: Messages, tool_specs: list[ToolSpec] | None = None, system_prompt: str | None = None, **kwargs: Any
    ) -> AsyncIterable[StreamEvent]:
        self.seen_system_prompts.append(system_prompt)
        last = messages[-1]
        yield {"messageStart": {"role": "assistant"}}
        results = [b["toolResult"] for b in last["content"] if "toolResult" in b]
        if results:
            words = [self.config["prefix"], *results[0]["content"][0]["text"].split()]
            stop = "end_turn"
        else:
            said = " ".join(b["text"] for b in last["content"] if "text" in b)
            if "shout" in said and tool_specs:
                yield {"contentBlockStart": {"start": {"toolUse": {"toolUseId": "tu-echo", "name": tool_specs[0]["name"]}}}}
                payload = json.dumps({"text": said})
                yield {"contentBlockDelta": {"delta": {"toolUse": {"input": payload[:5]}}}}
                yield {"contentBlockDelta": {"delta": {"toolUse": {"input": payload[5:]}}}}
                yield {"contentBlockStop": {}}
                yield {"messageStop": {"stopReason": "tool_use"}}
                yield {"metadata": {"usage": {"inputTokens": 3, "outputTokens": 1, "totalTokens": 4}, "metrics": {"latencyMs": 0}}}
                return
            words = [self.config["prefix"], *said.split()]
            stop = "end_turn"
        yield {"contentBlockStart": {"start": {}}}
        for i, word in enumerate(words):
            yield {"contentBlockDelta": {"delta": {"text": word if i == 0 else " " + word}}}
        yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": stop}}
        yield {
            "metadata": {
                "usage": {"inputTokens": len(messages), "outputTokens": len(words), "totalTokens": len(messages) + len(words)},
                "metrics": {"latencyMs": 0},
            }
        }


@tool
def loud(text: str) -> str:
    """Upper-case a text.

    Args:
        text: The text.
    """
    return text.upper()


model = EchoModel(prefix=">>")
dump("config", model.get_config())
agent = Agent(model=model, tools=[loud], system_prompt="Echo everything.", callback_handler=None)
show_result("plain", agent("hello there world"))
show_result("tool", agent("please shout this"))
model.update_config(prefix="<<")
show_result("reconfigured", agent("again"))
dump("config.after", agent.model.get_config())
dump("system_prompts", model.seen_system_prompts)
show_messages("agent", agent)
