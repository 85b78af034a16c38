"""``tether.strands.Agent``: Strands' own Agent, durable through Tether when it has a session."""

from __future__ import annotations

from pathlib import Path

import pytest
import strands
from strands.session.file_session_manager import FileSessionManager

import tether.strands
from tests.compat.strands_programs.fake_model import FakeModel, text
from tether.durable import SQLiteStore
from tether.errors import ConfigurationError
from tether.strands import TetherSessionManager


def _texts(messages: list[dict[str, object]]) -> list[str]:
    return [str(block["text"]) for message in messages for block in message["content"] if "text" in block]  # type: ignore[attr-defined]


def test_without_a_session_it_is_strands_agent_as_it_is(tmp_path: Path) -> None:
    agent = tether.strands.Agent(model=FakeModel([text("hello")]), callback_handler=None)
    assert isinstance(agent, strands.Agent) and agent._session_manager is None
    assert str(agent("hi")).strip() == "hello"


def test_a_session_id_makes_its_turns_a_durable_run(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    agent = tether.strands.Agent(model=FakeModel([text("one")]), callback_handler=None, session_id="s1", store=str(db))
    assert isinstance(agent._session_manager, TetherSessionManager)
    agent("first")
    agent._session_manager.close()  # as when its process ends: one owner at a time
    again = tether.strands.Agent(model=FakeModel([text("two")]), callback_handler=None, session_id="s1", store=str(db))
    again("second")
    again._session_manager.close()
    assert _texts(again.messages) == ["first", "one", "second", "two"]  # the first process's turn came back from the run
    store = SQLiteStore(db)
    loaded = store.load("strands.s1.default")
    assert loaded is not None and _texts(loaded.messages) == ["first", "one", "second", "two"]
    store.close()


def test_a_session_manager_given_is_used_as_given(tmp_path: Path) -> None:
    """Strands' own FileSessionManager stays Strands' (a program behaves the same through tether.strands)."""
    files = FileSessionManager(session_id="u1", storage_dir=str(tmp_path))
    agent = tether.strands.Agent(model=FakeModel([text("kept by strands")]), callback_handler=None, session_manager=files)
    assert agent._session_manager is files
    agent("hello")
    assert (tmp_path / "session_u1" / "agents" / "agent_default").is_dir()
    assert not (tmp_path / ".tether").exists()


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"session_id": "s", "session_manager": TetherSessionManager.__new__(TetherSessionManager)}, "not both"),
        ({"store": "x.db"}, "store= goes with session_id="),
    ],
)
def test_conflicting_session_arguments_are_refused(options: dict[str, object], match: str) -> None:
    with pytest.raises(ConfigurationError, match=match):
        tether.strands.Agent(model=FakeModel([]), callback_handler=None, **options)  # type: ignore[arg-type]
