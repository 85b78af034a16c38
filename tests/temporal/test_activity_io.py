"""The typed activity inputs (``tether.temporal.activity_io``) change nothing that arrives.

Temporal's data converter converts an activity's argument by the activity's type hints, key by
key (a ``float`` hint turns ``5`` into ``5.0``, an ``int`` hint turns ``True`` into ``1``, a
``Literal`` refuses other values). Every activity input recorded in the history corpus is
decoded here with the hints of the activity that took it, and must come out exactly as the
plain JSON went in.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from temporalio import activity
from temporalio.api.common.v1 import Payload
from temporalio.converter import DataConverter

from tether.temporal import AgentRegistry, BlobStore
from tether.temporal.policy import PayloadPolicy
from tether.temporal.worker import all_activities

HISTORIES = Path(__file__).resolve().parent / "histories"


def _definitions(tmp_path: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for fn in all_activities(AgentRegistry(), PayloadPolicy(BlobStore(tmp_path / "blobs"))):
        definition = activity._Definition.must_from_callable(fn)
        out[str(definition.name)] = definition
    return out


def _scheduled_inputs() -> list[tuple[str, str, Payload]]:
    found: list[tuple[str, str, Payload]] = []
    for path in sorted(HISTORIES.rglob("*.json")):
        for event in json.loads(path.read_text())["events"]:
            attributes = event.get("activityTaskScheduledEventAttributes")
            if attributes is None:
                continue
            for raw in attributes["input"]["payloads"]:
                metadata = {key: base64.b64decode(value) for key, value in raw["metadata"].items()}
                payload = Payload(metadata=metadata, data=base64.b64decode(raw["data"]))
                found.append((path.name, attributes["activityType"]["name"], payload))
    return found


def test_the_corpus_holds_inputs_of_the_regular_activities() -> None:
    names = {name for _, name, _ in _scheduled_inputs()}
    assert {"tether.call_model", "tether.run_tool", "tether.reconcile", "tether.invocation_hook", "tether.finish"} <= names
    assert "tether.graph_callable" in names


def test_every_recorded_activity_input_decodes_unchanged_with_the_typed_hints(tmp_path: Path) -> None:
    definitions = _definitions(tmp_path)
    converter = DataConverter.default.payload_converter
    checked = 0
    for history, name, payload in _scheduled_inputs():
        definition = definitions[name]
        assert definition.arg_types is not None and len(definition.arg_types) == 1, name
        plain = json.loads(payload.data)
        (typed,) = converter.from_payloads([payload], definition.arg_types)
        assert json.dumps(typed, sort_keys=True) == json.dumps(plain, sort_keys=True), f"{history}: {name}"
        checked += 1
    assert checked > 50


@pytest.mark.parametrize(
    ("value", "hint_of"),
    [
        ({"latency_ms": 5}, "float"),
        ({"flag": True}, "int"),
    ],
)
def test_the_check_above_would_see_a_coercing_hint(value: dict[str, Any], hint_of: str) -> None:
    from typing import TypedDict

    class Floaty(TypedDict):
        latency_ms: float

    class Inty(TypedDict):
        flag: int

    hint = Floaty if hint_of == "float" else Inty
    converter = DataConverter.default.payload_converter
    (payload,) = converter.to_payloads([value])
    (typed,) = converter.from_payloads([payload], [hint])
    assert json.dumps(typed) != json.dumps(value)
