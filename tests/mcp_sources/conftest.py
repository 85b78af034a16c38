"""The MCP tests need the ``mcp`` extra: without it they are skipped, except under CI
(``CI=true``), where a missing extra must fail the run."""

from __future__ import annotations

import importlib.util
import os

if importlib.util.find_spec("mcp") is None and os.environ.get("CI") != "true":
    collect_ignore_glob = ["test_*.py"]
else:
    from .fixtures import call_log, http_json_server, http_json_url, http_server, http_url, stdio_server

    __all__ = ["call_log", "http_json_server", "http_json_url", "http_server", "http_url", "stdio_server"]
