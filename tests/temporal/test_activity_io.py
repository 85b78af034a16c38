"""Typed activity inputs (``tether.temporal.activity_io``) change nothing that arrives.

Temporal's data converters convert an activity's argument by the activity's type hints (the
default one key by key, pydantic's by validating it), so the inputs are typed for the type
checker only and reach every activity as the plain JSON the workflow sent. Every activity
input recorded in the history corpus is decoded here, with both converters and the hints of the
activity that took it, and must come out exactly as it went in.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any, TypedDict

import pytest
from temporalio import activity
from temporalio.api.common.v1 import Payload
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.converter import DataConverter

from tether.temporal import AgentRegistry, BlobStore
from tether.temporal.activity_io import INPUTS
from tether.temporal.policy import PayloadPolicy
from tether.temporal.worker import all_activities

HISTORIES = Path(__file__).resolve().parent / "histories"
CONVERTERS = {"default": DataConverter.default, "pydantic": pydantic_data_converter}


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


def test_every_activity_takes_plain_json_at_run_time(tmp_path: Path) -> None:
    definitions = _definitions(tmp_path)
    assert len(definitions) == 21
    for name, definition in definitions.items():
        assert definition.arg_types == [dict[str, Any]], name
    import tether.temporal.activity_io as io

    assert all(getattr(io, input_name) == dict[str, Any] for input_name in INPUTS)


def test_the_corpus_holds_inputs_of_the_regular_activities() -> None:
    names = {name for _, name, _ in _scheduled_inputs()}
    assert {"tether.call_model", "tether.run_tool", "tether.reconcile", "tether.invocation_hook", "tether.finish"} <= names
    assert "tether.graph_callable" in names


@pytest.mark.parametrize("converter_name", sorted(CONVERTERS))
def test_every_recorded_activity_input_decodes_unchanged(tmp_path: Path, converter_name: str) -> None:
    definitions = _definitions(tmp_path)
    converter = CONVERTERS[converter_name].payload_converter
    checked = 0
    for history, name, payload in _scheduled_inputs():
        (typed,) = converter.from_payloads([payload], definitions[name].arg_types)
        assert json.dumps(typed, sort_keys=True) == json.dumps(json.loads(payload.data), sort_keys=True), f"{history}: {name}"
        checked += 1
    assert checked > 50


class _Typed(TypedDict):
    latency_ms: float


def test_a_typed_dict_hint_would_change_what_arrives() -> None:
    """Why the inputs are plain JSON at run time: a TypedDict hint changes the value (default
    converter) or is refused (pydantic's, on Python < 3.12)."""
    value = {"latency_ms": 5, "extra": 1}
    (payload,) = DataConverter.default.payload_converter.to_payloads([value])
    (typed,) = DataConverter.default.payload_converter.from_payloads([payload], [_Typed])
    assert json.dumps(typed) != json.dumps(value)
    try:
        (validated,) = pydantic_data_converter.payload_converter.from_payloads([payload], [_Typed])
    except Exception:
        return
    assert json.dumps(validated) != json.dumps(value)
