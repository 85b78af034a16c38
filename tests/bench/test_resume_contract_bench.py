"""bench/resume_contract.py still runs: ``--quick`` on Tether (the kit) and on Strands with
``FileSessionManager`` (the peer probe protocol, real strands-agents from this venv), and on Tether
served and on Temporal (two real ``tether serve`` processes; a real Temporal dev server), so the
scoreboard cannot rot. Every cell must be computed (no "failed"); Tether's must all hold (or be not
applicable where the kit says why)."""

from __future__ import annotations

import asyncio
import importlib.util
import os
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "resume_contract.py"


def _bench(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setenv("PYTHONPATH", os.environ.get("PYTHONPATH", ""))  # the bench adds its peers directory
    spec = importlib.util.spec_from_file_location("bench_resume_contract", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "bench_resume_contract", module)
    spec.loader.exec_module(module)
    return module


def test_quick_scoreboard_computes_every_cell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    module = _bench(monkeypatch)
    output = tmp_path / "results.md"
    output.write_text("# results\n\nkept\n")
    argv = ["--quick", "--columns", "tether-sqlite,strands-file", "--k", "2", "--output", str(output), "--workdir", str(tmp_path / "w")]
    section, cells = module.main(argv)
    assert set(cells) == {"tether-sqlite", "strands-file"}
    for key, by_property in cells.items():
        assert list(by_property) and set(by_property) == set(module.PROPERTIES), key
        for name, cell in by_property.items():
            assert cell.verdict in ("holds", "violated", "not applicable"), f"{key} {name}: {cell}"
    assert all(cell.verdict == "holds" for cell in cells["tether-sqlite"].values()), cells["tether-sqlite"]
    assert "2 processes answered at once" in cells["strands-file"]["consume-once"].detail
    text = output.read_text()
    assert text.startswith("# results\n\nkept\n") and "<!-- bench/resume_contract.py -->" in text
    assert "| Strands FileSessionManager |" in section and "strands-agents" in section and "nproc" in section


def test_quick_scoreboard_served_and_on_temporal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    module = _bench(monkeypatch)
    argv = ["--quick", "--columns", "tether-serve,tether-temporal", "--k", "2", "--no-write", "--workdir", str(tmp_path / "w")]
    section, cells = module.main(argv)
    not_applicable: dict[str, set[str]] = {"tether-serve": set(), "tether-temporal": set()}  # Temporal forks with TetherClient.fork
    for key, by_property in cells.items():
        assert set(by_property) == set(module.PROPERTIES), key
        for name, cell in by_property.items():
            assert cell.verdict == ("not applicable" if name in not_applicable[key] else "holds"), f"{key} {name}: {cell}"
    assert "| Tether served (SQLite) |" in section and "| Tether on Temporal |" in section


def test_a_temporal_file_store_is_copied_and_served_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The Pydantic AI + Temporal column's store: a dev server per case kept in the case's SQLite file;
    a copy of a case is served by a server of its own and holds the case's run; one server runs at a time."""
    pytest.importorskip("temporalio")
    from temporalio.client import Client

    module = _bench(monkeypatch)
    column = next(c for c in module.COLUMNS if c.key == "pydantic-ai-temporal")
    setting = module.Setting((column,), 2, True, tmp_path)

    async def start(address: str) -> None:
        client = await Client.connect(address)
        await client.start_workflow("Parked", id="case-run", task_queue="nobody-serves-it")

    async def described(address: str) -> str:
        client = await Client.connect(address)
        return (await client.get_workflow_handle("case-run").describe()).workflow_type

    with ExitStack() as stack:
        places = module.Places(setting, column, stack)
        _, address = places.make("case")
        asyncio.run(start(address))
        target, copy_address = places.copy("case", "case-a")
        assert copy_address != address and (target / "temporal.db").exists()
        assert places.server.db_file == target / "temporal.db"  # one server at a time: the case's is stopped
        assert asyncio.run(described(copy_address)) == "Parked"
        server = places.server
    assert server.process is None  # the stack stopped the last one
