"""Testing an agent with pytest: a cassette for the model, the ``crashtest`` fixture for crashes.

``live_model()`` stands in for a real provider (swap in ``OpenAIModel(...)`` or any model): the
first run records its requests and streamed answers to ``cassettes/weather.json``
(``mode="once"``), every later run, crashtest's child processes included, replays the file with
no network, so the tests are fast and deterministic. ``python examples/testing_agent.py`` runs
this file's tests with pytest in a temporary directory (the cassette goes there and is removed
afterwards); in your project, run ``pytest`` (the fixture comes with tether) and commit the cassette.
Needs ``pip install tether pytest``.
"""

from __future__ import annotations

import os
import sys
import tempfile
from importlib.metadata import entry_points
from pathlib import Path

from tether import Agent, ScriptedModel, tool
from tether.models import Model
from tether.testing import Cassette

CASSETTE = Path.cwd() / "cassettes" / "weather.json"


@tool
def forecast(city: str) -> str:
    """Tomorrow's forecast for a city."""
    return f"sunny, 24 C in {city}"


def live_model() -> Model:
    """The model the cassette records (a real provider in your project)."""
    call = {"toolUse": {"toolUseId": "f1", "name": "forecast", "input": {"city": "Lisbon"}}}
    return ScriptedModel([{"role": "assistant", "content": [call]}, "Tomorrow Lisbon is sunny, 24 C."], stateful=True)


def make_agent() -> Agent:
    """The factory crashtest imports in its child processes: same agent, same cassette."""
    return Agent(model=Cassette.record(live_model(), CASSETTE, mode="once"), tools=[forecast], system_prompt="Be brief.")


def test_answers_from_the_forecast() -> None:
    result = make_agent()("What is the weather in Lisbon tomorrow?")
    assert "sunny" in str(result)


def test_survives_a_crash_at_every_save_point(crashtest) -> None:  # type: ignore[no-untyped-def]
    crashtest("testing_agent:make_agent", "What is the weather in Lisbon tomorrow?").raise_for_failures()


if __name__ == "__main__":
    import pytest

    plugin = (
        []
        if any(ep.value == "tether.testing.pytest_plugin" for ep in entry_points(group="pytest11"))
        else ["-p", "tether.testing.pytest_plugin"]
    )
    with tempfile.TemporaryDirectory() as workdir:
        os.chdir(workdir)  # pytest imports this file again from here: its CASSETTE is under workdir, as in crashtest's children
        code = pytest.main([__file__, "-p", "no:cacheprovider", "--rootdir", workdir, "-c", os.devnull, *plugin])
        cassette = Path(workdir) / "cassettes" / "weather.json"
        print(f"pytest exit code {code}; cassette recorded ({cassette.stat().st_size} bytes)")
        os.chdir(Path(__file__).resolve().parent)  # out of workdir, so it can be removed
    sys.exit(int(code))
