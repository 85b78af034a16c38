"""Schema versions: unknown ones refused, older upgraded by pure dict -> dict migrations.

Released: Tether's legacy integer ``1`` and Strands' ``"1.0"`` (the legacy -> "1.0" step is
real and tested against the golden files). The mechanism itself is tested with test-local
version lists and registries (a hypothetical "1.0" -> "1.1" step), never by faking a release.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

import tether.checkpoint as checkpoint_module
from tether import SnapshotError, TetherError
from tether.errors import CheckpointError
from tether.snapshot import MIGRATIONS, SNAPSHOT_SCHEMA_VERSION, Migration, Snapshot, migrate, register_migration
from tether.snapshot.migrations import LEGACY_SCHEMA_VERSION, SNAPSHOT_VERSIONS, SchemaVersion

GOLDEN_V1 = Path(__file__).parent / "golden" / "snapshot_v1.0.json"
VERSIONS: tuple[SchemaVersion, ...] = ("1.0", "1.1", "1.2")  # hypothetical later versions


def golden() -> dict[str, Any]:
    result: dict[str, Any] = json.loads(GOLDEN_V1.read_text(encoding="utf-8"))
    return result


def v1_to_v2(data: dict[str, Any]) -> dict[str, Any]:
    """Hypothetical v2: ``app_data`` moves under ``meta.app``, ``state`` gains a version key."""
    data["meta"] = {"app": data.pop("app_data")}
    data["data"]["state"]["_v"] = 2
    return data


def v2_to_v3(data: dict[str, Any]) -> dict[str, Any]:
    data["meta"]["migrated"] = True
    return data


def test_released_versions_and_the_one_released_migration() -> None:
    assert SNAPSHOT_SCHEMA_VERSION == "1.0"
    assert SNAPSHOT_VERSIONS == (LEGACY_SCHEMA_VERSION, "1.0") and LEGACY_SCHEMA_VERSION == 1
    assert list(MIGRATIONS) == [LEGACY_SCHEMA_VERSION]


def test_current_version_is_returned_unchanged() -> None:
    d = golden()
    assert migrate(d) is d


def test_a_local_step_upgrades_and_stamps_the_version_without_touching_the_input() -> None:
    d = golden()
    before = copy.deepcopy(d)
    out = migrate(d, target="1.1", versions=VERSIONS, migrations={"1.0": v1_to_v2})
    assert d == before, "the input is never modified"
    assert out["schema_version"] == "1.1"
    assert out["meta"] == {"app": before["app_data"]}
    assert out["data"]["state"] == {**before["data"]["state"], "_v": 2}
    assert out["data"]["messages"] == before["data"]["messages"]


def test_steps_chain() -> None:
    out = migrate(golden(), target="1.2", versions=VERSIONS, migrations={"1.0": v1_to_v2, "1.1": v2_to_v3})
    assert out["schema_version"] == "1.2"
    assert out["meta"]["migrated"] is True


def test_missing_step_is_an_error() -> None:
    with pytest.raises(SnapshotError, match=r"schema_version '1\.1' is not supported: no migration to '1\.2'"):
        migrate(golden(), target="1.2", versions=VERSIONS, migrations={"1.0": v1_to_v2})


@pytest.mark.parametrize("version", ["1.1", "2.0", "10.0"])
def test_newer_version_strings_are_refused_saying_to_upgrade(version: str) -> None:
    d = golden()
    d["schema_version"] = version
    with pytest.raises(SnapshotError, match="newer than this Tether supports"):
        Snapshot.from_dict(d)


@pytest.mark.parametrize("version", [2, 99, 0, "1", "0.9", "x.y", ""])
def test_unknown_versions_are_refused(version: Any) -> None:
    d = golden()
    d["schema_version"] = version
    with pytest.raises(SnapshotError, match=f"Unsupported snapshot schema version: {version!r}"):
        Snapshot.from_dict(d)


def test_a_failing_or_impure_step_is_reported() -> None:
    def broken(data: dict[str, Any]) -> dict[str, Any]:
        return data["missing"]  # type: ignore[no-any-return]

    def wrong_type(data: dict[str, Any]) -> dict[str, Any]:
        return [data]  # type: ignore[return-value]

    with pytest.raises(SnapshotError, match=r"migration from schema_version '1\.0' to '1\.1' failed: KeyError\('missing'\)"):
        migrate(golden(), target="1.1", versions=VERSIONS, migrations={"1.0": broken})
    with pytest.raises(SnapshotError, match="returned list, not a dict"):
        migrate(golden(), target="1.1", versions=VERSIONS, migrations={"1.0": wrong_type})


def test_the_name_is_configurable_and_a_checkpoint_converts_to_its_error() -> None:
    with pytest.raises(SnapshotError, match=r"checkpoint schema_version '1\.0' is not supported"):
        migrate({"schema_version": "1.0"}, target="1.1", versions=VERSIONS, migrations={}, what="checkpoint")
    with pytest.raises(CheckpointError, match=r"Unsupported checkpoint schema version: '0\.0'"):
        checkpoint_module.parse({"schema_version": "0.0", "position": "after_model"})


def test_register_migration_into_a_local_registry() -> None:
    registry: dict[SchemaVersion, Migration] = {}
    decorated = register_migration("1.0", registry)(v1_to_v2)
    assert decorated is v1_to_v2 and registry == {"1.0": v1_to_v2}
    with pytest.raises(SnapshotError, match="already registered"):
        register_migration("1.0", registry)(v2_to_v3)
    assert migrate(golden(), target="1.1", versions=VERSIONS, migrations=registry)["schema_version"] == "1.1"
    assert list(MIGRATIONS) == [LEGACY_SCHEMA_VERSION], "the global registry is untouched"


def test_non_json_input_to_a_migration_is_a_snapshot_error() -> None:
    with pytest.raises(SnapshotError, match=r"snapshot\.data is not JSON \(set\)"):
        migrate({"schema_version": "1.0", "data": {1, 2}}, target="1.1", versions=VERSIONS, migrations={"1.0": v1_to_v2})


@pytest.mark.parametrize("version", [None, 1.0, True, [1]])
def test_bad_version_types(version: Any) -> None:
    with pytest.raises(SnapshotError, match="schema_version must be a version string"):
        migrate({"schema_version": version})
    assert issubclass(SnapshotError, TetherError)


def test_the_legacy_migration_converts_old_tether_shapes() -> None:
    legacy = {
        "schema_version": 1,
        "scope": "agent",
        "data": {
            "messages": [],
            "conversation_manager_state": {"kind": "summarizing", "removed_message_count": 4},
            "interrupt_state": {
                "interrupts": {"i1": {"id": "i1", "name": "ok?", "reason": None, "source": "hook", "tool_use_id": "t1", "response": "yes"}},
                "activated": False,
            },
        },
    }
    before = copy.deepcopy(legacy)
    out = migrate(legacy)
    assert legacy == before
    assert out["schema_version"] == "1.0"
    assert out["data"]["conversation_manager_state"] == {
        "__name__": "SummarizingConversationManager",
        "removed_message_count": 4,
        "summary_message": None,
    }
    assert out["data"]["interrupt_state"] == {
        "interrupts": {"i1": {"id": "i1", "name": "ok?", "reason": None, "response": "yes"}},
        "context": {},
        "activated": False,
        "tether_interrupts": {"i1": {"source": "hook", "tool_use_id": "t1"}},
    }
    # A custom manager kind has no Strands name: its state stays as it was, and still loads.
    custom = migrate({"schema_version": 1, "data": {"conversation_manager_state": {"kind": "mine"}}})
    assert custom["data"]["conversation_manager_state"] == {"kind": "mine"}


def test_from_json_migrates_and_checks_what_a_migration_returns(monkeypatch: pytest.MonkeyPatch) -> None:
    """A migrated document is checked in full: a step may return values that are not JSON."""
    v0 = golden()
    v0["schema_version"] = 1
    v0["data"]["state"] = {"old": True}

    def good(data: dict[str, Any]) -> dict[str, Any]:
        data["data"]["state"] = {"new": data["data"]["state"]["old"]}
        return data

    monkeypatch.setitem(MIGRATIONS, 1, good)
    snap = Snapshot.from_json(json.dumps(v0))
    assert snap.schema_version == "1.0" and snap.data["state"] == {"new": True}

    def bad(data: dict[str, Any]) -> dict[str, Any]:
        data["data"]["state"] = {"new": (1, 2)}
        return data

    monkeypatch.setitem(MIGRATIONS, 1, bad)
    with pytest.raises(SnapshotError, match=r"snapshot\.data\.state\.new is not JSON \(tuple\)"):
        Snapshot.from_json(json.dumps(v0))
