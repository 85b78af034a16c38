"""Ported from strands-agents/sdk-python ``tests/strands/session/test_file_session_manager.py``:
``FileSessionManager``'s on-disk layout and its create/read/update/list operations, plus
(from ``tests/strands/agent/test_agent.py``'s session tests) an agent persisting into a file
session and a new agent continuing it.

Upstream locates files through the private ``_get_session_path`` / ``_get_agent_path`` /
``_get_message_path`` / ``_get_multi_agent_path``; here the paths are spelled out, since the
layout is what a Strands session directory is (``session_<id>/session.json``,
``agents/agent_<id>/agent.json``, ``messages/message_<n>.json``,
``multi_agents/multi_agent_<id>/multi_agent.json``).

Excluded upstream tests (name — reason):
- test_permission_error_handling — patches ``builtins.open`` to raise PermissionError
- test__get_message_path_invalid_message_id — calls the private ``_get_message_path`` with non-integer ids (no public
  call passes a message id that is not an int)
- test_corrupted_json_file — calls the private ``_read_file``; ported as
  test_corrupted_session_file_is_a_session_exception through the constructor
- test_agent_session_management, test_agent_restored_from_session_management*,
  test_agent_with_session_and_conversation_manager (test_agent.py) — use the MockedSessionRepository fixture; ported on
  FileSessionManager below
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tether.strands import Agent, ToolContext, tool
from tether.strands.agent.conversation_manager import NullConversationManager, SlidingWindowConversationManager
from tether.strands.session import FileSessionManager
from tether.strands.types.content import ContentBlock
from tether.strands.types.exceptions import SessionException
from tether.strands.types.session import Session, SessionAgent, SessionMessage, SessionType

from .mocked_model_provider import MockedModelProvider, plain, text, tool_call


@pytest.fixture
def temp_dir(tmp_path: Path) -> str:
    return str(tmp_path)


@pytest.fixture
def file_manager(temp_dir: str) -> FileSessionManager:
    return FileSessionManager(session_id="test", storage_dir=temp_dir)


@pytest.fixture
def sample_session() -> Session:
    return Session(session_id="test-session", session_type=SessionType.AGENT)


@pytest.fixture
def sample_agent() -> SessionAgent:
    return SessionAgent(agent_id="test-agent", state={"key": "value"}, conversation_manager_state=NullConversationManager().get_state())


@pytest.fixture
def sample_message() -> SessionMessage:
    return SessionMessage.from_message(message={"role": "user", "content": [ContentBlock(text="Hello world")]}, index=0)


class FakeMultiAgent:
    """What a session repository reads of a multi-agent orchestrator (upstream: a Mock)."""

    def __init__(self, id: str, state: dict[str, Any]) -> None:
        self.id = id
        self.state = state

    def serialize_state(self) -> dict[str, Any]:
        return {"id": self.id, "state": self.state}


def session_dir(storage: str, session_id: str) -> str:
    return os.path.join(storage, f"session_{session_id}")


def agent_dir(storage: str, session_id: str, agent_id: str) -> str:
    return os.path.join(session_dir(storage, session_id), "agents", f"agent_{agent_id}")


def message_file(storage: str, session_id: str, agent_id: str, index: int) -> str:
    return os.path.join(agent_dir(storage, session_id, agent_id), "messages", f"message_{index}.json")


def test_same_class_from_both_paths() -> None:
    from tether.strands.session.file_session_manager import FileSessionManager as FileSessionManagerFromModule

    assert FileSessionManager is FileSessionManagerFromModule


def test_create_session(file_manager: FileSessionManager, sample_session: Session, temp_dir: str) -> None:
    file_manager.create_session(sample_session)

    path = session_dir(temp_dir, sample_session.session_id)
    assert os.path.isdir(path)
    with open(os.path.join(path, "session.json")) as f:
        data = json.load(f)
    assert data["session_id"] == sample_session.session_id
    assert data["session_type"] == sample_session.session_type


def test_constructor_creates_its_session(temp_dir: str) -> None:
    FileSessionManager(session_id="fresh", storage_dir=temp_dir)
    with open(os.path.join(session_dir(temp_dir, "fresh"), "session.json")) as f:
        data = json.load(f)
    assert data["session_id"] == "fresh"
    assert data["session_type"] == "AGENT"


def test_read_session(file_manager: FileSessionManager, sample_session: Session) -> None:
    file_manager.create_session(sample_session)
    result = file_manager.read_session(sample_session.session_id)
    assert result is not None
    assert result.session_id == sample_session.session_id
    assert result.session_type == sample_session.session_type


def test_read_nonexistent_session(file_manager: FileSessionManager) -> None:
    assert file_manager.read_session("nonexistent-session") is None


def test_delete_session(file_manager: FileSessionManager, sample_session: Session, temp_dir: str) -> None:
    file_manager.create_session(sample_session)
    path = session_dir(temp_dir, sample_session.session_id)
    assert os.path.exists(path)

    file_manager.delete_session(sample_session.session_id)

    assert not os.path.exists(path)


def test_delete_nonexistent_session(file_manager: FileSessionManager) -> None:
    with pytest.raises(SessionException, match="does not exist"):
        file_manager.delete_session("nonexistent-session")


def test_create_agent(file_manager: FileSessionManager, sample_session: Session, sample_agent: SessionAgent, temp_dir: str) -> None:
    file_manager.create_session(sample_session)
    file_manager.create_agent(sample_session.session_id, sample_agent)

    path = agent_dir(temp_dir, sample_session.session_id, sample_agent.agent_id)
    assert os.path.isdir(path)
    with open(os.path.join(path, "agent.json")) as f:
        data = json.load(f)
    assert data["agent_id"] == sample_agent.agent_id
    assert data["state"] == sample_agent.state


def test_read_agent(file_manager: FileSessionManager, sample_session: Session, sample_agent: SessionAgent) -> None:
    file_manager.create_session(sample_session)
    file_manager.create_agent(sample_session.session_id, sample_agent)

    result = file_manager.read_agent(sample_session.session_id, sample_agent.agent_id)

    assert result is not None
    assert result.agent_id == sample_agent.agent_id
    assert result.state == sample_agent.state
    assert result.conversation_manager_state == sample_agent.conversation_manager_state


def test_read_nonexistent_agent(file_manager: FileSessionManager, sample_session: Session) -> None:
    assert file_manager.read_agent(sample_session.session_id, "nonexistent_agent") is None


def test_update_agent(file_manager: FileSessionManager, sample_session: Session, sample_agent: SessionAgent) -> None:
    file_manager.create_session(sample_session)
    file_manager.create_agent(sample_session.session_id, sample_agent)

    sample_agent.state = {"updated": "value"}
    file_manager.update_agent(sample_session.session_id, sample_agent)

    result = file_manager.read_agent(sample_session.session_id, sample_agent.agent_id)
    assert result is not None
    assert result.state == {"updated": "value"}


def test_update_nonexistent_agent(file_manager: FileSessionManager, sample_session: Session, sample_agent: SessionAgent) -> None:
    file_manager.create_session(sample_session)
    with pytest.raises(SessionException):
        file_manager.update_agent(sample_session.session_id, sample_agent)


def test_create_message(
    file_manager: FileSessionManager, sample_session: Session, sample_agent: SessionAgent, sample_message: SessionMessage, temp_dir: str
) -> None:
    file_manager.create_session(sample_session)
    file_manager.create_agent(sample_session.session_id, sample_agent)
    file_manager.create_message(sample_session.session_id, sample_agent.agent_id, sample_message)

    path = message_file(temp_dir, sample_session.session_id, sample_agent.agent_id, sample_message.message_id)
    with open(path) as f:
        data = json.load(f)
    assert data["message_id"] == sample_message.message_id
    assert data["message"] == {"role": "user", "content": [{"text": "Hello world"}]}


def test_read_message(
    file_manager: FileSessionManager, sample_session: Session, sample_agent: SessionAgent, sample_message: SessionMessage
) -> None:
    file_manager.create_session(sample_session)
    file_manager.create_agent(sample_session.session_id, sample_agent)
    file_manager.create_message(sample_session.session_id, sample_agent.agent_id, sample_message)
    sample_message.message_id = sample_message.message_id + 1
    file_manager.create_message(sample_session.session_id, sample_agent.agent_id, sample_message)

    result = file_manager.read_message(sample_session.session_id, sample_agent.agent_id, sample_message.message_id)

    assert result is not None
    assert result.message_id == sample_message.message_id
    assert result.message["role"] == sample_message.message["role"]
    assert result.message["content"] == sample_message.message["content"]


def test_read_messages_with_new_agent(file_manager: FileSessionManager, sample_session: Session, sample_agent: SessionAgent) -> None:
    file_manager.create_session(sample_session)
    file_manager.create_agent(sample_session.session_id, sample_agent)
    assert file_manager.read_message(sample_session.session_id, sample_agent.agent_id, 999) is None


def test_read_nonexistent_message(file_manager: FileSessionManager, sample_session: Session, sample_agent: SessionAgent) -> None:
    assert file_manager.read_message(sample_session.session_id, sample_agent.agent_id, 999) is None


def create_messages(file_manager: FileSessionManager, session: Session, agent: SessionAgent, count: int) -> None:
    file_manager.create_session(session)
    file_manager.create_agent(session.session_id, agent)
    for i in range(count):
        message = SessionMessage(message={"role": "user", "content": [ContentBlock(text=f"Message {i}")]}, message_id=i)
        file_manager.create_message(session.session_id, agent.agent_id, message)


def test_list_messages_all(file_manager: FileSessionManager, sample_session: Session, sample_agent: SessionAgent) -> None:
    create_messages(file_manager, sample_session, sample_agent, 5)
    result = file_manager.list_messages(sample_session.session_id, sample_agent.agent_id)
    assert [m.message["content"][0]["text"] for m in result] == [f"Message {i}" for i in range(5)]


def test_list_messages_sorted_numerically(file_manager: FileSessionManager, sample_session: Session, sample_agent: SessionAgent) -> None:
    create_messages(file_manager, sample_session, sample_agent, 12)
    result = file_manager.list_messages(sample_session.session_id, sample_agent.agent_id)
    assert [m.message_id for m in result] == list(range(12))


def test_list_messages_with_limit(file_manager: FileSessionManager, sample_session: Session, sample_agent: SessionAgent) -> None:
    create_messages(file_manager, sample_session, sample_agent, 10)
    result = file_manager.list_messages(sample_session.session_id, sample_agent.agent_id, limit=3)
    assert [m.message_id for m in result] == [0, 1, 2]


def test_list_messages_with_offset(file_manager: FileSessionManager, sample_session: Session, sample_agent: SessionAgent) -> None:
    create_messages(file_manager, sample_session, sample_agent, 10)
    result = file_manager.list_messages(sample_session.session_id, sample_agent.agent_id, offset=5)
    assert [m.message_id for m in result] == [5, 6, 7, 8, 9]


def test_list_messages_with_new_agent(file_manager: FileSessionManager, sample_session: Session, sample_agent: SessionAgent) -> None:
    file_manager.create_session(sample_session)
    file_manager.create_agent(sample_session.session_id, sample_agent)
    assert len(file_manager.list_messages(sample_session.session_id, sample_agent.agent_id)) == 0


def test_update_message(
    file_manager: FileSessionManager, sample_session: Session, sample_agent: SessionAgent, sample_message: SessionMessage
) -> None:
    file_manager.create_session(sample_session)
    file_manager.create_agent(sample_session.session_id, sample_agent)
    file_manager.create_message(sample_session.session_id, sample_agent.agent_id, sample_message)

    sample_message.message["content"] = [ContentBlock(text="Updated content")]
    file_manager.update_message(sample_session.session_id, sample_agent.agent_id, sample_message)

    result = file_manager.read_message(sample_session.session_id, sample_agent.agent_id, sample_message.message_id)
    assert result is not None
    assert result.message["content"][0]["text"] == "Updated content"


def test_update_nonexistent_message(
    file_manager: FileSessionManager, sample_session: Session, sample_agent: SessionAgent, sample_message: SessionMessage
) -> None:
    file_manager.create_session(sample_session)
    file_manager.create_agent(sample_session.session_id, sample_agent)
    with pytest.raises(SessionException):
        file_manager.update_message(sample_session.session_id, sample_agent.agent_id, sample_message)


def test_corrupted_session_file_is_a_session_exception(temp_dir: str) -> None:
    path = session_dir(temp_dir, "test")
    os.makedirs(path)
    with open(os.path.join(path, "session.json"), "w") as f:
        f.write("invalid json content")

    with pytest.raises(SessionException, match="Invalid JSON"):
        FileSessionManager(session_id="test", storage_dir=temp_dir)
    with open(os.path.join(path, "session.json")) as f:
        assert f.read() == "invalid json content"


@pytest.mark.parametrize("session_id", ["a/../b", "a/b"])
def test__get_session_path_invalid_session_id(session_id: str, file_manager: FileSessionManager) -> None:
    with pytest.raises(ValueError, match=f"session_id={session_id} | id cannot contain path separators"):
        file_manager.read_session(session_id)


@pytest.mark.parametrize("agent_id", ["a/../b", "a/b"])
def test__get_agent_path_invalid_agent_id(agent_id: str, file_manager: FileSessionManager) -> None:
    with pytest.raises(ValueError, match=f"agent_id={agent_id} | id cannot contain path separators"):
        file_manager.read_agent("session1", agent_id)


def test_create_multi_agent(file_manager: FileSessionManager, sample_session: Session, temp_dir: str) -> None:
    multi = FakeMultiAgent("test-multi-agent", {"key": "value"})
    file_manager.create_session(sample_session)
    file_manager.create_multi_agent(sample_session.session_id, multi)  # type: ignore[arg-type]

    path = os.path.join(
        session_dir(temp_dir, sample_session.session_id), "multi_agents", "multi_agent_test-multi-agent", "multi_agent.json"
    )
    with open(path) as f:
        data = json.load(f)
    assert data["id"] == multi.id
    assert data["state"] == multi.state


def test_read_multi_agent(file_manager: FileSessionManager, sample_session: Session) -> None:
    multi = FakeMultiAgent("test-multi-agent", {"key": "value"})
    file_manager.create_session(sample_session)
    file_manager.create_multi_agent(sample_session.session_id, multi)  # type: ignore[arg-type]

    result = file_manager.read_multi_agent(sample_session.session_id, multi.id)
    assert result is not None
    assert result["id"] == multi.id
    assert result["state"] == multi.state


def test_read_nonexistent_multi_agent(file_manager: FileSessionManager, sample_session: Session) -> None:
    assert file_manager.read_multi_agent(sample_session.session_id, "nonexistent") is None


def test_update_multi_agent(file_manager: FileSessionManager, sample_session: Session) -> None:
    file_manager.create_session(sample_session)
    file_manager.create_multi_agent(sample_session.session_id, FakeMultiAgent("m", {"key": "value"}))  # type: ignore[arg-type]

    file_manager.update_multi_agent(sample_session.session_id, FakeMultiAgent("m", {"updated": "value"}))  # type: ignore[arg-type]

    result = file_manager.read_multi_agent(sample_session.session_id, "m")
    assert result is not None
    assert result["state"] == {"updated": "value"}


def test_update_nonexistent_multi_agent(file_manager: FileSessionManager, sample_session: Session) -> None:
    file_manager.create_session(sample_session)
    with pytest.raises(SessionException):
        file_manager.update_multi_agent(sample_session.session_id, FakeMultiAgent("nonexistent", {}))  # type: ignore[arg-type]


def test_create_session_multi_agent_directory_structure(file_manager: FileSessionManager, sample_session: Session, temp_dir: str) -> None:
    file_manager.create_session(sample_session)
    assert os.path.isdir(session_dir(temp_dir, sample_session.session_id))
    assert os.path.isdir(os.path.join(session_dir(temp_dir, sample_session.session_id), "multi_agents"))


# --- an agent in a file session -----------------------------------------------------------


def read_json(path: str) -> Any:
    with open(path) as f:
        return json.load(f)


def test_agent_persists_messages_and_state(temp_dir: str) -> None:
    @tool(context=True)
    def remember(value: str, tool_context: ToolContext) -> str:
        """Stores a value in the agent state."""
        tool_context.agent.state.set("value", value)
        return f"stored {value}"

    manager = FileSessionManager(session_id="s1", storage_dir=temp_dir)
    agent = Agent(
        agent_id="writer",
        model=MockedModelProvider([tool_call("remember", {"value": "blue"}, "t1"), text("Stored.")]),
        tools=[remember],
        session_manager=manager,
        callback_handler=None,
    )
    agent("remember blue")

    for index, message in enumerate(agent.messages):
        stored = read_json(message_file(temp_dir, "s1", "writer", index))
        assert stored["message_id"] == index
        assert plain(stored["message"]) == plain(message)
    assert not os.path.exists(message_file(temp_dir, "s1", "writer", len(agent.messages)))
    stored_agent = read_json(os.path.join(agent_dir(temp_dir, "s1", "writer"), "agent.json"))
    assert stored_agent["agent_id"] == "writer"
    assert stored_agent["state"] == {"value": "blue"}
    assert stored_agent["conversation_manager_state"]["__name__"] == "SlidingWindowConversationManager"


def test_new_agent_continues_the_session(temp_dir: str) -> None:
    first = Agent(
        agent_id="a1",
        model=MockedModelProvider([text("Nice to meet you, Ann.")]),
        session_manager=FileSessionManager(session_id="s2", storage_dir=temp_dir),
        state={"visits": 1},
        callback_handler=None,
    )
    first("My name is Ann.")

    model = MockedModelProvider([text("Your name is Ann.")])
    second = Agent(
        agent_id="a1",
        model=model,
        session_manager=FileSessionManager(session_id="s2", storage_dir=temp_dir),
        callback_handler=None,
    )
    assert [plain(m) for m in second.messages] == [plain(m) for m in first.messages]
    assert second.state.get() == {"visits": 1}

    result = second("What is my name?")

    assert str(result) == "Your name is Ann.\n"
    assert model.calls[0]["messages"] == [
        {"role": "user", "content": [{"text": "My name is Ann."}]},
        {"role": "assistant", "content": [{"text": "Nice to meet you, Ann."}]},
        {"role": "user", "content": [{"text": "What is my name?"}]},
    ]
    assert read_json(message_file(temp_dir, "s2", "a1", 3))["message"]["content"] == [{"text": "Your name is Ann."}]


def test_agents_in_one_session_are_kept_apart(temp_dir: str) -> None:
    manager_a = FileSessionManager(session_id="shared", storage_dir=temp_dir)
    Agent(agent_id="alpha", model=MockedModelProvider([text("A")]), session_manager=manager_a, callback_handler=None)("to alpha")
    manager_b = FileSessionManager(session_id="shared", storage_dir=temp_dir)
    Agent(agent_id="beta", model=MockedModelProvider([text("B")]), session_manager=manager_b, callback_handler=None)("to beta")

    assert read_json(message_file(temp_dir, "shared", "alpha", 0))["message"]["content"] == [{"text": "to alpha"}]
    assert read_json(message_file(temp_dir, "shared", "beta", 0))["message"]["content"] == [{"text": "to beta"}]
    restored = Agent(
        agent_id="beta",
        model=MockedModelProvider([]),
        session_manager=FileSessionManager(session_id="shared", storage_dir=temp_dir),
        callback_handler=None,
    )
    assert [m["content"] for m in restored.messages] == [[{"text": "to beta"}], [{"text": "B"}]]


def test_conversation_manager_state_is_restored(temp_dir: str) -> None:
    responses = [text(f"answer {i}") for i in range(3)]
    first = Agent(
        agent_id="cm",
        model=MockedModelProvider(responses),
        conversation_manager=SlidingWindowConversationManager(window_size=2),
        session_manager=FileSessionManager(session_id="s3", storage_dir=temp_dir),
        callback_handler=None,
    )
    for i in range(3):
        first(f"question {i}")
    assert [m["content"][0]["text"] for m in first.messages] == ["question 2", "answer 2"]

    stored = read_json(os.path.join(agent_dir(temp_dir, "s3", "cm"), "agent.json"))
    removed = stored["conversation_manager_state"]["removed_message_count"]
    assert removed == 4

    second = Agent(
        agent_id="cm",
        model=MockedModelProvider([]),
        conversation_manager=SlidingWindowConversationManager(window_size=2),
        session_manager=FileSessionManager(session_id="s3", storage_dir=temp_dir),
        callback_handler=None,
    )
    assert [m["content"][0]["text"] for m in second.messages] == ["question 2", "answer 2"]
    assert second.conversation_manager.removed_message_count == 4


def test_session_read_back_through_the_manager(temp_dir: str) -> None:
    Agent(
        agent_id="reader",
        model=MockedModelProvider([text("hello back")]),
        session_manager=FileSessionManager(session_id="s4", storage_dir=temp_dir),
        callback_handler=None,
    )("hello")

    manager = FileSessionManager(session_id="s4", storage_dir=temp_dir)
    session = manager.read_session("s4")
    assert session is not None and session.session_type == SessionType.AGENT
    stored_agent = manager.read_agent("s4", "reader")
    assert stored_agent is not None and stored_agent.agent_id == "reader"
    messages = manager.list_messages("s4", "reader")
    assert [m.message_id for m in messages] == [0, 1]
    assert [plain(m.to_message()) for m in messages] == [
        {"role": "user", "content": [{"text": "hello"}]},
        {"role": "assistant", "content": [{"text": "hello back"}]},
    ]
