"""The run store a ``tether`` command works on: ``--store`` or the default one.

``--store`` takes a file path, a ``sqlite:///PATH`` URL or a ``postgresql://`` URL (also
``postgres://``), which opens a :class:`~tether.durable.postgres.PostgresStore`. As in
SQLAlchemy, ``sqlite:///runs.db`` is the relative path ``runs.db`` and ``sqlite:////tmp/x.db``
(a fourth slash) the absolute ``/tmp/x.db``. Since ``sqlite:///tmp/x.db`` is easily meant as
``/tmp/x.db``, a relative URL path whose directory does not exist is refused with the absolute
form to write, rather than creating ``./tmp/``. Anything else that looks like a URL is refused
rather than taken for a file name (``--store postgresql://db`` once created a SQLite file at
``./postgresql:/db``), and so is ``:memory:``: a store that ends with the command keeps no run.
Without ``--store`` the store is ``$TETHER_HOME/runs.db``, else ``runs.db`` in the user's data
directory (see :mod:`tether.home`), the same place the SDK uses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..durable.store import RunStore
from ..errors import ConfigurationError, StoreError
from ..home import default_store_path

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):(//)?")
_POSTGRES = ("postgresql", "postgres")
FORMS = "a file path, sqlite:///PATH or postgresql://USER@HOST/DB"


@dataclass(frozen=True)
class StoreSpec:
    """Where a command's runs live: a SQLite file (``path``) or a PostgreSQL conninfo URL (``url``)."""

    path: Path | None = None
    url: str | None = None
    given: bool = False
    """True when the user passed ``--store`` (the commands the CLI prints then pass it too)."""

    def __str__(self) -> str:
        return str(self.path) if self.path is not None else _without_password(self.url or "")

    def flags(self) -> list[str]:
        """``--store STORE`` for the follow-up commands the CLI prints (none for the default store).

        A SQLite path is made absolute, so the command works from any directory; a URL's
        password is not repeated (the printed command then needs it from ``PGPASSWORD`` or
        ``~/.pgpass``).
        """
        if not self.given:
            return []
        return ["--store", str(self.path.resolve()) if self.path is not None else str(self)]

    def exists(self) -> bool:
        """False for a SQLite file not created yet (a server database always counts as existing)."""
        return self.path is None or self.path.exists()

    def open(self, *, create: bool = False) -> RunStore:
        """Open the store; read-only commands (``create=False``) refuse a SQLite file that does not exist."""
        if self.url is not None:
            from ..durable.postgres import PostgresStore

            return PostgresStore(self.url)
        assert self.path is not None
        if not create and not self.path.exists():
            raise StoreError(f"no run store at {str(self.path)!r}; start a run with `tether run PROMPT` or pass --store")
        from ..durable.sqlite import SQLiteStore

        return SQLiteStore(self.path)


def parse_store(text: str | None) -> StoreSpec:
    """The store ``--store text`` names (None: the default store); :class:`ConfigurationError` for anything else."""
    if text is None:
        return StoreSpec(path=default_store_path())
    if not text.strip():
        raise ConfigurationError(f"--store is empty; pass {FORMS}")
    if text.strip() == ":memory:":
        raise ConfigurationError(f"--store ':memory:': a store in memory would lose the run when the command ends; pass {FORMS}")
    match = _SCHEME.match(text)
    if match is None or (len(match.group(1)) == 1 and not match.group(2)):  # a plain path (or a Windows drive, C:\...)
        return StoreSpec(path=Path(text).expanduser(), given=True)
    scheme = match.group(1).lower()
    if scheme in _POSTGRES and match.group(2):
        return StoreSpec(url=text, given=True)
    if scheme == "sqlite" and text.startswith("sqlite:///") and len(text) > len("sqlite:///"):
        return StoreSpec(path=_sqlite_url_path(text), given=True)
    if scheme == "sqlite":
        raise ConfigurationError(f"--store {text!r}: a SQLite URL is sqlite:///relative/path or sqlite:////absolute/path")
    if not match.group(2):
        return StoreSpec(path=Path(text).expanduser(), given=True)  # a file name with a colon (run:1.db) is still a path
    raise ConfigurationError(f"--store {_without_password(text)!r}: unknown kind of store {scheme!r}; pass {FORMS}")


def _sqlite_url_path(text: str) -> Path:
    """The file of a ``sqlite:///PATH`` URL: relative unless PATH starts with ``/`` (``sqlite:////abs``).

    A relative PATH whose directory does not exist is refused, naming the absolute form:
    ``sqlite:///tmp/x.db`` from a directory without ``tmp/`` almost surely meant ``/tmp/x.db``.
    """
    rest = text[len("sqlite:///") :]
    path = Path(rest).expanduser()
    if not path.is_absolute() and not path.parent.is_dir():
        raise ConfigurationError(
            f"--store {text!r} is the relative path {rest!r} (sqlite:/// + PATH, as in SQLAlchemy), and there is no directory "
            f"{str(path.parent)!r} here; for the absolute path /{rest} write sqlite:////{rest}"
        )
    return path


def _without_password(url: str) -> str:
    """``url`` with the password of its user info replaced by ``***`` (for messages and titles)."""
    return re.sub(r"^([A-Za-z][A-Za-z0-9+.-]*://[^/@:]*):[^/@]*@", r"\1:***@", url)


__all__ = ["FORMS", "StoreSpec", "parse_store"]
