"""Byte-identical copies of a crashed PostgreSQL store, for the resume contract's recovery check.

A crashed run is made in a database of its own; each copy is a new database created from it as a
template (``CREATE DATABASE copy TEMPLATE crashed``: PostgreSQL copies the files, byte for byte),
once no session is connected to it. Every database made here is dropped by :meth:`drop_all`.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ..errors import TetherError


class PgCopies:
    """Databases beside the one ``url`` names: ``tc_<token>_<slug>``, made and dropped here."""

    def __init__(self, url: str, token: str) -> None:
        self.url = url
        self.token = token
        self.made: list[str] = []

    def _name(self, slug: str) -> str:
        return f"tc_{self.token}_{re.sub(r'[^a-z0-9_]', '_', slug.lower())}"[:63]

    def _admin(self) -> Any:
        import psycopg

        return psycopg.connect(self.url, autocommit=True)

    def url_of(self, name: str) -> str:
        """The URL of database ``name`` (the given URL with its database replaced)."""
        parts = urlsplit(self.url)
        return urlunsplit(parts._replace(path=f"/{name}"))

    def allowed(self) -> bool:
        """Whether the role may create databases (superuser or CREATEDB)."""
        with self._admin() as conn:
            row = conn.execute("SELECT rolsuper OR rolcreatedb FROM pg_roles WHERE rolname = current_user").fetchone()
        return bool(row and row[0])

    def database(self, slug: str) -> str:
        """A new empty database for a crashed run; its URL."""
        name = self._name(slug)
        with self._admin() as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
            conn.execute(f'CREATE DATABASE "{name}"')
        self.made.append(name)
        return self.url_of(name)

    def copy(self, source_slug: str, slug: str) -> str:
        """A byte-identical copy of database ``source_slug`` (its sessions ended first); its URL."""
        source, name = self._name(source_slug), self._name(slug)
        if source not in self.made:
            raise TetherError(f"resume contract: no database {source!r} was made to copy")
        with self._admin() as conn:
            conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()", (source,))
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
            conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{source}" STRATEGY FILE_COPY')
        self.made.append(name)
        return self.url_of(name)

    def drop_all(self) -> None:
        """Drop every database made here (sessions still connected are ended)."""
        if not self.made:
            return
        with self._admin() as conn:
            for name in reversed(self.made):
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        self.made.clear()
