"""The optional-package gate: skip locally, fail under CI, so CI can never silently skip providers."""

from __future__ import annotations

import pytest

from .conftest import require


def test_missing_package_skips_locally(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="pip install no-such-pkg"):
        require("no_such_module_for_tether_tests", "pip install no-such-pkg")


def test_missing_package_fails_under_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI=true but no_such_module_for_tether_tests"):
        require("no_such_module_for_tether_tests", "pip install no-such-pkg")


def test_installed_package_is_returned() -> None:
    assert require("json", "n/a").dumps([1]) == "[1]"
