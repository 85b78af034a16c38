"""The agent registry and the import boundary of the temporal extra."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tether import Agent, ConfigurationError, ScriptedModel
from tether.temporal import AgentRegistry


def test_factories_are_found_by_name_and_errors_name_the_agent() -> None:
    registry = AgentRegistry()

    @registry.register("echo")
    def echo(config: dict[str, object]) -> Agent:
        return Agent(model=ScriptedModel([str(config.get("reply", "hi"))]), name="echo")

    assert registry.names == ["echo"] and "echo" in registry
    assert registry.build("echo", {"reply": "yo"}).name == "echo"
    with pytest.raises(ConfigurationError, match=r"no agent factory named 'nope'.*known: echo"):
        registry.build("nope")
    with pytest.raises(ConfigurationError, match="already registered"):
        registry.register("echo", echo)
    with pytest.raises(ConfigurationError, match="config of agent 'echo'"):
        registry.build("echo", {"reply": object()})
    registry.register("broken", lambda config: "not an agent")  # type: ignore[arg-type,return-value]
    with pytest.raises(ConfigurationError, match="'broken' returned str, not an Agent"):
        registry.build("broken")


def test_import_tether_does_not_import_temporalio() -> None:
    code = "import sys, tether; assert 'temporalio' not in sys.modules, 'temporalio imported'"
    subprocess.run([sys.executable, "-c", code], check=True)
