"""``--store``: a path, ``sqlite:///PATH`` or a ``postgresql://`` URL; the default store; ``--version``."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tether import __version__
from tether.cli.app import STORE_HELP
from tether.cli.stores import parse_store
from tether.durable import SQLiteStore
from tether.errors import ConfigurationError

from ..durable.conftest import pg_conninfo, pg_server  # noqa: F401 - fixtures
from .conftest import Outcome, one_line_error, tether_process


def test_store_forms(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "rel").mkdir()
    assert parse_store("runs.db").path == Path("runs.db")
    assert parse_store("/abs/runs.db").path == Path("/abs/runs.db")
    assert parse_store("sqlite:///rel/runs.db").path == Path("rel/runs.db")
    assert parse_store("sqlite:////abs/runs.db").path == Path("/abs/runs.db")
    assert parse_store("run:1.db").path == Path("run:1.db")  # a colon alone does not make a URL
    assert parse_store("C:\\runs\\runs.db").path is not None  # a Windows drive letter is a path
    assert parse_store("postgresql://u@db.internal/app").url == "postgresql://u@db.internal/app"
    assert parse_store("postgres://u@db.internal/app").url == "postgres://u@db.internal/app"
    assert not parse_store(None).given and parse_store(None).path == Path(os.environ["TETHER_HOME"]).resolve() / "runs.db"


@pytest.mark.parametrize("bad", ["mysql://u@h/db", "sqlite://host/x.db", "sqlite:///", "redis://h", "   ", ":memory:"])
def test_other_stores_are_refused(bad: str) -> None:
    with pytest.raises(ConfigurationError, match="--store"):
        parse_store(bad)


def test_a_password_is_not_repeated() -> None:
    spec = parse_store("postgresql://user:s3cret@db.internal/app")
    assert str(spec) == "postgresql://user:***@db.internal/app" and "s3cret" not in " ".join(spec.flags())
    with pytest.raises(ConfigurationError) as caught:
        parse_store("mysql://user:s3cret@db/app")
    assert "s3cret" not in str(caught.value)


def test_an_unknown_store_url_is_one_line_and_creates_nothing(tmp_path: Path, script: Callable[..., str]) -> None:
    home = tmp_path / "home"
    process = tether_process("run", "hi", "--model", script("hello"), "--store", "mysql://u@h/db", home=home, module=False, cwd=tmp_path)
    out, err = process.communicate(timeout=60)
    one_line_error(Outcome(process.returncode, out, err), "tether run", "mysql://u@h/db", "postgresql://")
    assert process.returncode == 1 and out == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["script-0.json"])  # no ./mysql:/ file, no home


def test_sqlite_url(tmp_path: Path, home: Path, cli: Callable[..., Outcome], script: Callable[..., str]) -> None:
    db = tmp_path / "there" / "runs.db"
    assert cli("run", "hi", "--model", script("hello"), "--run-id", "a", "--store", f"sqlite:///{db}").code == 0
    assert [run.run_id for run in SQLiteStore(db).list_runs()] == ["a"]
    assert not (home / "runs.db").exists()


def test_sqlite_url_paths_are_relative_as_in_sqlalchemy_and_a_missing_directory_is_refused(
    tmp_path: Path, home: Path, cli: Callable[..., Outcome], script: Callable[..., str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``sqlite:///x.db`` is ./x.db and ``sqlite:////abs/x.db`` is /abs/x.db (SQLAlchemy's rule, the
    one the help states); ``sqlite:///tmp/x.db`` from a directory with no ``tmp/`` means /tmp, so it
    is refused naming the four-slash form, and nothing is created."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    absolute = tmp_path / "abs" / "x.db"
    refused = cli("run", "hi", "--model", script("hello"), "--store", f"sqlite://{absolute}")  # three slashes, as for a URI
    one_line_error(refused, f"is the relative path {str(absolute)[1:]!r}", f"write sqlite:///{absolute}")
    assert list(work.iterdir()) == [] and not absolute.exists() and not home.exists()

    assert cli("run", "hi", "--model", script("hello"), "--run-id", "a", "--store", f"sqlite:///{absolute}").code == 0
    assert cli("run", "hi", "--model", script("hello"), "--run-id", "b", "--store", "sqlite:///here.db").code == 0
    assert [run.run_id for run in SQLiteStore(absolute).list_runs()] == ["a"]
    assert [run.run_id for run in SQLiteStore(work / "here.db").list_runs()] == ["b"]
    assert "sqlite:///relative/path, sqlite:////absolute/path" in STORE_HELP  # what --help says


def test_an_in_memory_store_is_refused_and_creates_nothing(
    tmp_path: Path, home: Path, cli: Callable[..., Outcome], script: Callable[..., str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    one_line_error(cli("run", "hi", "--model", script("hello"), "--store", ":memory:"), "--store ':memory:'", "a file path")
    one_line_error(cli("runs", "--store", ":memory:"), "--store ':memory:'")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["script-0.json"]  # no ':memory:' file, no lock directory


def test_postgresql_url_opens_a_postgres_store(
    pg_conninfo: str,  # noqa: F811 - the fixture
    cli: Callable[..., Outcome],
    home: Path,
    script: Callable[..., str],
) -> None:
    from tether.durable.postgres import PostgresStore

    params = dict(part.split("=", 1) for part in pg_conninfo.split())
    url = f"postgresql://{params['user']}@/{params['dbname']}?host={params['host']}&port={params['port']}"
    assert cli("run", "hi", "--model", script("hello"), "--run-id", "pg-run", "--store", url).code == 0
    store = PostgresStore(pg_conninfo)
    try:
        assert [(run.run_id, run.status) for run in store.list_runs()] == [("pg-run", "finished")]
    finally:
        store.close()
    listed = cli("runs", "--store", url)
    assert listed.code == 0 and "pg-run" in listed.out
    shown = cli("show", "pg-run", "--store", url)
    assert shown.code == 0 and "[2] assistant: hello" in shown.out
    assert cli("rm", "pg-run", "--store", url).out.strip() == "deleted pg-run"
    assert "pg-run" not in cli("runs", "--store", url).out
    assert not (home / "runs.db").exists()  # nothing went to SQLite
    assert not any("postgresql:" in p.name for p in Path.cwd().iterdir())


@pytest.mark.skipif(sys.platform != "linux", reason="XDG_DATA_HOME names the data directory on Linux only")
def test_default_store_is_in_the_user_data_directory_without_tether_home(tmp_path: Path, script: Callable[..., str]) -> None:
    """No TETHER_HOME: runs go to the platform's data directory (XDG_DATA_HOME on Linux), whatever the cwd."""
    data = tmp_path / "data"
    env = {"HOME": str(tmp_path / "user"), "XDG_DATA_HOME": str(data)}
    spec = script("hello")
    for cwd in (tmp_path / "a", tmp_path / "b"):
        cwd.mkdir()
        process = tether_process("run", "hi", "--model", spec, "--run-id", cwd.name, home=tmp_path, module=False, cwd=cwd, extra_env=env)
        out, err = process.communicate(timeout=60)
        assert process.returncode == 0, err
        assert not any(cwd.iterdir())  # no ./.tether in the working directory
    assert sorted(run.run_id for run in SQLiteStore(data / "tether" / "runs.db").list_runs()) == ["a", "b"]
    process = tether_process("runs", home=tmp_path, module=False, cwd=tmp_path, extra_env=env)
    out, _ = process.communicate(timeout=60)
    assert f"runs in {data / 'tether' / 'runs.db'}" in out.splitlines()


def test_version(tmp_path: Path) -> None:
    process = tether_process("--version", home=tmp_path, module=False)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0 and err == ""
    assert out.strip() == f"tether {__version__}"
