"""The chat page of ``tether serve`` (``GET /``) and the inspector page of a run (``GET /runs/{id}/view``).

The chat page is one self-contained HTML file (package data ``tether/serve/assets``: template,
stylesheet and script inlined; nothing loaded from anywhere else). It lists the agents
(``GET /agents``), starts a run, renders its event stream (text, live deltas, tool calls with
their inputs and results, in-doubt notices), answers a pending interrupt with buttons, and
reconnects by itself with its last committed event id after the connection drops or the server
restarts. It reads the stream with ``fetch()`` rather than ``EventSource`` so that it can send
``Authorization: Bearer TOKEN`` when the server has a token (the page asks for the token, or
reads it from ``/#token=TOKEN``, and keeps it in the tab's ``sessionStorage``).

The page itself holds no data, so ``GET /`` is served without the token (the Host check still
applies); every request the page makes carries it. Its ``Content-Security-Policy`` header allows
no network source but the server itself (``connect-src 'self'``) and runs only the two inline
scripts it names by hash: the page's own, and the inspector's (the page shows a run's inspector
page in a sandboxed ``srcdoc`` frame, which inherits the page's policy). Every string from the
server is rendered as text (``textContent``), never as markup.
"""

from __future__ import annotations

import asyncio
from functools import cache
from importlib import resources

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import BaseRoute, Route

from ..durable.store import RunStore, validate_run_id
from ..errors import RequestError, RunNotFoundError, StoreError
from ..inspect.html import csp_hash, fill, render_html, script_hash

PAGE_PATH = "/"
"""Where the chat page is served (without the token: it holds no data)."""

_STRICT = "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; img-src data:; style-src 'unsafe-inline'"
"""What both pages' policies share: nothing loads from anywhere, no framing by other sites.
Styles may be inline (the inspector sets ``style`` attributes); scripts are named by hash."""


@cache
def _asset(name: str) -> str:
    return resources.files("tether.serve").joinpath("assets", name).read_text(encoding="utf-8")


def _script() -> str:
    return _asset("chat.js").replace("</", "<\\/")


@cache
def chat_page() -> str:
    """The chat page's HTML (the same bytes for every request: it embeds no data)."""
    return fill(_asset("chat.html"), {"{{CSS}}": _asset("chat.css"), "{{JS}}": _script()})


@cache
def chat_csp() -> str:
    """The chat page's ``Content-Security-Policy``: its own script and the inspector's, by hash;
    requests to this server only."""
    return f"{_STRICT}; script-src {csp_hash(_script())} {script_hash()}; connect-src 'self'"


def view_csp() -> str:
    """The inspector page's ``Content-Security-Policy`` when this server sends it: its script by
    hash, no request anywhere (the page embeds its data)."""
    return f"{_STRICT}; script-src {script_hash()}; connect-src 'none'"


def _headers(csp: str, cache_control: str) -> dict[str, str]:
    return {
        "Content-Security-Policy": csp,
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "Cache-Control": cache_control,
    }


async def chat(request: Request) -> Response:
    """``GET /``: the chat page."""
    return HTMLResponse(chat_page(), headers=_headers(chat_csp(), "no-cache"))


def page_routes(store: RunStore) -> list[BaseRoute]:
    """The routes of the pages: ``GET /`` (the chat page) and ``GET /runs/{id}/view`` (the run's
    inspector page, rendered from ``store`` on every request).

    Args:
        store: The server's run store.
    """

    async def view(request: Request) -> Response:
        try:
            run_id = validate_run_id(request.path_params["run_id"])
        except StoreError as exc:
            raise RequestError(str(exc)) from None
        try:
            page = await asyncio.to_thread(render_html, store, run_id)
        except RunNotFoundError:
            raise RequestError(f"no run {run_id!r}", status=404) from None
        return HTMLResponse(page, headers=_headers(view_csp(), "no-store"))

    return [Route(PAGE_PATH, chat, methods=["GET"]), Route("/runs/{run_id}/view", view, methods=["GET"])]


__all__ = ["PAGE_PATH", "chat_csp", "chat_page", "page_routes", "view_csp"]
