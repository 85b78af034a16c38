"""Strands' `SummarizingConversationManager` with Strands' arguments, on Tether's manager."""

from __future__ import annotations

from typing import Any

from ....conversation import SummarizingConversationManager as _TetherSummarizing
from ....conversation.summarizing import SUMMARY_PROMPT
from ....errors import ConfigurationError
from .conversation_manager import refuse_unsupported


class SummarizingConversationManager(_TetherSummarizing):
    """On a context overflow, replaces the oldest ``summary_ratio`` of the conversation with a summary.

    ``summarization_agent``'s model writes the summary (default: the agent's own model) and
    ``summarization_system_prompt`` is the instruction it gets. As in Strands the ratio is
    clamped to 0.1..0.8.
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
            ConfigurationError: ``summarization_agent`` has no model, or an argument Tether
                does not provide.
        """
        refuse_unsupported("SummarizingConversationManager", pin_first=pin_first, proactive_compression=proactive_compression)
        model = None
        if summarization_agent is not None:
            model = getattr(summarization_agent, "model_or_none", None)
            if model is None:
                raise ConfigurationError("SummarizingConversationManager(summarization_agent=...) needs an agent with a model")
        super().__init__(
            summary_ratio=max(0.1, min(0.8, summary_ratio)),
            preserve_recent_messages=preserve_recent_messages,
            summarization_model=model,
            summary_prompt=summarization_system_prompt or SUMMARY_PROMPT,
        )
        self.summarization_agent = summarization_agent


__all__ = ["SummarizingConversationManager"]
