"""Snapshots: an agent's state as a versioned JSON document.

One concept per module:

- :mod:`~tether.snapshot.document`: the :class:`Snapshot` class (its storage, JSON and dict
  forms, and loading with validation);
- :mod:`~tether.snapshot.fields`: the fields a snapshot captures, the presets and the
  selection rule (preset, then ``include`` adds, then ``exclude`` removes);
- :mod:`~tether.snapshot.migrations`: schema versions and the registry of pure ``dict ->
  dict`` migrations that upgrade older documents (newer ones are refused);
- :mod:`~tether.snapshot.validation`: the checks of a snapshot's ``data``;
- :mod:`~tether.snapshot.report`: the size report;
- :mod:`~tether.snapshot.typescript`: the document of Strands' TypeScript SDK, to and from
  Tether's (pure ``dict -> dict`` conversions).

The public names are re-exported here (``from tether.snapshot import Snapshot``).
"""

from __future__ import annotations

from .document import MULTI_AGENT_SCOPE, SCOPE, Snapshot
from .fields import FIELDS, PRESETS, resolve_fields
from .migrations import MIGRATIONS, SNAPSHOT_SCHEMA_VERSION, Migration, migrate, register_migration
from .report import size_report
from .typescript import TS_SNAPSHOT_SCHEMA_VERSION, from_typescript, is_typescript, to_typescript
from .validation import check_data, check_multi_agent_data

__all__ = [
    "FIELDS",
    "MIGRATIONS",
    "MULTI_AGENT_SCOPE",
    "PRESETS",
    "SCOPE",
    "SNAPSHOT_SCHEMA_VERSION",
    "TS_SNAPSHOT_SCHEMA_VERSION",
    "Migration",
    "Snapshot",
    "check_data",
    "check_multi_agent_data",
    "from_typescript",
    "is_typescript",
    "migrate",
    "register_migration",
    "resolve_fields",
    "size_report",
    "to_typescript",
]
