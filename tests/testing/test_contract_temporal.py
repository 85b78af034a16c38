"""The resume contract on Temporal (``runtime="temporal"``): k updates and k signals delivering one
interrupt answer at the same instant to a real Temporal dev server's workflow: one update taken,
the others refused, each effect once; the store-bound properties are not applicable, with why."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.temporal.fixtures import dev_server  # noqa: F401  (the Temporal dev server)
from tests.temporal.server import DevServer
from tether.errors import TetherError
from tether.testing import PROPERTIES, resume_contract
from tether.testing.contract_report import CONSUME, HOLDS, NOT_APPLICABLE

AGENTS = "tests.testing.contract_agents"


@pytest.fixture(autouse=True)
def clean_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The check runs from an empty directory, which it must leave empty (the agents' effects go to its scratch)."""
    here = tmp_path / "cwd"
    here.mkdir()
    monkeypatch.chdir(here)
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[2]))
    yield
    assert list(here.iterdir()) == []


@pytest.mark.parametrize("k", [2, 8])
def test_k_deliveries_of_one_answer_on_temporal_take_one(dev_server: DevServer, tmp_path: Path, k: int) -> None:  # noqa: F811
    report = resume_contract(
        f"{AGENTS}:booking", "book it", answers={"approve": "yes"}, k=k, workdir=tmp_path, runtime="temporal", temporal=dev_server.address
    )
    consume = report.result(CONSUME)
    assert consume.verdict == HOLDS, report.summary()
    assert f"{k} updates and {k} signals delivering one answer at once: 1 update taken, {k - 1} refused, each effect once" in consume.detail
    others = [report.result(name) for name in PROPERTIES if name != CONSUME]
    assert all(r.verdict == NOT_APPLICABLE and "runtime='local'" in r.detail for r in others), report.summary()
    assert "sqlite, temporal" in report.summary()


def test_temporal_and_its_runtime_go_together(tmp_path: Path) -> None:
    with pytest.raises(TetherError, match="temporal='HOST:PORT' goes with runtime='temporal'"):
        resume_contract(f"{AGENTS}:booking", "book it", workdir=tmp_path, runtime="temporal")
    with pytest.raises(TetherError, match="temporal='HOST:PORT' goes with runtime='temporal'"):
        resume_contract(f"{AGENTS}:booking", "book it", workdir=tmp_path, temporal="127.0.0.1:7233")
