"""``tether view RUN``: the run as one self-contained HTML page (see :mod:`tether.inspect`).

``-o FILE`` names the file (default ``RUN.html`` in the current directory), ``--open`` opens it
in the default browser, ``--serve`` serves the page read-only on 127.0.0.1 instead, rendered
afresh on every request, reloading itself every two seconds while the run is running.
"""

from __future__ import annotations

import argparse
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

from ..durable.store import RunStore
from ..errors import RunNotFoundError
from .runs import console, open_store, printable
from .stores import StoreSpec


def cmd_view(args: argparse.Namespace, path: StoreSpec) -> int:
    """Write (or serve) the inspector page of ``args.run_id``."""
    from ..inspect import render_html

    store = open_store(path)
    if store.head(args.run_id) is None:
        raise RunNotFoundError(f"no run {args.run_id!r} in {path}; see `tether runs`")
    if args.serve:
        server = make_server(store, args.run_id, args.port, path.flags())
        host, port = server.server_address[:2]
        url = f"http://{host!s}:{port}/"
        console().print(f"serving {printable(args.run_id)} read-only at {url} (Ctrl-C stops)", markup=False, soft_wrap=True)
        if args.open:
            _open(url)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            server.server_close()
        return 0
    target = Path(args.output) if args.output else Path(f"{_file_name(args.run_id)}.html")
    page = render_html(store, args.run_id, store_flags=path.flags())
    target.write_text(page, encoding="utf-8")
    console().print(f"wrote {target} ({len(page.encode()):,} bytes) for run {printable(args.run_id)}", markup=False, soft_wrap=True)
    if args.open:
        _open(target.resolve().as_uri())
    return 0


def make_server(store: RunStore, run_id: str, port: int = 0, store_flags: list[str] | None = None) -> HTTPServer:
    """A read-only HTTP server on 127.0.0.1 (``port`` 0: any free port) serving the run's page at ``/``.

    Each ``GET /`` renders the page from the store again, so a live run's page shows its latest
    step (the page reloads itself while the run is running). Anything else is 404.

    A request whose ``Host`` header is not the server's own loopback name (``127.0.0.1:PORT`` or
    ``localhost:PORT``) is answered 421 without reading the store: a page of another site whose
    name an attacker re-points at 127.0.0.1 (DNS rebinding) reaches this port from the user's
    browser, but its requests carry the attacker's name, so they never see the conversation.
    """
    from ..inspect import render_html

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if not _is_own_host(self.headers.get("Host"), server.server_port):
                self.send_error(421, "Misdirected Request", "this server answers only to 127.0.0.1:PORT and localhost:PORT")
                return
            if self.path.split("?")[0] not in ("/", "/index.html"):
                self.send_error(404)
                return
            body = render_html(store, run_id, store_flags=store_flags or [], live=True).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # quiet: the command printed where it serves

    server = HTTPServer(("127.0.0.1", port), Handler)
    return server


def _is_own_host(header: str | None, port: int) -> bool:
    """Whether a request's ``Host`` header names this loopback server (``127.0.0.1`` or ``localhost``).

    The port must be the bound one; it may be left out only when that is HTTP's default, 80, as
    a browser then leaves it out. A missing header is refused (every HTTP/1.1 client sends one).
    """
    if header is None:
        return False
    name = header.strip().lower()
    names = {f"{host}:{port}" for host in _LOOPBACK_NAMES}
    if port == 80:
        names |= set(_LOOPBACK_NAMES)
    return name in names


_LOOPBACK_NAMES = ("127.0.0.1", "localhost")
"""The names the served page answers to: the address it binds and the name that resolves to it."""


def _file_name(run_id: str) -> str:
    """A file name for the run's page (characters a path may not hold replaced)."""
    return "".join(char if char.isalnum() or char in "-_." else "_" for char in run_id).lstrip(".") or "run"


def _open(url: str) -> None:
    import webbrowser

    if not webbrowser.open(url):
        print(f"could not open a browser; open {url}", file=sys.stderr)
