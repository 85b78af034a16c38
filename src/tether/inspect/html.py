"""The self-contained page: the payload embedded as JSON in the HTML template, CSS and JS inline.

The template, stylesheet and script are package data (``tether/inspect/assets``) read with
:mod:`importlib.resources`. Nothing in the page fetches anything: a Content-Security-Policy
meta tag forbids every network source (``default-src 'none'``), images are ``data:`` URIs and
the page's script renders every stored string with ``textContent``, never as markup.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources
from typing import Any

from ..durable.store import RunStore
from .payload import build_payload

_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def embed_json(payload: Any) -> str:
    """``payload`` as JSON safe inside ``<script type="application/json">``: ``<``, ``>`` and
    ``&`` are escaped as ``\\u003c``-style sequences, so no stored string (``</script>``,
    ``<!--``) can end the element early; JSON.parse reads them back unchanged."""
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    for char, escape in _ESCAPES.items():
        text = text.replace(char, escape)
    return text


@cache
def _asset(name: str) -> str:
    return resources.files("tether.inspect").joinpath("assets", name).read_text(encoding="utf-8")


def render_payload(payload: dict[str, Any], *, title: str) -> str:
    """The page for an already built payload (see :func:`~tether.inspect.payload.build_payload`).

    Args:
        payload: The page's data.
        title: The page title (escaped here; it may come from a run id).
    """
    from html import escape

    parts = {
        "{{TITLE}}": escape(title),
        "{{CSS}}": _asset("view.css"),
        "{{JS}}": inline_script(),
        "{{DATA}}": embed_json(payload),
    }
    return fill(_asset("view.html"), parts)


def inline_script() -> str:
    """The page's script exactly as it is inlined (``</`` written ``<\\/`` so it cannot close the
    element); :func:`script_hash` is the hash of this text."""
    return _asset("view.js").replace("</", "<\\/")


@cache
def script_hash() -> str:
    """The CSP source (``'sha256-...'``) of the page's one executable inline script.

    A server that sends the page (``tether serve``'s ``/runs/{id}/view``) can then allow that
    script alone in its ``Content-Security-Policy`` header instead of ``'unsafe-inline'``: the
    payload element (``type="application/json"``) is data, never executed.
    """
    return csp_hash(inline_script())


def csp_hash(text: str) -> str:
    """The CSP hash source of an inline element's text: ``'sha256-BASE64'`` of its UTF-8 bytes."""
    import base64
    import hashlib

    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def fill(template: str, parts: Mapping[str, str]) -> str:
    """``template`` with each placeholder of ``parts`` replaced, in one pass: no inserted text is
    itself searched for placeholders (a stored ``{{DATA}}`` stays text)."""
    out: list[str] = []
    rest = template
    while True:
        found = [(rest.find(key), key) for key in parts if rest.find(key) >= 0]
        if not found:
            out.append(rest)
            break
        at, key = min(found)
        out.append(rest[:at])
        out.append(parts[key])
        rest = rest[at + len(key) :]
    return "".join(out)


def render_html(store: RunStore, run_id: str, *, store_flags: Sequence[str] = (), live: bool = False) -> str:
    """One self-contained HTML page for the run ``run_id`` (with its forks and nested runs).

    Args:
        store: The store holding the run.
        run_id: The run to show.
        store_flags: ``--store`` flags to show in the page's ``tether fork`` commands.
        live: The page reloads itself every two seconds while the run is running (for
            ``tether view --serve``; a file written once has no reason to).

    Raises:
        RunNotFoundError: The store has no run ``run_id``.
    """
    return render_payload(build_payload(store, run_id, store_flags=store_flags, live=live), title=f"tether run {run_id}")
