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


def test_a_strands_file_session_goes_on_durable_from_where_strands_left_it(tmp_path: Path) -> None:
    plain = strands.Agent(
        model=FakeModel([text("written by strands")]),
        callback_handler=None,
        session_manager=FileSessionManager(session_id="u1", storage_dir=str(tmp_path)),
    )
    plain("hello")
    durable = tether.strands.Agent(
        model=FakeModel([text("continued by tether")]),
        callback_handler=None,
        session_manager=FileSessionManager(session_id="u1", storage_dir=str(tmp_path)),
    )
    assert isinstance(durable._session_manager, TetherSessionManager)
    durable("and now?")
    assert _texts(durable.messages) == ["hello", "written by strands", "and now?", "continued by tether"]
    store = SQLiteStore(tmp_path / ".tether" / "runs.sqlite")
    loaded = store.load("strands.u1.default")
    assert loaded is not None and _texts(loaded.messages) == _texts(durable.messages)
    store.close()
    durable._session_manager.close()
    reopened = tether.strands.Agent(  # imported once: the run, not the files, is the truth now
        model=FakeModel([]), callback_handler=None, session_manager=FileSessionManager(session_id="u1", storage_dir=str(tmp_path))
    )
    assert _texts(reopened.messages) == _texts(durable.messages)
    reopened._session_manager.close()


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
