"""Loading a script of ``bench/`` as a module, for the tests that run each benchmark small.

The benchmarks are scripts, not a package: a test imports one from its file, registered in
``sys.modules`` under ``name`` (dataclasses resolve their annotations through it).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[1] / "bench"


def load_bench(script: str, name: str | None = None) -> ModuleType:
    """``bench/<script>.py`` as the module ``name`` (default ``tether_bench_<script>``)."""
    module_name = name or f"tether_bench_{script}"
    spec = importlib.util.spec_from_file_location(module_name, BENCH / f"{script}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module
