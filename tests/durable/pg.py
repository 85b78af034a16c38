"""A throwaway PostgreSQL server for tests and benchmarks: ``initdb`` + ``pg_ctl`` in a temp dir.

The cluster listens only on a unix socket inside its own directory (no TCP port, so parallel
runs never collide). PostgreSQL refuses to run as root, so under root the server commands run
as the ``postgres`` system user (created by Debian's ``postgresql`` package) in a directory it
owns; root connects through the socket with ``trust`` authentication. Binaries are found under
``/usr/lib/postgresql/*/bin`` (newest first), ``$TETHER_PG_BIN``, or on ``PATH``.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

INSTALL_HINT = "install PostgreSQL (Debian: apt-get install -y postgresql) or set TETHER_PG_BIN to its bin directory"


class PgUnavailable(RuntimeError):
    """No PostgreSQL server can be started here (binaries or the ``postgres`` user missing)."""


def find_bindir() -> Path:
    """The directory holding ``initdb``, ``pg_ctl`` and ``postgres``, or raise PgUnavailable."""
    candidates: list[str] = []
    if os.environ.get("TETHER_PG_BIN"):
        candidates.append(os.environ["TETHER_PG_BIN"])

    def version(path: str) -> tuple[int, ...]:
        name = Path(path).parent.name
        return tuple(int(p) for p in name.split(".") if p.isdigit())

    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=version, reverse=True)
    on_path = shutil.which("pg_ctl")
    if on_path:
        candidates.append(str(Path(on_path).parent))
    for candidate in candidates:
        if all((Path(candidate) / tool).is_file() for tool in ("initdb", "pg_ctl", "postgres")):
            return Path(candidate)
    raise PgUnavailable(f"PostgreSQL binaries (initdb, pg_ctl) not found under /usr/lib/postgresql/*/bin or on PATH; {INSTALL_HINT}")


class PgServer:
    """One PostgreSQL cluster in a temp dir. ``start()`` then ``conninfo(dbname)``; ``stop()``."""

    SETTINGS_DURABLE = "fsync=on, synchronous_commit=on, full_page_writes=on (PostgreSQL's defaults)"
    """What ``durable=True`` runs with (benchmarks state it)."""

    def __init__(self, *, durable: bool = False, default_durability: bool = False, max_connections: int = 100) -> None:
        """``durable`` (or its other name ``default_durability``): PostgreSQL's own defaults (fsync,
        synchronous_commit and full_page_writes on), as a production server runs; otherwise no
        fsync (test clusters). ``max_connections``: the server's connection limit."""
        self.bindir = find_bindir()
        self.durable = durable or default_durability
        self.max_connections = max_connections
        as_root = os.geteuid() == 0  # the postgres user must reach the dir: /tmp, not a private TMPDIR
        self.root = Path(tempfile.mkdtemp(prefix="tether-pg-", dir="/tmp" if as_root and os.path.isdir("/tmp") else None))
        self.data = self.root / "data"
        self.port = 5432
        self.started = False
        self._user: list[str] = []
        if as_root:
            try:
                entry = pwd.getpwnam("postgres")
            except KeyError:
                shutil.rmtree(self.root, ignore_errors=True)
                raise PgUnavailable(f"running as root but there is no 'postgres' system user to run the server; {INSTALL_HINT}") from None
            os.chown(self.root, entry.pw_uid, entry.pw_gid)
            self._user = ["runuser", "-u", "postgres", "--"]

    def _run(self, *args: str) -> None:
        cmd = [*self._user, *args]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, cwd=self.root, timeout=120)
        except FileNotFoundError as exc:
            raise PgUnavailable(f"{cmd[0]} is missing ({exc}); {INSTALL_HINT}") from None
        if proc.returncode != 0:
            log = self.root / "server.log"
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise PgUnavailable(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stdout}{proc.stderr}{tail}")

    def start(self) -> PgServer:
        """initdb (trust auth, UTF8) and start the server on a unix socket in the cluster dir."""
        self._run(str(self.bindir / "initdb"), "-D", str(self.data), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync")
        options = f"-k {self.root} -c listen_addresses= -p {self.port} -c max_connections={self.max_connections}"
        if not self.durable:  # test clusters: no fsync (the data is thrown away anyway)
            options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        # durable: PostgreSQL's defaults (fsync, synchronous_commit and full_page_writes on): every
        # commit is flushed to the WAL before it returns, as a production server does
        self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-l", str(self.root / "server.log"), "-o", options, "-w", "start")
        self.started = True
        return self

    def conninfo(self, dbname: str = "postgres") -> str:
        """A libpq connection string for ``dbname`` on this server."""
        return f"host={self.root} port={self.port} user=postgres dbname={dbname}"

    def stop(self) -> None:
        """Stop the server (immediate mode) and delete the cluster."""
        try:
            if self.started:
                self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")
                self.started = False
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> PgServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
