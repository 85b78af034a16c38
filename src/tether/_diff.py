"""The first difference between two JSON values, as a field path (``messages[3].content[0].text``)."""

from __future__ import annotations

from typing import Any

from .errors import json_path


def first_difference(a: Any, b: Any, path: list[Any] | None = None) -> list[Any] | None:
    """The path of the first field where ``a`` and ``b`` differ (depth first, keys in order), or None."""
    here = [] if path is None else path
    if isinstance(a, dict) and isinstance(b, dict):
        for key in list(a) + [k for k in b if k not in a]:
            if key not in a or key not in b:
                return [*here, key]
            found = first_difference(a[key], b[key], [*here, key])
            if found is not None:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list):
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            found = first_difference(x, y, [*here, i])
            if found is not None:
                return found
        return None if len(a) == len(b) else [*here, min(len(a), len(b))]
    return None if a == b else here


def describe(path: list[Any], prefix: str = "") -> str:
    """``path`` rendered as a dotted field path, under ``prefix``."""
    rendered = json_path(path)
    if not prefix:
        return rendered
    return prefix if rendered == "<root>" else (f"{prefix}{rendered}" if rendered.startswith("[") else f"{prefix}.{rendered}")
