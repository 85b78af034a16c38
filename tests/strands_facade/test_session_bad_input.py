"""A damaged or foreign session: a TetherError that is also what Strands raises there, naming
the file or field, and nothing on disk changes (the directory is hashed before and after).

What strands-agents 1.62 raises, case by case (checked against the real package below):
``SessionException`` for a file that is not JSON, ``TypeError`` for a JSON object that is not
a record of its kind, ``ValueError`` for conversation-manager state of another manager and for
a message file whose name has no number.
"""

from __future__ import annotations

import builtins
import hashlib
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.strands_facade.session_program import PROMPT, attach, call, strands_model, tether_agent
from tether.errors import SnapshotError, StoreError, TetherError
from tether.strands.session import FileSessionManager, SnapshotSessionManager
from tether.strands.storage import LocalFileStorage
from tether.strands.types.session import SessionException, SessionRecordError

AGENT = "session_s1/agents/agent_default"


def tree_hash(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        digest.update(str(path.relative_to(root)).encode() + b"\0")
        if path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


@pytest.fixture(scope="module")
def good_session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished Tether session (files and durable run) to damage copies of."""
    root = tmp_path_factory.mktemp("good")
    agent = tether_agent()
    run_id = attach(agent, FileSessionManager(session_id="s1", storage_dir=str(root)))
    call(agent, run_id, "hello")
    return root


def truncate(rel: str) -> Callable[[Path], None]:
    def change(root: Path) -> None:
        path = root / rel
        text = path.read_text()
        path.write_text(text[: len(text) // 2])

    return change


def put(rel: str, value: Any) -> Callable[[Path], None]:
    def change(root: Path) -> None:
        (root / rel).write_text(json.dumps(value))

    return change


def edit_agent(change_state: Callable[[dict[str, Any]], None]) -> Callable[[Path], None]:
    def change(root: Path) -> None:
        path = root / AGENT / "agent.json"
        data = json.loads(path.read_text())
        change_state(data)
        path.write_text(json.dumps(data))

    return change


def foreign_name(data: dict[str, Any]) -> None:
    data["conversation_manager_state"]["__name__"] = "FancyConversationManager"


def bad_count(data: dict[str, Any]) -> None:
    data["conversation_manager_state"]["removed_message_count"] = "three"


def add_file(rel: str) -> Callable[[Path], None]:
    def change(root: Path) -> None:
        (root / rel).write_text("{}")

    return change


# (case, change, the error class, what the message names, what Strands raises)
CASES = [
    ("truncated session.json", truncate("session_s1/session.json"), SessionException, "session_s1/session.json", "SessionException"),
    ("truncated agent.json", truncate(f"{AGENT}/agent.json"), SessionException, "agent_default/agent.json", "SessionException"),
    ("truncated message", truncate(f"{AGENT}/messages/message_1.json"), SessionException, "messages/message_1.json", "SessionException"),
    ("foreign agent.json", put(f"{AGENT}/agent.json", {"hello": 1}), SessionRecordError, "agent.json: field 'agent_id'", "TypeError"),
    ("foreign message", put(f"{AGENT}/messages/message_1.json", {"hello": 1}), SessionRecordError, "message_1.json: field", "TypeError"),
    ("message not an object", put(f"{AGENT}/messages/message_0.json", [1, 2]), SessionRecordError, "message_0.json", "AttributeError"),
    (
        "message of no shape",
        put(f"{AGENT}/messages/message_0.json", {"message": {"role": "robot", "content": []}, "message_id": 0}),
        SessionException,
        "message_0.json: message.role",
        None,
    ),
    ("unknown manager __name__", edit_agent(foreign_name), SessionException, "conversation_manager_state", "ValueError"),
    ("bad removed_message_count", edit_agent(bad_count), SessionException, "removed_message_count", None),
    ("message file without a number", add_file(f"{AGENT}/messages/message_x.json"), SessionException, "message_x.json", "ValueError"),
]


@pytest.mark.parametrize(("case", "change", "error", "names", "strands_raises"), CASES, ids=[c[0] for c in CASES])
def test_a_damaged_file_session_is_refused_naming_it_and_nothing_changes(
    case: str,
    change: Callable[[Path], None],
    error: type[Exception],
    names: str,
    strands_raises: str | None,
    good_session: Path,
    tmp_path: Path,
) -> None:
    root = tmp_path / "session"
    shutil.copytree(good_session, root)
    change(root)
    before = tree_hash(root)
    with pytest.raises(error) as caught:
        agent = tether_agent()
        attach(agent, FileSessionManager(session_id="s1", storage_dir=str(root)))
    assert isinstance(caught.value, TetherError) and isinstance(caught.value, StoreError)
    assert names in str(caught.value)
    assert tree_hash(root) == before
    if strands_raises is not None:
        # the same class Strands raises there, so code written for Strands catches it
        strands = pytest.importorskip("strands")
        from strands.session import FileSessionManager as StrandsFileSessionManager

        with pytest.raises(Exception) as theirs:
            manager = StrandsFileSessionManager(session_id="s1", storage_dir=str(root))
            strands.Agent(model=strands_model(), session_manager=manager, callback_handler=None)
        assert type(theirs.value).__name__ == strands_raises
        if strands_raises == "SessionException":
            assert type(caught.value).__name__ == "SessionException"
        elif strands_raises != "AttributeError":  # Strands' accident (a list has no .items()); ours is a TypeError
            assert isinstance(caught.value, getattr(builtins, strands_raises))


def snapshot_session(root: Path) -> Path:
    agent = tether_agent()
    run_id = attach(agent, SnapshotSessionManager("s1", storage=LocalFileStorage(str(root))))
    call(agent, run_id, PROMPT)
    return root / "session" / "s1" / "scopes" / "agent" / "default" / "snapshots" / "snapshot_latest.json"


@pytest.mark.parametrize("damage", ["truncated", "foreign manager", "multiAgent scope"])
def test_a_damaged_snapshot_session_is_refused_naming_it_and_nothing_changes(damage: str, tmp_path: Path) -> None:
    latest = snapshot_session(tmp_path)
    data = json.loads(latest.read_text())
    if damage == "truncated":
        latest.write_text(latest.read_text()[:50])
    elif damage == "foreign manager":
        data["data"]["conversation_manager_state"]["__name__"] = "FancyConversationManager"
        latest.write_text(json.dumps(data))
    else:
        data["scope"] = "multiAgent"
        latest.write_text(json.dumps(data))
    before = tree_hash(tmp_path)
    with pytest.raises(SnapshotError) as caught:
        attach(tether_agent(), SnapshotSessionManager("s1", storage=LocalFileStorage(str(tmp_path))))
    assert "session/s1/scopes/agent/default/snapshots/snapshot_latest.json" in str(caught.value)
    assert tree_hash(tmp_path) == before
