"""``tether retry RUN``: asks a running server (a real ``tether serve`` process) to retry a failed run."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.serve import conftest as serve_fixtures
from tests.serve.conftest import ServerProcess
from tests.serve.test_restart import wait_status as wait_remote
from tests.serve.test_retry import effects
from tether.cli import main

gate_dir = serve_fixtures.gate_dir
server = serve_fixtures.server


def test_tether_retry_asks_the_server(server: ServerProcess, gate_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    server.start()
    (gate_dir / "fail-once").write_text("")
    assert httpx.post(f"{server.url}/agents/flaky/runs", json={"prompt": "go", "run_id": "f2"}).status_code == 202
    wait_remote(server.url, "f2", "failed")
    assert main(["retry", "f2", "--server", server.url]) == 0
    assert "f2" in capsys.readouterr().out
    assert wait_remote(server.url, "f2", "finished")["answer"] == "recovered"
    assert effects(gate_dir) == ["f2/t-flaky"]
    assert main(["retry", "f2", "--server", server.url]) == 1
    assert "is finished" in capsys.readouterr().err


def test_tether_retry_names_an_unreachable_server(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["retry", "r1", "--server", "ftp://example"]) == 1
    assert "is not an http:// or https:// address" in capsys.readouterr().err
