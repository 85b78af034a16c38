"""The Temporal tests need the ``temporal`` extra: without temporalio they are skipped, except
under CI (``CI=true``), where a missing Temporal setup must fail the run."""

from __future__ import annotations

import importlib.util
import os

if importlib.util.find_spec("temporalio") is None and os.environ.get("CI") != "true":
    collect_ignore_glob = ["test_*.py"]
else:
    from .fixtures import blobs, client, dev_server, task_queue, worker_process

    __all__ = ["blobs", "client", "dev_server", "task_queue", "worker_process"]
