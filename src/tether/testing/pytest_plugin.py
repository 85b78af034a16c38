"""The ``crashtest`` pytest fixture (registered through the ``pytest11`` entry point).

.. code-block:: python

    def test_my_agent(crashtest):
        crashtest("app:make_agent", "book a table for two").raise_for_failures()

    def test_my_agent_keeps_the_resume_contract(resume_contract):
        resume_contract("app:make_agent", "book a table for two").raise_for_violations()

The fixtures are :func:`tether.testing.crashtest` and :func:`tether.testing.resume_contract`
with ``workdir`` defaulting to the test's ``tmp_path``, so the stores and exports of a failing
test stay with the test's files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

import pytest

from .contract import resume_contract as run_contract
from .contract_report import ContractReport
from .crash import crashtest as run_crashtest
from .report import CrashReport


class CrashtestFixture(Protocol):
    """The fixture's call signature: ``crashtest(factory, prompt, **options)``."""

    def __call__(self, factory: str, prompt: str, **options: Any) -> CrashReport: ...


@pytest.fixture
def crashtest(tmp_path: Path) -> CrashtestFixture:
    """Run :func:`tether.testing.crashtest` in a test (``workdir`` defaults to ``tmp_path/crashtest``)."""

    def run(factory: str, prompt: str, **options: Any) -> CrashReport:
        options.setdefault("workdir", tmp_path / "crashtest")
        return run_crashtest(factory, prompt, **options)

    return run


class ContractFixture(Protocol):
    """The fixture's call signature: ``resume_contract(factory, prompt, **options)``."""

    def __call__(self, factory: str, prompt: str, **options: Any) -> ContractReport: ...


@pytest.fixture
def resume_contract(tmp_path: Path) -> ContractFixture:
    """Run :func:`tether.testing.resume_contract` in a test (``workdir`` defaults to ``tmp_path/contract``)."""

    def run(factory: str, prompt: str, **options: Any) -> ContractReport:
        options.setdefault("workdir", tmp_path / "contract")
        return run_contract(factory, prompt, **options)

    return run
