"""Strands' `SummarizingConversationManager`: Strands' split, summary request and summary message.

The state lives in the run, as for every Tether manager (``summary_message`` and
``removed_message_count`` in ``RunState.conversation_manager_state``), so it is in snapshots,
sessions and durable runs; the reduction itself follows Strands 1.62 step by step so that a
Strands program sees the same conversation, and its models the same requests.
"""

from __future__ import annotations

from typing import Any

from ....conversation import SummarizingConversationManager as _TetherSummarizing
from ....errors import ConfigurationError
from ....loop.state import RunState
from ....loop.stream import StreamAccumulator
from ....models.base import Model
from ....types import Message, ModelRequest, SystemContentBlock, ToolSpec
from ...types.exceptions import _ContextWindowExhausted
from .conversation_manager import StrandsManagerState, refuse_unsupported

DEFAULT_SUMMARIZATION_PROMPT = """You are a conversation summarizer. Provide a concise summary of the conversation \
history.

Format Requirements:
- You MUST create a structured and concise summary in bullet-point format.
- You MUST NOT respond conversationally.
- You MUST NOT address the user directly.
- You MUST NOT comment on tool availability.

Assumptions:
- You MUST NOT assume tool executions failed unless otherwise stated.

Task:
Your task is to create a structured summary document:
- It MUST contain bullet points with key topics and questions covered
- It MUST contain bullet points for all significant tools executed and their results
- It MUST contain bullet points for any code or technical information shared
- It MUST contain a section of key insights gained
- It MUST format the summary in the third person

Example format:

## Conversation Summary
* Topic 1: Key information
* Topic 2: Key information

## Tools Executed
* Tool X: Result Y"""
"""Strands' system prompt for a summary written by the agent's own model."""

SUMMARY_REQUEST = "Please summarize this conversation."
"""The user message Strands appends to the messages to summarize."""

NOOP_TOOL_SPEC: ToolSpec = {
    "name": "noop",
    "description": "This is a fake tool that MUST be completely ignored.",
    "inputSchema": {"json": {"properties": {}, "type": "object"}},
}
"""The tool Strands offers a summarization agent that has none (some providers need one)."""


def _uses(message: Message, kind: str) -> bool:
    return any(kind in block for block in message["content"])


def _split_point(messages: list[Message], split: int) -> int:
    """Strands' split moved forward past an orphan ``toolResult`` or a ``toolUse`` whose result
    does not follow.

    Raises:
        ContextWindowOverflowException: No such point.
    """
    if split > len(messages):
        raise _ContextWindowExhausted("Split point exceeds message array length")
    if split == len(messages):
        return split
    while split < len(messages):
        message = messages[split]
        orphan_use = _uses(message, "toolUse") and split + 1 < len(messages) and not _uses(messages[split + 1], "toolResult")
        if not (_uses(message, "toolResult") or orphan_use):
            return split
        split += 1
    raise _ContextWindowExhausted("Unable to trim conversation context!")


def _user_summary(message: Message) -> Message:
    """The summarizer's reply as the user message kept in the conversation (its text only).

    Raises:
        ContextWindowOverflowException: The reply has no text.
    """
    blocks: list[Any] = []
    for block in message["content"]:
        if "text" in block:
            blocks.append({"text": block["text"]})
        elif "citationsContent" in block:
            cited = block["citationsContent"].get("content", [])  # type: ignore[typeddict-item]
            blocks.extend({"text": item["text"]} for item in cited if item.get("text"))
    if not blocks:
        raise _ContextWindowExhausted("Failed to generate summary: model response contained no text")
    return {"role": "user", "content": blocks}


class SummarizingConversationManager(StrandsManagerState, _TetherSummarizing):
    """On a context overflow, replaces the oldest ``summary_ratio`` of the conversation with a summary.

    As in Strands: the ratio is clamped to 0.1..0.8; the split keeps tool calls with their
    results; the summary is written by ``summarization_agent`` (its model, system prompt and
    tools, or Strands' ``noop`` tool when it has none) or else by the agent's model with
    ``summarization_system_prompt`` (default: Strands' summarizer prompt); the summary is the
    reply's text as a user message.
    """

    def __init__(
        self,
        summary_ratio: float = 0.3,
        preserve_recent_messages: int = 10,
        summarization_agent: Any = None,
        summarization_system_prompt: str | None = None,
        *,
        pin_first: int | None = None,
        proactive_compression: Any = None,
    ) -> None:
        """Summarize on overflow (Strands' arguments).

        Raises:
            ConfigurationError: Both ``summarization_agent`` and ``summarization_system_prompt``
                (as Strands, a ``ValueError``), an agent without a model, or an argument Tether
                does not provide.
        """
        refuse_unsupported("SummarizingConversationManager", pin_first=pin_first, proactive_compression=proactive_compression)
        if summarization_agent is not None and summarization_system_prompt is not None:
            raise ConfigurationError(
                "Cannot provide both summarization_agent and summarization_system_prompt. Agents come with their own system prompt."
            )
        model = None
        if summarization_agent is not None:
            model = getattr(summarization_agent, "model_or_none", None)
            if model is None:
                raise ConfigurationError("SummarizingConversationManager(summarization_agent=...) needs an agent with a model")
        super().__init__(
            summary_ratio=max(0.1, min(0.8, summary_ratio)),
            preserve_recent_messages=max(1, preserve_recent_messages),
            summarization_model=model,
            summary_prompt=summarization_system_prompt or DEFAULT_SUMMARIZATION_PROMPT,
        )
        self.preserve_recent_messages = preserve_recent_messages
        self.summarization_agent = summarization_agent
        self.summarization_system_prompt = summarization_system_prompt

    async def reduce_context(self, run: RunState, model: Model, error: Exception | None = None) -> None:
        """Summarize the oldest messages as Strands does.

        Raises:
            ContextWindowOverflowException: Too few messages to summarize, or no text in the
                summary (also Tether's ``ContextWindowExhaustedError``); nothing changed.
        """
        self._manage(run)
        messages = run.messages
        count = min(max(1, int(len(messages) * self.summary_ratio)), len(messages) - self.preserve_recent_messages)
        if count > 0:
            count = _split_point(messages, count)
        if count <= 0:
            raise _ContextWindowExhausted("Cannot summarize: insufficient messages for summarization") from error
        summary = await self._summary(messages[:count], model)
        state = run.conversation_manager_state
        previous = state.get("summary_message")
        # removed_message_count counts original messages: an earlier summary is not one
        replaced = 1 if previous is not None and previous in messages[:count] else 0
        messages[:count] = [summary]
        self._record_removed(run, count - replaced)
        state["summary_message"] = summary

    async def _summary(self, messages: list[Message], model: Model) -> Message:
        """The summary of ``messages``, asked as Strands asks it."""
        agent = self.summarization_agent
        system: list[SystemContentBlock] | None
        if agent is not None:
            summarizer = agent.model_or_none
            specs: list[ToolSpec] = list(agent.tool_specs_for(None)) or [NOOP_TOOL_SPEC]
            system = agent.run_state.system_prompt
        else:
            summarizer, specs, system = model, [], [{"text": self.summary_prompt}]
        request: ModelRequest = {
            "messages": [*messages, {"role": "user", "content": [{"text": SUMMARY_REQUEST}]}],
            "system_prompt": system,
            "tool_specs": specs,
            "tool_choice": None,
            "model_state": {},
        }
        accumulator = StreamAccumulator()
        async for event in summarizer.stream(request):
            accumulator.add(event)
        return _user_summary(accumulator.message())


__all__ = ["DEFAULT_SUMMARIZATION_PROMPT", "SummarizingConversationManager"]
