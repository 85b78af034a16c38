"""Printing helpers shared by the corpus programs: every observable result, deterministically.

One deliberate difference is normalised away: a message prints as its ``role`` and ``content``
(Strands 1.62 adds a random ``tracking_id`` and the model call's ``metadata`` to its messages;
Tether's messages are Converse JSON, usage lives in the result's metrics — see
docs/guides/from-strands.md). Otherwise only generated values that differ from run to run are
normalised (a toolUseId the
program did not script (scripted ones start ``tu-``) prints as ``<generated-N>``, N counting distinct
ids in order of appearance, so equal ids stay equal; the results of
concurrently run tools, which finish in any order, print sorted by toolUseId). Everything else
prints as JSON with sorted keys, so two runs agree exactly when their results agree.
"""

from __future__ import annotations

import json
from typing import Any

_GENERATED_IDS: dict[str, str] = {}


def _generated_id(value: Any) -> Any:
    """A toolUseId the program did not script (a direct tool call's ``tooluse_<name>_<random>``) -> ``<generated-N>``."""
    if not isinstance(value, str) or value.startswith("tu-"):
        return value
    return _GENERATED_IDS.setdefault(value, f"<generated-{len(_GENERATED_IDS) + 1}>")


def _normalise(value: Any) -> Any:
    if isinstance(value, dict):
        out = {}
        is_message = "role" in value and "content" in value
        for k, v in value.items():
            if is_message and k in ("tracking_id", "metadata"):
                continue
            if k == "toolUseId":
                out[k] = _generated_id(v)
            else:
                out[k] = _normalise(v)
        return out
    if isinstance(value, (list, tuple)):
        items = [_normalise(v) for v in value]
        if len(items) > 1 and all(isinstance(v, dict) and set(v) == {"toolResult"} for v in items):
            # Concurrently run tools finish in any order: a tool-result message lists them by toolUseId.
            items.sort(key=lambda v: str(v["toolResult"].get("toolUseId")))
        return items
    if isinstance(value, (bytes, bytearray)):
        return f"<bytes {bytes(value).hex()}>"
    return value


def dump(label: str, value: Any) -> None:
    """Print ``label: <value as sorted JSON>``."""
    print(f"{label}: {json.dumps(_normalise(value), sort_keys=True, default=repr)}")


def usage(result: Any) -> dict[str, Any]:
    """The token counts of an AgentResult (accumulated usage, only the three counts every provider reports)."""
    accumulated = result.metrics.accumulated_usage
    return {key: accumulated[key] for key in ("inputTokens", "outputTokens", "totalTokens")}


def show_result(label: str, result: Any) -> None:
    """Print an AgentResult's observable fields."""
    dump(f"{label}.stop_reason", result.stop_reason)
    dump(f"{label}.message", result.message)
    dump(f"{label}.str", str(result))
    dump(f"{label}.usage", usage(result))


def show_messages(label: str, agent: Any) -> None:
    """Print an agent's conversation."""
    dump(f"{label}.messages", agent.messages)
