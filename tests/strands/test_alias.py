"""The import mapping with the real strands-agents package: ``tether.strands.X`` is ``strands.X``.

Modules and classes are the same objects at every depth (so ``isinstance`` holds both ways), a
community tool from ``strands_tools`` (which imports ``strands`` itself) is accepted in ``tools=``
of an agent imported through ``tether.strands``, a path Strands does not have fails clearly, and
``import tether`` stays free of Strands.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
import strands
from strands.agent.agent_result import AgentResult
from strands_tools import calculator, current_time

import tether.strands
from tests.compat.strands_programs.fake_model import FakeModel, call, text
from tether.errors import MissingExtraError, TetherError
from tether.strands._alias import own_modules

SRC = Path(__file__).resolve().parents[2] / "src"

DEPTHS = [
    "agent",
    "agent.agent",
    "agent.conversation_manager",
    "models",
    "models.bedrock",
    "models.openai",
    "models.anthropic",
    "models.llamacpp",
    "hooks",
    "multiagent",
    "multiagent.graph",
    "multiagent.swarm",
    "session.file_session_manager",
    "session.s3_session_manager",
    "telemetry",
    "telemetry.metrics",
    "tools.executors",
    "tools.mcp",
    "experimental.hooks",
    "experimental.checkpoint",
    "types.content",
    "types._snapshot",
    "interrupt",
]
"""Strands modules at one, two and three levels, among them what the facade never had (S3
sessions, telemetry, tool executors, experimental hooks)."""


@pytest.mark.parametrize("path", DEPTHS)
def test_every_depth_is_strands_own_module(path: str) -> None:
    ours = importlib.import_module(f"tether.strands.{path}")
    theirs = importlib.import_module(f"strands.{path}")
    assert ours is theirs
    assert sys.modules[f"tether.strands.{path}"] is theirs
    assert theirs.__name__ == f"strands.{path}" and theirs.__spec__ is not None and theirs.__spec__.name == f"strands.{path}"


def test_import_statements_bind_strands_objects() -> None:
    import tether.strands.models.bedrock as bedrock_module
    from tether.strands.agent import Agent
    from tether.strands.multiagent import GraphBuilder, Swarm
    from tether.strands.session.file_session_manager import FileSessionManager
    from tether.strands.telemetry import StrandsTelemetry

    assert Agent is strands.Agent is strands.agent.Agent
    assert bedrock_module.BedrockModel is strands.models.bedrock.BedrockModel
    assert (GraphBuilder, Swarm) == (strands.multiagent.GraphBuilder, strands.multiagent.Swarm)
    assert FileSessionManager is strands.session.file_session_manager.FileSessionManager
    assert StrandsTelemetry is strands.telemetry.StrandsTelemetry


def test_top_level_names_are_strands_names() -> None:
    for name in ("tool", "ToolContext", "Snapshot", "AgentBase", "agent", "models"):
        assert getattr(tether.strands, name) is getattr(strands, name), name
    assert issubclass(tether.strands.Agent, strands.Agent)  # Strands' Agent, durable when given a session
    assert set(strands.__all__) <= set(tether.strands.__all__)
    assert {"Agent", "tool", "ToolContext"} <= set(dir(tether.strands))
    with pytest.raises(AttributeError, match="no_such_name"):
        tether.strands.no_such_name  # noqa: B018


def test_objects_made_through_either_path_are_instances_of_both() -> None:
    from tether.strands.agent.agent_result import AgentResult as OurResult
    from tether.strands.models import Model as OurModel

    agent = tether.strands.Agent(model=FakeModel([text("hello")]), callback_handler=None)
    assert isinstance(agent, strands.Agent) and isinstance(agent.model, strands.models.Model) and isinstance(agent.model, OurModel)
    result = agent("hi")
    assert isinstance(result, AgentResult) and isinstance(result, OurResult)
    assert str(result).strip() == "hello"


@pytest.mark.filterwarnings("ignore:calculator is deprecated", "ignore:current_time is deprecated")
def test_a_community_tool_runs_in_an_agent_imported_through_tether_strands() -> None:
    from tether.strands.agent import Agent

    model = FakeModel([call("tu-1", "calculator", {"expression": "6*7"}), call("tu-2", "current_time", {"timezone": "UTC"}), text("42")])
    agent = Agent(model=model, tools=[calculator, current_time], callback_handler=None)
    assert sorted(agent.tool_names) == ["calculator", "current_time"]
    result = agent("What is 6*7, and what time is it?")
    assert str(result).strip() == "42"
    results = [block["toolResult"] for message in agent.messages for block in message["content"] if "toolResult" in block]
    assert [(r["toolUseId"], r["status"]) for r in results] == [("tu-1", "success"), ("tu-2", "success")]
    assert results[0]["content"] == [{"text": "Result: 42"}]
    assert model.requests[0]["tools"] == ["calculator", "current_time"], "the model was offered both community tools"


@pytest.mark.parametrize("path", ["no_such_module", "models.no_such_provider", "tools.mcp.no_such_module"])
def test_a_path_strands_does_not_have_fails_naming_both(path: str) -> None:
    with pytest.raises(ModuleNotFoundError) as caught:
        importlib.import_module(f"tether.strands.{path}")
    assert caught.value.name == f"tether.strands.{path}"
    assert f"tether.strands.{path}" in str(caught.value) and "'strands." in str(caught.value)
    assert f"tether.strands.{path}" not in sys.modules
    with pytest.raises(ImportError, match="no_such_name"):
        exec("from tether.strands.models import no_such_name", {})


def test_a_provider_whose_sdk_is_missing_fails_as_in_strands() -> None:
    """``strands.models.ollama`` needs the ``ollama`` package: through ``tether.strands`` the
    import fails (or succeeds) exactly as Strands' own does."""
    try:
        theirs = importlib.import_module("strands.models.ollama")
    except ImportError as exc:
        with pytest.raises(type(exc)) as caught:
            importlib.import_module("tether.strands.models.ollama")
        assert caught.value.name == exc.name and str(caught.value) == str(exc)
    else:
        assert importlib.import_module("tether.strands.models.ollama") is theirs


def test_tethers_own_modules_are_found_normally_and_shadow_no_strands_module() -> None:
    own = own_modules(tether.strands.__path__)
    assert "_alias" in own
    module = importlib.import_module("tether.strands._alias")
    assert module.__name__ == "tether.strands._alias" and Path(module.__file__ or "").parent == Path(tether.strands.__file__).parent
    clashes = sorted(name for name in own if importlib.util.find_spec(f"strands.{name}") is not None)
    assert clashes == [], f"Tether modules named like Strands modules hide strands.X under tether.strands.X: {clashes}"


def _python(code: str) -> subprocess.CompletedProcess[str]:
    env = {"PYTHONPATH": str(SRC), "PATH": ""}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)


def test_import_tether_does_not_import_strands_and_tether_strands_does() -> None:
    code = "import json, sys, tether; a = 'strands' in sys.modules; import tether.strands; print(json.dumps([a, 'strands' in sys.modules]))"
    proc = _python(code)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == [False, True]


def test_without_strands_agents_the_import_names_the_extra() -> None:
    code = (
        "import sys\n"
        "class Absent:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'strands' or name.startswith('strands.'):\n"
        "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
        "sys.meta_path.insert(0, Absent())\n"
        "import tether\n"
        "try:\n"
        "    import tether.strands\n"
        "except ImportError as exc:\n"
        "    print(type(exc).__name__, exc)\n"
    )
    proc = _python(code)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("MissingExtraError ") and "pip install 'tether[strands]'" in proc.stdout, proc.stdout
    assert issubclass(MissingExtraError, TetherError) and issubclass(MissingExtraError, ImportError)
