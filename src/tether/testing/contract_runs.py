"""The stored run as the contract compares it: loaded as JSON data, and masked for comparison.
Shared by the contract's local and served checks (:mod:`tether.testing.contract`,
:mod:`tether.testing.contract_served`). Not a public API."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

from .faults import open_store


def _load(spec: str, run_id: str) -> dict[str, Any]:
    """The stored run as JSON data: its messages, state, status and every step (head included)."""
    store = open_store(spec)
    try:
        run = store.load(run_id)
        steps = [asdict(step) for step in store.history(run_id)] if run is not None else []
    finally:
        store.close()
    return {
        "messages": [] if run is None else run.messages,
        "state": {} if run is None else run.head.get("state") or {},
        "status": None if run is None else run.head.get("status"),
        "steps": json.loads(json.dumps(steps, default=str)),
    }


def _comparable(export: Mapping[str, Any], run_id: str | None = None) -> Any:
    """What two runs must agree on: messages, state, status, stop reason (the run id masked)."""
    data = {key: export.get(key) for key in ("messages", "state", "status", "stop_reason")}
    text = json.dumps(data, default=str, sort_keys=True)
    return json.loads(text.replace(run_id, "<run>") if run_id else text)
