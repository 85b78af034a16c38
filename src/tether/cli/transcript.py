"""The messages of a run as text, for ``tether show``: what each turn said, tool calls abbreviated.

Text blocks are printed in full (a run is a conversation: its text is what a reader came for).
Tool inputs and results are cut to :data:`ABBREVIATE` characters, saying how long they were,
unless ``full``. Everything comes from a row, so control characters are escaped (no terminal
escape sequence from a stored message reaches the terminal); newlines are kept and indented.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

ABBREVIATE = 160
"""Characters of a tool input or result shown without ``--full``."""

_INDENT = "    "


def message_lines(messages: Iterable[Any], *, full: bool = False) -> list[str]:
    """One entry per message (``[N] role: ...``), continuation lines indented."""
    lines: list[str] = []
    for number, message in enumerate(messages, 1):
        role = message.get("role", "?") if isinstance(message, dict) else "?"
        content = message.get("content") if isinstance(message, dict) else None
        blocks = [_block(block, full) for block in content] if isinstance(content, list) else ["(no content)"]
        body = "\n".join(blocks) or "(empty)"
        first, *rest = body.split("\n")
        lines.append(f"[{number}] {_clean(str(role))}: {first}")
        lines.extend(_INDENT + line for line in rest)
    return lines


def _block(block: Any, full: bool) -> str:
    if not isinstance(block, dict) or len(block) != 1:
        return "[unreadable block]"
    kind, value = next(iter(block.items()))
    if kind == "text":
        return _clean(str(value))
    if kind == "toolUse" and isinstance(value, dict):
        return f"-> {_clean(str(value.get('name')))} {_cut(_json(value.get('input')), full)}"
    if kind == "toolResult" and isinstance(value, dict):
        parts = value.get("content")
        text = " ".join(_result_part(part) for part in parts) if isinstance(parts, list) else _json(parts)
        return f"<- {_clean(str(value.get('status', '?')))} {_cut(text, full)}"
    if kind == "reasoningContent":
        reasoning = value.get("reasoningText", {}) if isinstance(value, dict) else {}
        text = reasoning.get("text", "") if isinstance(reasoning, dict) else ""
        return f"(reasoning) {_cut(str(text), full)}"
    if kind == "interruptResponse" and isinstance(value, dict):
        return f"(answer to interrupt {_clean(str(value.get('interruptId')))}) {_cut(_json(value.get('response')), full)}"
    return f"[{_clean(str(kind))}]"  # image, document, cachePoint, ...: named, not dumped


def _result_part(part: Any) -> str:
    if isinstance(part, dict) and "text" in part:
        return str(part["text"])
    if isinstance(part, dict) and "json" in part:
        return _json(part["json"])
    if isinstance(part, dict) and len(part) == 1:
        return f"[{next(iter(part))}]"
    return _json(part)


def _json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def _cut(text: str, full: bool) -> str:
    """``text`` on one line, cut to :data:`ABBREVIATE` characters unless ``full``."""
    flat = _clean(" ".join(text.split()))
    if full or len(flat) <= ABBREVIATE:
        return flat
    return f"{flat[:ABBREVIATE]}... ({len(flat)} chars; --full shows all)"


def _clean(text: str) -> str:
    """``text`` with control characters escaped, newlines kept."""
    return "".join(char if char.isprintable() or char == "\n" else repr(char)[1:-1] for char in text)


__all__ = ["ABBREVIATE", "message_lines"]
