"""The shared registry's agents (:mod:`registry_module`), served by a process that logs Tether's
warnings to stderr, as an application configures its logging (``test_agui_client.py`` reads
the server's log)."""

from __future__ import annotations

import logging

from registry_module import AGENTS

logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")

__all__ = ["AGENTS"]
