"""Text no UTF-8 store can keep: lone surrogates (``"\\ud800"``).

A Python ``str`` may hold a lone surrogate (a JSON ``"\\ud800"`` escape, a stream split inside a
surrogate pair), but no UTF-8 text can: SQLite and PostgreSQL fail writing one. Input (a prompt,
an interrupt answer, agent state) is refused naming where it holds one; output (a model's text, a
tool's result) is stored with the surrogate escaped and reads back the same.
"""

from __future__ import annotations

import re
from typing import Any

SURROGATE = re.compile("[\ud800-\udfff]")
"""A lone surrogate: a code point a ``str`` can hold and no UTF-8 text can."""


def find_lone_surrogate(value: Any, path: list[Any]) -> list[Any] | None:
    """The path of the first string (or key) of ``value`` that holds a lone surrogate, or None.

    ``"\\ud800"`` is valid JSON text and a valid Python ``str``, but no UTF-8 text can hold it:
    a store (SQLite, PostgreSQL) fails with a raw ``UnicodeEncodeError`` writing it, so input is
    checked for it before anything is stored. A value nested too deeply (or circular) to walk is
    None here: the checks of depth and shape that follow refuse it by name.
    """
    try:
        return _surrogate_path(value, path)
    except RecursionError:
        return None


def _surrogate_path(value: Any, path: list[Any]) -> list[Any] | None:
    """:func:`find_lone_surrogate`'s walk (raises ``RecursionError`` on a value too deep)."""
    if isinstance(value, str):
        return path if SURROGATE.search(value) else None
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str) and SURROGATE.search(key):
                return [*path, key]
            found = _surrogate_path(item, [*path, key])
            if found is not None:
                return found
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            found = _surrogate_path(item, [*path, index])
            if found is not None:
                return found
    return None


def storable(text: str) -> str:
    """``text`` (JSON) with every lone surrogate written as its ``\\uXXXX`` escape.

    A model or a tool can hand back a ``str`` holding a lone surrogate (a stream split inside a
    surrogate pair, a JSON ``"\\ud800"``): JSON reads it, but no UTF-8 text holds it, and a store
    writing it would fail. Outside JSON strings no surrogate can stand, so escaping them keeps
    the JSON valid and it reads back to the same value. The common case, an all-ASCII text, is
    one C-speed check.
    """
    if text.isascii() or SURROGATE.search(text) is None:
        return text
    return SURROGATE.sub(lambda found: f"\\u{ord(found.group()):04x}", text)
