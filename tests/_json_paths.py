"""Every place inside a JSON-shaped value, for the fuzz tests that damage one place at a time.

The row, checkpoint, message, snapshot and cassette fuzzers each pick a place to change; they
share this one walk so that what "every place" means is the same for all of them.
"""

from __future__ import annotations

from typing import Any


def json_paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path into ``value`` (the root ``()`` first): dict keys and list indexes, depth first."""
    found = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            found += json_paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += json_paths(item, (*path, index))
    return found
