"""``tether view`` (file and --serve) and ``tether export --format atif``."""

from __future__ import annotations

import contextlib
import http.client
import json
import threading
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tether.cli.view import make_server
from tether.durable import SQLiteStore
from tether.inspect import ATIF_VERSION

from ..inspector.runs import PROMPT, build
from .conftest import Outcome


@pytest.fixture
def db(tmp_path: Path) -> str:
    build(tmp_path / "runs.db").close()
    return str(tmp_path / "runs.db")


def test_view_writes_one_page(db: str, tmp_path: Path, cli: Callable[..., Outcome]) -> None:
    target = tmp_path / "out" / "page.html"
    target.parent.mkdir()
    outcome = cli("--store", db, "view", "r1", "-o", str(target))
    assert outcome.code == 0, outcome.err
    assert f"wrote {target}" in outcome.out
    page = target.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "tether-inspector/1" in page
    assert f"tether fork r1 --at 3 --store {Path(db).resolve()}" in page


def test_view_defaults_to_run_html_here(db: str, tmp_path: Path, cli: Callable[..., Outcome], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert cli("--store", db, "view", "r1.child").code == 0
    assert (tmp_path / "r1.child.html").is_file()


def test_view_of_a_missing_run_is_one_line(db: str, cli: Callable[..., Outcome]) -> None:
    outcome = cli("--store", db, "view", "nope", "-o", "x.html")
    assert outcome.code != 0 and "no run 'nope'" in outcome.err and not Path("x.html").exists()


def test_export_formats(db: str, cli: Callable[..., Outcome]) -> None:
    atif = cli("--store", db, "export", "r1", "--format", "atif")
    assert atif.code == 0
    trajectory = json.loads(atif.out)
    assert trajectory["schema_version"] == ATIF_VERSION and trajectory["steps"][0]["message"] == PROMPT
    default, tether = (json.loads(cli("--store", db, "export", "r1", *flags).out) for flags in ((), ("--format", "tether")))
    default.pop("created_at"), tether.pop("created_at")  # a snapshot is stamped when it is made
    assert default == tether and default["data"]["messages"][0]["content"][0]["text"] == PROMPT
    bad = cli("--store", db, "export", "r1", "--format", "xml")
    assert bad.code != 0 and "invalid choice" in bad.err


def test_serve_renders_afresh_on_loopback(db: str) -> None:
    store = SQLiteStore(db)
    server = make_server(store, "r1")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        host, port = server.server_address[:2]
        assert host == "127.0.0.1"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/") as response:
            page = response.read().decode()
        assert '"live":true' in page and '"root":"r1"' in page
        with pytest.raises(urllib.error.HTTPError) as missing:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/etc/passwd")
        assert missing.value.code == 404
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
        store.close()


@pytest.mark.parametrize(
    "host",
    [
        "attacker.example",
        "attacker.example:{port}",
        "127.0.0.1",
        "127.0.0.1:1",
        "localhost",
        "localhost:{port}.attacker.example",
        "[::1]:{port}",
        None,
    ],
)
def test_serve_refuses_a_foreign_host_header(db: str, host: str | None) -> None:
    """DNS rebinding: a page of another site reaches the port from the browser with its own name as Host."""
    with _served(db) as port:
        status, body = _get(port, None if host is None else host.format(port=port))
    assert status == 421
    assert "tether-inspector" not in body and "refund order A1" not in body


@pytest.mark.parametrize("host", ["127.0.0.1:{port}", "localhost:{port}", "LocalHost:{port}"])
def test_serve_answers_its_own_loopback_names(db: str, host: str) -> None:
    with _served(db) as port:
        status, body = _get(port, host.format(port=port))
    assert status == 200 and '"root":"r1"' in body and "refund order A1" in body


@contextlib.contextmanager
def _served(db: str) -> Iterator[int]:
    """``tether view --serve``'s server for run r1, on a free loopback port, in a thread."""
    store = SQLiteStore(db)
    server = make_server(store, "r1")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
        store.close()


def _get(port: int, host: str | None) -> tuple[int, str]:
    """``GET /`` over a real connection to the port, with exactly this ``Host`` header (none for None)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.putrequest("GET", "/", skip_host=True)
        if host is not None:
            connection.putheader("Host", host)
        connection.endheaders()
        response = connection.getresponse()
        return response.status, response.read().decode()
    finally:
        connection.close()


def test_view_open_hands_the_file_to_the_browser(
    db: str, tmp_path: Path, cli: Callable[..., Outcome], monkeypatch: pytest.MonkeyPatch
) -> None:
    import webbrowser

    opened: list[str] = []
    monkeypatch.setattr(webbrowser, "open", lambda url: opened.append(url) or True)
    assert cli("--store", db, "view", "r1", "-o", str(tmp_path / "p.html"), "--open").code == 0
    assert opened == [(tmp_path / "p.html").resolve().as_uri()]
