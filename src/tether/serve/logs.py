"""Structured logs of ``tether serve``: one line per request, one per step of a run's life.

Everything the server says goes to one logger, ``tether.serve`` (:data:`log`), as a short
message plus fields (``extra=``): ``event`` names the line's kind, and the other fields are what an
operator filters on (``run_id``, ``status``, ``path``...):

- ``access``: one line per request when its response ends (a stream: when it closes), with
  ``method``, ``path``, ``status``, ``duration_ms`` and ``run_id`` when the request names a run;
- ``run.started``, ``run.finished`` (with its run status: finished, interrupted...),
  ``run.failed`` (with ``error``), ``run.taken_over`` (a run of a dead or stopped server, with
  its ``old_owner``), ``run.handed_over`` (left to the next server at shutdown), ``run.retried``;
- ``drain.*``: a shutdown's start and end.

:class:`LogFormatter` renders them as JSON lines (``tether serve --log-format json``) or as
logfmt (``key=value``, the default). A client's mistake is logged as its access line (a 4xx) and
never with a traceback.
"""

from __future__ import annotations

import json
import logging
import re
import sys
import time
from datetime import UTC, datetime
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

log = logging.getLogger("tether.serve")
"""The server's one logger (its modules' loggers are its children)."""

FIELDS = ("event", "method", "path", "status", "duration_ms", "run_id", "agent", "old_owner", "error", "client")
"""The fields a line may carry, in the order they are written."""
_RECORD = set(vars(logging.LogRecord("", 0, "", 0, "", None, None)))
_RUN_PATH = re.compile(r"^/runs/([A-Za-z0-9._:-]{1,128})(?:/|$)")
STATE_KEY = "tether.log"
"""The request scope's key of the fields a handler adds to its access line (:func:`note_run`)."""


def note_run(scope: Scope, run_id: str) -> None:
    """Name ``run_id`` in the access line of the request of ``scope`` (a run it started)."""
    fields = scope.get(STATE_KEY)
    if isinstance(fields, dict):
        fields["run_id"] = run_id


class AccessLog:
    """ASGI middleware: an ``access`` line per HTTP request once its response ended."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        began = time.perf_counter()
        status = 0
        fields: dict[str, Any] = {}
        scope[STATE_KEY] = fields

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            path = str(scope.get("path", ""))
            run = fields.get("run_id") or _run_of(path)
            extra = {
                "event": "access",
                "method": scope.get("method"),
                "path": path,
                "status": status or 500,  # no response started: the server's error handler answers 500
                "duration_ms": round((time.perf_counter() - began) * 1000, 1),
            }
            if run is not None:
                extra["run_id"] = run
            client = scope.get("client")
            if client:
                extra["client"] = str(client[0])
            log.info("%s %s %d", extra["method"], path, extra["status"], extra=extra)


def _run_of(path: str) -> str | None:
    match = _RUN_PATH.match(path)
    return None if match is None else match[1]


class LogFormatter(logging.Formatter):
    """A record as one line: JSON (``json=True``) or logfmt, with its fields (:data:`FIELDS`)
    after the time, level, logger and message; an exception's traceback only for a server fault."""

    def __init__(self, *, json_lines: bool = False) -> None:
        super().__init__()
        self.json_lines = json_lines

    def format(self, record: logging.LogRecord) -> str:
        item: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        extra = {key: value for key, value in vars(record).items() if key not in _RECORD and not key.startswith("_")}
        item.update((key, extra.pop(key)) for key in FIELDS if key in extra)
        item.update(extra)
        if record.exc_info:
            item["traceback"] = self.formatException(record.exc_info)
        if self.json_lines:
            return json.dumps(item, ensure_ascii=False, default=str)
        return " ".join(f"{key}={_logfmt(value)}" for key, value in item.items())


def _logfmt(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    if text and not any(c in text for c in ' ="\n\\'):
        return text
    return json.dumps(text, ensure_ascii=False)


def configure(*, json_lines: bool = False, level: int = logging.INFO) -> None:
    """Send :data:`log`'s lines to stderr, one per record (``tether serve`` calls it)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(LogFormatter(json_lines=json_lines))
    log.handlers[:] = [handler]
    log.setLevel(level)
    log.propagate = False


__all__ = ["FIELDS", "AccessLog", "LogFormatter", "configure", "log", "note_run"]
