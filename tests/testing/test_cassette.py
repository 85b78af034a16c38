"""Cassettes: record, replay in a fresh process, mismatch errors, loose matching, mode='once'."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tether.errors import CassetteError, CassetteMismatchError, TetherError
from tether.models import ScriptedModel
from tether.testing import Cassette

from .._json_paths import json_paths
from .cassette_agent import live_model, make

ROOT = Path(__file__).resolve().parents[2]


def record(path: Path) -> list[object]:
    agent = make(Cassette.record(live_model(), path))
    assert agent("what is the weather?").stop_reason == "end_turn"
    return agent.messages


def test_replay_in_a_fresh_process_gives_identical_messages(tmp_path: Path) -> None:
    cassette = tmp_path / "weather.json"
    recorded = record(cassette)
    data = json.loads(cassette.read_text())
    assert len(data["interactions"]) == 3  # two tool cycles and the answer
    assert data["interactions"][0]["request"]["system_prompt"] == [{"text": "You answer briefly."}]
    out = tmp_path / "out.json"
    subprocess.run([sys.executable, "-m", "tests.testing.cassette_agent", str(cassette), str(out)], cwd=ROOT, check=True, timeout=60)
    replayed = json.loads(out.read_text())
    assert replayed["stop_reason"] == "end_turn"
    assert replayed["messages"] == json.loads(json.dumps(recorded))


def test_a_different_request_names_the_first_differing_field(tmp_path: Path) -> None:
    cassette = tmp_path / "weather.json"
    record(cassette)
    agent = make(Cassette.replay(cassette))
    with pytest.raises(CassetteMismatchError, match=r"request\.messages\[0\]\.content\[0\]\.text"):
        agent("what is the weather tomorrow?")
    changed_system = make(Cassette.replay(cassette), system="You answer at length.")
    with pytest.raises(CassetteMismatchError, match=r"request #1 at request\.system_prompt\[0\]\.text"):
        changed_system("what is the weather?")


def test_loose_matching_ignores_the_system_prompt_and_tools(tmp_path: Path) -> None:
    cassette = tmp_path / "weather.json"
    recorded = record(cassette)
    agent = make(Cassette.replay(cassette, match="loose"), system="You answer at length.")
    assert agent("what is the weather?").stop_reason == "end_turn"
    assert agent.messages == recorded


def test_mode_once_records_then_replays(tmp_path: Path) -> None:
    cassette = tmp_path / "once.json"
    first = make(Cassette.record(live_model(), cassette, mode="once"))
    first("what is the weather?")
    dead = ScriptedModel([RuntimeError("the live model must not be called")])
    second = make(Cassette.record(dead, cassette, mode="once"))
    assert second("what is the weather?").stop_reason == "end_turn"
    assert second.messages == first.messages


def test_bad_cassette_files(tmp_path: Path) -> None:
    with pytest.raises(CassetteError, match="cannot be read"):
        Cassette.replay(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text('{"version": 99}')
    with pytest.raises(CassetteError, match="not a version-1"):
        Cassette.replay(tmp_path / "bad.json")


# -- damaged cassette files: only TetherError naming the file --------------------------------

_SCALARS: list[object] = [5, -1, "x", "", None, True, 1.5, [], {}, [1], {"k": "v"}]


def _damage(text: str, rng: random.Random) -> str:
    """``text`` (a cassette) with one thing broken: a byte flipped, the end cut off, a part
    dropped, retyped or nested 1,000 deep."""
    kind = rng.choice(["flip", "cut", "drop", "retype", "retype", "nest"])
    if kind == "flip":
        raw = bytearray(text.encode("utf-8"))
        raw[rng.randrange(len(raw))] ^= 1 << rng.randrange(8)
        return raw.decode("utf-8", "replace")
    if kind == "cut":
        return text[: rng.randrange(len(text))]
    value = json.loads(text)
    path = rng.choice(json_paths(value)[1:])
    parent: Any = value
    for part in path[:-1]:
        parent = parent[part]
    if kind == "drop" and isinstance(parent, dict):
        del parent[path[-1]]
    elif kind == "nest":
        parent[path[-1]] = "\0nest\0"
        return json.dumps(value).replace('"\\u0000nest\\u0000"', "[" * 1_000 + "]" * 1_000)
    else:
        parent[path[-1]] = rng.choice(_SCALARS)
    return json.dumps(value)


def test_damaged_cassette_files_raise_only_tether_errors_naming_the_file(tmp_path: Path) -> None:
    cassette = tmp_path / "weather.json"
    recorded = record(cassette)
    original = cassette.read_text()
    rng = random.Random(20260530)
    damaged = tmp_path / "damaged.json"
    outcomes = {"refused": 0, "replayed": 0}
    for round_ in range(400):
        damaged.write_text(_damage(original, rng))
        try:
            agent = make(Cassette.replay(damaged))
            agent("what is the weather?")
        except TetherError as exc:
            assert str(damaged) in str(exc), f"round {round_}: {exc}"
            outcomes["refused"] += 1
        except Exception as exc:
            pytest.fail(f"round {round_}: {type(exc).__name__}: {exc!s:.300}")
        else:
            outcomes["replayed"] += 1
    assert outcomes["refused"] > 200 and outcomes["replayed"] > 10, outcomes  # both kinds of damage were tried
    assert make(Cassette.replay(cassette))("what is the weather?").stop_reason == "end_turn"
    assert recorded
