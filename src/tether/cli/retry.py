"""``tether retry RUN``: ask a running ``tether serve`` to retry a failed served run.

A served run belongs to its server (its registry entry builds the agent), so the retry is the
server's ``POST /runs/{id}/retry``: the run goes on from its last stored step, as a resume does
(no recorded model or tool call is made again). A run of the command line itself is retried with
``tether resume RUN``. The token is ``--token`` or ``$TETHER_SERVE_TOKEN``.
"""

from __future__ import annotations

import argparse
import json
import os
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import quote

from ..errors import ConfigurationError, TetherError
from .serve import TOKEN_VAR
from .stores import StoreSpec

DEFAULT_SERVER = "http://127.0.0.1:8000"


def add_parser(command: Any) -> None:
    """Add the ``retry`` subcommand through the app's ``command(name, help)`` helper."""
    sub = command("retry", "retry a failed (or stopped) run of a tether serve server from its last stored step")
    sub.add_argument("run_id", metavar="RUN", help="the served run to retry")
    sub.add_argument("--server", default=DEFAULT_SERVER, metavar="URL", help=f"the server's address (default {DEFAULT_SERVER})")
    sub.add_argument("--token", help=f"the server's bearer token (default: ${TOKEN_VAR})")


def cmd_retry(args: argparse.Namespace, path: StoreSpec) -> int:
    """``POST /runs/RUN/retry`` on the server; prints where the run's events stream."""
    server = str(args.server).rstrip("/")
    if not server.startswith(("http://", "https://")):
        raise ConfigurationError(f"--server {server!r} is not an http:// or https:// address")
    request = urllib.request.Request(f"{server}/runs/{quote(args.run_id, safe='')}/retry", method="POST")
    token = args.token or os.environ.get(TOKEN_VAR)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            body = json.loads(response.read())
    except urllib.error.HTTPError as exc:
        raise TetherError(f"the server refused: {_message(exc)}") from None
    except urllib.error.URLError as exc:
        raise TetherError(f"cannot reach the server at {server}: {exc.reason}") from None
    print(f"retrying run {body['run_id']}: its events stream at {server}{body['events']}")
    return 0


def _message(exc: urllib.error.HTTPError) -> str:
    try:
        return f"{exc.code} {json.loads(exc.read())['error']['message']}"
    except (ValueError, KeyError, TypeError):
        return f"HTTP {exc.code}"


__all__ = ["add_parser", "cmd_retry"]
