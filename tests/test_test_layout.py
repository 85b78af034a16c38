"""The test tree's own layout: no test package may shadow a real module.

A script run as ``python tests/<script>.py`` (a worker a test starts in a fresh process) gets
``tests/`` as the first entry of ``sys.path``, so a test package named like a standard-library
or installed module (``tests/inspect``, ``tests/mcp``) replaces that module for the script and
everything it imports: ``inspect.signature`` vanished under the checkpoint-process tests once.
The packages that mirror such modules take another name (``tests/inspector`` for
``tether.inspect``, ``tests/mcp_sources`` for ``tether.mcp``).

One exception, :data:`SHADOWS_ALLOWED`: ``tests/strands`` mirrors ``tether.strands``, whose
``tether.strands.X`` *is* Strands' ``strands.X``; pytest imports it as ``tests.strands``, so only a
script run as ``python tests/<script>.py`` could see it as ``strands``, and no such script
imports Strands (checked below).
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent

SHADOWS_ALLOWED = {"strands"}
"""Test packages allowed to share an installed module's name (never a standard-library one)."""


def test_no_test_package_shadows_a_stdlib_or_installed_module() -> None:
    packages = sorted(p.name for p in TESTS.iterdir() if p.is_dir() and (p / "__init__.py").exists())
    assert packages, "the test tree has packages"
    clashes = []
    for name in packages:
        if name in sys.stdlib_module_names:
            clashes.append(f"tests/{name} shadows the standard library's {name!r}")
            continue
        if name in SHADOWS_ALLOWED:
            continue
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.origin is not None and not Path(spec.origin).is_relative_to(TESTS):
            clashes.append(f"tests/{name} shadows the installed module {name!r} ({spec.origin})")
    assert not clashes, "; ".join(clashes)


def test_no_top_level_test_script_imports_a_shadowed_module() -> None:
    """The scripts in ``tests/`` itself are the ones a test may start as ``python tests/<script>.py``
    (with ``tests/`` first on ``sys.path``): none may import a module a test package shadows."""
    assert SHADOWS_ALLOWED <= {p.name for p in TESTS.iterdir() if (p / "__init__.py").exists()}, "SHADOWS_ALLOWED lists no such package"
    for name in SHADOWS_ALLOWED:
        imports = re.compile(rf"^\s*(from|import)\s+(tether\.)?{name}\b", re.M)
        offenders = sorted(p.name for p in TESTS.glob("*.py") if imports.search(p.read_text()))
        assert offenders == [], f"these scripts in tests/ import {name}, which tests/{name} shadows for them: {offenders}"
