"""Schema versions: newer refused, older upgraded by pure dict -> dict migrations.

Only schema version 1 is released, so the mechanism is tested with test-local registries and
targets (a hypothetical v1 -> v2 step), never by faking a released version.
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

GOLDEN_V1 = Path(__file__).parent / "golden" / "snapshot_v1.json"


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


def test_no_released_migrations_yet() -> None:
    assert SNAPSHOT_SCHEMA_VERSION == 1
    assert MIGRATIONS == {}


def test_current_version_is_returned_unchanged() -> None:
    d = golden()
    assert migrate(d) is d


def test_a_local_step_upgrades_and_stamps_the_version_without_touching_the_input() -> None:
    d = golden()
    before = copy.deepcopy(d)
    out = migrate(d, target=2, migrations={1: v1_to_v2})
    assert d == before, "the input is never modified"
    assert out["schema_version"] == 2
    assert out["meta"] == {"app": before["app_data"]}
    assert out["data"]["state"] == {**before["data"]["state"], "_v": 2}
    assert out["data"]["messages"] == before["data"]["messages"]


def test_steps_chain() -> None:
    out = migrate(golden(), target=3, migrations={1: v1_to_v2, 2: v2_to_v3})
    assert out["schema_version"] == 3
    assert out["meta"]["migrated"] is True


def test_missing_step_is_an_error() -> None:
    with pytest.raises(SnapshotError, match="schema_version 2 is not supported: no migration to 3"):
        migrate(golden(), target=3, migrations={1: v1_to_v2})


def test_newer_version_is_refused() -> None:
    d = golden()
    d["schema_version"] = SNAPSHOT_SCHEMA_VERSION + 1
    with pytest.raises(SnapshotError, match="newer than this Tether supports"):
        Snapshot.from_dict(d)
    with pytest.raises(SnapshotError, match="newer"):
        migrate(golden(), target=0, migrations={})


def test_a_failing_or_impure_step_is_reported() -> None:
    def broken(data: dict[str, Any]) -> dict[str, Any]:
        return data["missing"]  # type: ignore[no-any-return]

    def wrong_type(data: dict[str, Any]) -> dict[str, Any]:
        return [data]  # type: ignore[return-value]

    with pytest.raises(SnapshotError, match=r"migration from schema_version 1 to 2 failed: KeyError\('missing'\)"):
        migrate(golden(), target=2, migrations={1: broken})
    with pytest.raises(SnapshotError, match="returned list, not a dict"):
        migrate(golden(), target=2, migrations={1: wrong_type})


def test_the_name_is_configurable_and_a_checkpoint_converts_to_its_error(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(SnapshotError, match="checkpoint schema_version 1 is not supported"):
        migrate({"schema_version": 1}, target=2, migrations={}, what="checkpoint")
    monkeypatch.setattr(checkpoint_module, "CHECKPOINT_SCHEMA_VERSION", 2)  # a hypothetical v2, no migration to it
    with pytest.raises(CheckpointError, match="checkpoint schema_version 1 is not supported"):
        checkpoint_module.parse({"schema_version": 1})


def test_register_migration_into_a_local_registry() -> None:
    registry: dict[int, Migration] = {}
    decorated = register_migration(1, registry)(v1_to_v2)
    assert decorated is v1_to_v2 and registry == {1: v1_to_v2}
    with pytest.raises(SnapshotError, match="already registered"):
        register_migration(1, registry)(v2_to_v3)
    assert migrate(golden(), target=2, migrations=registry)["schema_version"] == 2
    assert MIGRATIONS == {}, "the global registry is untouched"


def test_non_json_input_to_a_migration_is_a_snapshot_error() -> None:
    with pytest.raises(SnapshotError, match=r"snapshot\.data is not JSON \(set\)"):
        migrate({"schema_version": 1, "data": {1, 2}}, target=2, migrations={1: v1_to_v2})


@pytest.mark.parametrize("version", [None, "1", 1.0, True, [1]])
def test_bad_version_types(version: Any) -> None:
    with pytest.raises(SnapshotError, match="schema_version must be an integer"):
        migrate({"schema_version": version})
    assert issubclass(SnapshotError, TetherError)


def test_from_json_migrates_and_checks_what_a_migration_returns(monkeypatch: pytest.MonkeyPatch) -> None:
    """A migrated document is checked in full: a step may return values that are not JSON."""
    v0 = golden()
    v0["schema_version"] = 0
    v0["data"]["state"] = {"old": True}

    def good(data: dict[str, Any]) -> dict[str, Any]:
        data["data"]["state"] = {"new": data["data"]["state"]["old"]}
        return data

    monkeypatch.setitem(MIGRATIONS, 0, good)
    snap = Snapshot.from_json(json.dumps(v0))
    assert snap.schema_version == 1 and snap.data["state"] == {"new": True}

    def bad(data: dict[str, Any]) -> dict[str, Any]:
        data["data"]["state"] = {"new": (1, 2)}
        return data

    monkeypatch.setitem(MIGRATIONS, 0, bad)
    with pytest.raises(SnapshotError, match=r"snapshot\.data\.state\.new is not JSON \(tuple\)"):
        Snapshot.from_json(json.dumps(v0))
