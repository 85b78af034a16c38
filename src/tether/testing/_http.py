"""A tiny JSON-over-HTTP client on the standard library, for the served contract checks (the
checks must not need an HTTP client library the application does not have). Not a public API."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Mapping
from typing import Any


def request(
    url: str, body: Any = None, headers: Mapping[str, str] | None = None, *, timeout: float = 30.0
) -> tuple[int, Any, dict[str, str]]:
    """POST ``body`` as JSON to ``url`` (GET when it is None): (status, JSON body, headers lowercased).

    A 4xx/5xx answer is returned like any other; a body that is not JSON comes back as ``{"text": ...}``.
    """
    data = None if body is None else json.dumps(body).encode()
    sent = urllib.request.Request(url, data=data, method="GET" if data is None else "POST")
    sent.add_header("Content-Type", "application/json")
    for name, value in (headers or {}).items():
        sent.add_header(name, value)
    try:
        with urllib.request.urlopen(sent, timeout=timeout) as answer:
            status, raw, got = answer.status, answer.read(), answer.headers
    except urllib.error.HTTPError as error:
        status, raw, got = error.code, error.read(), error.headers
    try:
        parsed = json.loads(raw) if raw else None
    except ValueError:
        parsed = {"text": raw[:500].decode(errors="replace")}
    return status, parsed, {key.lower(): value for key, value in got.items()}
