"""The summarizing manager: replace the oldest part of the conversation with a model summary."""

from __future__ import annotations

from ..errors import ConfigurationError, ContextWindowExhaustedError
from ..loop.state import RunState
from ..loop.stream import StreamAccumulator
from ..models.base import Model
from ..types import Message, ModelRequest
from .base import ConversationManager

SUMMARY_PROMPT = (
    "Summarize the conversation so far for your own later use. Keep every fact, decision, tool "
    "result and open question that matters; drop pleasantries. Answer with the summary only."
)


def _cut_point(messages: list[Message], at_least: int) -> int | None:
    """The first index ``>= at_least`` (and ``>= 2``: one summary must replace at least two
    messages) holding an assistant message, or None.

    Cutting there never separates a ``toolUse`` from its ``toolResult`` (each call's results
    are in the message right after it), and the kept part follows the (user) summary with an
    assistant message, so roles keep alternating — even inside one long tool-calling turn.
    """
    for index in range(max(at_least, 2), len(messages)):
        if messages[index]["role"] == "assistant":
            return index
    return None


class SummarizingConversationManager(ConversationManager):
    """On overflow, summarizes the oldest ``summary_ratio`` of the messages with the model.

    The ``preserve_recent_messages`` newest messages are always kept verbatim. The summary
    becomes the first (user) message; ``summarization_model`` defaults to the agent's model.
    """

    kind = "summarizing"

    def __init__(
        self,
        summary_ratio: float = 0.3,
        preserve_recent_messages: int = 10,
        summarization_model: Model | None = None,
        summary_prompt: str = SUMMARY_PROMPT,
    ) -> None:
        """Summarize the oldest part of the conversation on overflow.

        Args:
            summary_ratio: The fraction (0..1, exclusive) of the messages to summarize.
            preserve_recent_messages: The newest messages always kept verbatim (>= 1).
            summarization_model: The model that writes the summary (default: the agent's).
            summary_prompt: The instruction sent with the messages to summarize.
        """
        if not 0.0 < summary_ratio < 1.0:
            raise ConfigurationError(f"summary_ratio must be within (0, 1), got {summary_ratio}")
        if preserve_recent_messages < 1:
            raise ConfigurationError("preserve_recent_messages must be >= 1")
        self.summary_ratio = summary_ratio
        self.preserve_recent_messages = preserve_recent_messages
        self.summarization_model = summarization_model
        self.summary_prompt = summary_prompt

    async def reduce_context(self, run: RunState, model: Model, error: Exception | None = None) -> None:
        messages = run.messages
        wanted = max(1, int(len(messages) * self.summary_ratio))
        limit = len(messages) - self.preserve_recent_messages
        index = _cut_point(messages, wanted)
        if index is None or index > limit:
            raise ContextWindowExhaustedError(
                f"cannot summarize: the conversation ({len(messages)} messages) has no assistant message "
                f"to start from before the {self.preserve_recent_messages} preserved recent messages; lower "
                "preserve_recent_messages"
            ) from error
        old = messages[:index]
        # old normally ends with a user message (the cut is at an assistant one): the instruction
        # joins it, so the summarization request alternates roles too.
        instruction: Message = {"role": "user", "content": [{"text": self.summary_prompt}]}
        if old[-1]["role"] == "user":
            instruction = {"role": "user", "content": [*old[-1]["content"], {"text": self.summary_prompt}]}
            old = old[:-1]
        request: ModelRequest = {
            "messages": [*old, instruction],
            "system_prompt": None,
            "tool_specs": [],
            "tool_choice": None,
            "model_state": {},
        }
        summarizer = self.summarization_model or model
        accumulator = StreamAccumulator()
        async for event in summarizer.stream(request):
            accumulator.add(event)
        text = "".join(block["text"] for block in accumulator.message()["content"] if "text" in block).strip()
        if not text:
            raise ContextWindowExhaustedError("the summarization model returned no text") from error
        summary: Message = {"role": "user", "content": [{"text": f"Summary of the earlier conversation:\n{text}"}]}
        # removed_message_count counts original messages (Strands' session restore lists the
        # stored messages from that offset): an earlier summary replaced here is not one of them.
        previous = run.conversation_manager_state.get("summary_message")
        replaced = 1 if previous is not None and previous in messages[:index] else 0
        messages[:index] = [summary]
        self._record_removed(run, index - replaced)
        run.conversation_manager_state["summary_message"] = summary
