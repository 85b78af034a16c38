"""The server's structured logs (:mod:`tether.serve.logs`): an access line per request with its run
id, run lifecycle lines (started, finished, failed with its error), no traceback for a client's
mistake, and the two line formats."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from tether.durable import SQLiteStore
from tether.serve import create_app
from tether.serve.logs import LogFormatter

from . import registry_module
from .test_app import BASE


def events(caplog: pytest.LogCaptureFixture, kind: str) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "tether.serve" and getattr(r, "event", None) == kind]


def test_requests_and_runs_are_logged_with_their_run_id(store: SQLiteStore, gate_dir: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="tether.serve")
    (gate_dir / "fail-once").write_text("")  # the flaky agent's model fails once after its tool ran
    with TestClient(create_app(registry_module.AGENTS, store, scan_interval=60), base_url=BASE) as client:
        assert client.post("/agents/chat/runs", json={"prompt": "hi"}).status_code == 202
        assert client.post("/agents/flaky/runs", json={"prompt": "go", "run_id": "l2"}).status_code == 202
        deadline = time.monotonic() + 20
        while not events(caplog, "run.failed") or len(events(caplog, "run.finished")) < 1:
            assert time.monotonic() < deadline, [r.getMessage() for r in caplog.records]
            time.sleep(0.05)
        assert client.post("/agents/chat/runs", json={"prompt": ""}).status_code == 400
        assert client.get("/runs/l2").status_code == 200
    (started_chat, started_flaky) = events(caplog, "run.started")
    chat_run = started_chat.run_id  # type: ignore[attr-defined]
    assert chat_run.startswith("run-") and started_flaky.run_id == "l2"  # type: ignore[attr-defined]
    (finished,) = events(caplog, "run.finished")
    assert finished.run_id == chat_run and finished.status == "finished"  # type: ignore[attr-defined]
    (failed,) = events(caplog, "run.failed")
    assert failed.run_id == "l2" and "ModelDown: the model is down" in failed.error  # type: ignore[attr-defined]
    access = [(r.method, r.path, r.status, getattr(r, "run_id", None)) for r in events(caplog, "access")]  # type: ignore[attr-defined]
    assert ("POST", "/agents/chat/runs", 202, chat_run) in access
    assert ("POST", "/agents/flaky/runs", 202, "l2") in access
    assert ("POST", "/agents/chat/runs", 400, None) in access and ("GET", "/runs/l2", 200, "l2") in access
    assert all(r.exc_info is None and r.levelno < logging.ERROR for r in caplog.records)  # no traceback for the failed run or the 400


def test_a_line_is_logfmt_or_json_with_its_fields() -> None:
    record = logging.LogRecord("tether.serve", logging.INFO, __file__, 1, "run %r %s", ("r 1", "failed"), None)
    record.event, record.run_id, record.error = "run.failed", "r 1", 'ValueError: "bad"'
    text = LogFormatter().format(record)
    assert text.split(" ", 1)[1].startswith('level=info logger=tether.serve msg="run \'r 1\' failed" event=run.failed run_id="r 1"')
    assert text.endswith('error="ValueError: \\"bad\\""')
    line = json.loads(LogFormatter(json_lines=True).format(record))
    assert line["event"] == "run.failed" and line["run_id"] == "r 1" and line["msg"] == "run 'r 1' failed" and line["level"] == "info"


def test_metrics_count_runs_steps_and_failures(store: SQLiteStore, gate_dir: Path) -> None:
    (gate_dir / "fail-once").write_text("")
    with TestClient(create_app(registry_module.AGENTS, store, scan_interval=60, token="t"), base_url=BASE) as client:
        assert client.get("/metrics").status_code == 401  # like the API, not a probe
        auth = {"Authorization": "Bearer t"}
        assert client.post("/agents/chat/runs", json={"prompt": "hi", "run_id": "m1"}, headers=auth).status_code == 202
        assert client.post("/agents/flaky/runs", json={"prompt": "go", "run_id": "m2"}, headers=auth).status_code == 202
        deadline = time.monotonic() + 20
        while {r.run_id: r.status for r in store.list_runs()} != {"m1": "finished", "m2": "failed"}:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        response = client.get("/metrics", headers=auth)
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/plain; version=0.0.4")
    values = dict(line.rsplit(" ", 1) for line in response.text.splitlines() if not line.startswith("#"))
    assert values['tether_runs{status="finished"}'] == "1" and values['tether_runs{status="failed"}'] == "1"
    assert values["tether_runs_failed_total"] == "1" and values["tether_takeovers_total"] == "0"
    steps = int(values["tether_steps_total"])
    assert steps >= 3 and values['tether_step_seconds_bucket{le="+Inf"}'] == str(steps) == values["tether_step_seconds_count"]
