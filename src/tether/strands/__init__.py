"""The durability provider for real Strands Agents: Strands runs Strands, Tether makes it durable.

``tether.strands.X`` is Strands' own ``strands.X`` module at any depth (``tether.strands.models.ollama
is strands.models.ollama``; see :mod:`tether.strands._alias`), and Strands' top-level names
(``tool``, ``ToolContext``, ``Snapshot``, ...) are Strands' own objects here too. What Tether adds
lives beside them: ``TetherSessionManager`` (Strands' ``SessionManager`` interface, storing a
Strands agent's session as an ordinary Tether run) and ``TetherToolExecutor`` (per-tool records
through Strands' ``ToolExecutor``), imported lazily on first use.

Importing this package imports ``strands`` (``pip install 'tether[strands]'``); ``import tether``
never does. See ``docs/guides/from-strands.md``.
"""

from __future__ import annotations

import importlib
from typing import Any

from ._alias import install, own_modules, require_strands

_strands = require_strands()
install(__name__, __path__)

_OWN_NAMES: dict[str, str] = {
    "Agent": "_facade",
    "TetherSessionManager": "session_manager",
    "TetherToolExecutor": "executor",
    "idempotency_key": "executor",
    "import_file_session": "session_import",
    "fork_session": "session_fork",
}
"""Tether's public names here -> the module of this package that defines them (imported lazily)."""

__all__ = list(
    dict.fromkeys([*getattr(_strands, "__all__", ()), *(name for name, module in _OWN_NAMES.items() if module in own_modules(__path__))])
)


def __getattr__(name: str) -> Any:
    """Tether's own names from their modules, every other name from Strands' top level
    (``Agent`` is Strands' ``Agent`` made durable when given a session: :mod:`._facade`)."""
    if name in _OWN_NAMES:
        return getattr(importlib.import_module(f"{__name__}.{_OWN_NAMES[name]}"), name)
    try:
        return getattr(_strands, name)
    except AttributeError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r} (nor has Strands' top-level package 'strands')") from None


def __dir__() -> list[str]:
    return sorted({*globals(), *dir(_strands), *_OWN_NAMES})
