"""Normalizing what callers pass as a prompt.

A prompt is ``None`` (continue), a string, a list of content blocks (one user message), a list
of messages, a single control block dict (``{"checkpointResume": ...}``), or a list of
``interruptResponse`` blocks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ._messages import check_block, validate_messages
from ._unicode import find_lone_surrogate
from .errors import CheckpointResumeError, PromptError, PromptShapeError, ShapeError, json_path
from .types import CONTROL_BLOCK_KINDS, Message

PromptKind = Literal["continue", "messages", "interrupt_responses", "checkpoint"]


@dataclass
class Prompt:
    kind: PromptKind
    messages: list[Message] = field(default_factory=list)
    responses: list[dict[str, Any]] = field(default_factory=list)
    checkpoint: Any = None


def normalize_prompt(prompt: Any) -> Prompt:
    """Classify and validate a prompt; raises :class:`PromptError` naming the bad part."""
    found = find_lone_surrogate(prompt, ["prompt"])
    if found is not None:
        raise PromptError(
            f"{json_path(found)} holds a lone surrogate (such as '\\ud800'): text must be valid Unicode, UTF-8 cannot store it"
        )
    try:
        return _normalized(prompt)
    except ShapeError as exc:
        raise PromptError(str(exc)) from None


def _normalized(prompt: Any) -> Prompt:
    r""":func:`normalize_prompt` before its conversion: shape problems are ``ShapeError``\ s."""
    if prompt is None:
        return Prompt("continue")
    if isinstance(prompt, str):
        return Prompt("messages", [{"role": "user", "content": [{"text": prompt}]}])
    if isinstance(prompt, dict):
        if "role" in prompt:
            prompt = [prompt]
        else:
            prompt = [prompt]
    if not isinstance(prompt, list):
        raise PromptError(f"prompt must be a str, a list of content blocks or messages, or None; got {type(prompt).__name__}")
    if not prompt:
        return Prompt("continue")
    if all(isinstance(item, dict) and "role" in item for item in prompt):
        messages = validate_messages(prompt, ["prompt"])
        for m_index, message in enumerate(messages):
            for b_index, block in enumerate(message["content"]):
                if any(kind in block for kind in CONTROL_BLOCK_KINDS):
                    raise PromptError(f"prompt[{m_index}].content[{b_index}]: control blocks go in a list of blocks, not in a message")
        return Prompt("messages", [{"role": m["role"], "content": list(m["content"])} for m in messages])
    kinds = [next(iter(item)) if isinstance(item, dict) and len(item) == 1 else None for item in prompt]
    if "checkpointResume" in kinds:
        # TypeError/KeyError too, as in Strands (see PromptShapeError, CheckpointResumeError).
        if len(prompt) != 1:
            repeated = kinds.count("checkpointResume") > 1
            only = "a prompt may hold only one checkpointResume block"
            raise PromptShapeError(only if repeated else "a checkpointResume block must be the only block of the prompt")
        body = prompt[0]["checkpointResume"]
        if not isinstance(body, dict) or "checkpoint" not in body:
            raise CheckpointResumeError(
                "checkpointResume block has no 'checkpoint'; pass {'checkpointResume': {'checkpoint': cp.to_dict()}}"
            )
        return Prompt("checkpoint", checkpoint=body["checkpoint"])
    if "interruptResponse" in kinds:
        if any(kind != "interruptResponse" for kind in kinds):
            raise PromptShapeError("interruptResponse blocks cannot be mixed with other content; send only the responses")
        return Prompt("interrupt_responses", responses=[item["interruptResponse"] for item in prompt])
    for i, item in enumerate(prompt):
        check_block(item, ["prompt", i])
    return Prompt("messages", [{"role": "user", "content": list(prompt)}])
