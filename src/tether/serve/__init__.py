"""``tether serve``: durable runs behind HTTP, with event streams that survive a server restart.

``create_app(registry, store)`` is the ASGI app (Starlette; ``pip install 'tether[serve]'``);
``tether serve MODULE:ATTR`` runs it with uvicorn. Runs belong to the server
(:mod:`tether.serve.runs`); a run's stored step sequence is its event stream's cursor
(:mod:`tether.serve.events`, :mod:`tether.serve.stream`). See docs/guides/serving.md.
"""

from __future__ import annotations

from .app import MAX_BODY, create_app
from .events import Cursor, ServeEvent, StepEvents
from .registry import SERVE_KEY, load_registry
from .runs import RunManager
from .stream import run_events

__all__ = ["MAX_BODY", "SERVE_KEY", "Cursor", "RunManager", "ServeEvent", "StepEvents", "create_app", "load_registry", "run_events"]
