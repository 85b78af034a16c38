"""SnapshotSessionManager with the real strands-agents package both ways, its save strategies
as a view of the durable run, and time travel; RepositorySessionManager over a user's repository."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from tests.strands_facade.session_program import PROMPT, attach, call, plain, strands_model, tether_agent
from tests.strands_facade.test_session_file import Died, step, strands_step
from tether import tool
from tether.durable import MemoryStore
from tether.strands.session import RepositorySessionManager, SessionRepository, SnapshotSessionManager
from tether.strands.storage import InMemoryStorage, LocalFileStorage
from tether.strands.types.session import Session, SessionAgent, SessionMessage

strands = pytest.importorskip("strands")

LATEST = "session/s1/scopes/agent/default/snapshots/snapshot_latest.json"


def strands_agent(directory: Path, **kwargs: Any) -> Any:
    from strands.session import SnapshotSessionManager as StrandsSnapshotSessionManager
    from strands.storage import LocalFileStorage as StrandsLocalFileStorage

    manager = StrandsSnapshotSessionManager("s1", storage=StrandsLocalFileStorage(str(directory)))
    return strands.Agent(model=strands_model(), tools=[strands_step()], session_manager=manager, callback_handler=None, **kwargs)


def tether_session_agent(directory: Path, **kwargs: Any) -> tuple[Any, str | None]:
    manager_args = {k: kwargs.pop(k) for k in ("save_latest_on", "snapshot_trigger") if k in kwargs}
    agent = tether_agent(step, **kwargs)
    return agent, attach(agent, SnapshotSessionManager("s1", storage=LocalFileStorage(str(directory)), **manager_args))


def test_a_strands_snapshot_session_continues_on_tether_and_back(tmp_path: Path) -> None:
    writer = strands_agent(tmp_path, state={"visits": 1})
    writer(PROMPT)
    agent, run_id = tether_session_agent(tmp_path)
    assert plain(agent.messages) == plain(writer.messages)
    assert agent.state.get() == {"visits": 1}
    agent.state.set("visits", 2)
    call(agent, run_id, PROMPT)
    assert json.loads((tmp_path / LATEST).read_text())["app_data"]["tether"]["run_id"] == run_id
    reader = strands_agent(tmp_path)
    assert plain(reader.messages) == plain(agent.messages)
    assert len(reader.messages) == 12
    assert reader.state.get() == {"visits": 2}


def test_a_snapshot_session_that_went_on_in_strands_wins_over_the_finished_run(tmp_path: Path) -> None:
    agent, run_id = tether_session_agent(tmp_path)
    call(agent, run_id, PROMPT)
    strands_side = strands_agent(tmp_path)
    strands_side(PROMPT)
    again, run_id = tether_session_agent(tmp_path)
    assert plain(again.messages) == plain(strands_side.messages)
    call(again, run_id, PROMPT)
    assert len(again.messages) == 18
    assert plain(strands_agent(tmp_path).messages) == plain(again.messages)


def test_save_latest_on_message_never_saves_a_tool_use_without_its_result(tmp_path: Path) -> None:
    @tool(name="step")
    def dying(n: int) -> str:
        """One step.

        Args:
            n: The step number.
        """
        if n == 2:
            raise Died
        return f"done {n}"

    agent = tether_agent(dying)
    run_id = attach(agent, SnapshotSessionManager("s1", storage=LocalFileStorage(str(tmp_path)), save_latest_on="message"))
    with pytest.raises(Died):
        call(agent, run_id, PROMPT)
    saved = json.loads((tmp_path / LATEST).read_text())["data"]["messages"]
    assert [m["role"] for m in saved] == ["user", "assistant", "user"]  # step 1 and its result; not step 2's toolUse
    again, run_id = tether_session_agent(tmp_path, save_latest_on="message")
    result = call(again, run_id, PROMPT)
    assert result.message["content"] == [{"text": "answer: done 1, done 2"}]
    assert plain(strands_agent(tmp_path).messages) == plain(again.messages)


def test_trigger_appends_immutable_snapshots_to_travel_back_to(tmp_path: Path) -> None:
    agent, run_id = tether_session_agent(tmp_path, snapshot_trigger=lambda agent_data, **kwargs: True)
    call(agent, run_id, PROMPT)
    call(agent, run_id, "again")
    manager = SnapshotSessionManager("s1", storage=LocalFileStorage(str(tmp_path)))
    ids = asyncio.run(manager.list_snapshot_ids(agent))
    assert len(ids) == 2 and ids == sorted(ids)
    fresh = tether_agent(step)
    assert asyncio.run(manager.restore_snapshot(fresh, snapshot_id=ids[0])) is True
    assert len(fresh.messages) == 6
    # Strands lists and restores the same immutable snapshots
    from strands.session import SnapshotSessionManager as StrandsSnapshotSessionManager
    from strands.storage import LocalFileStorage as StrandsLocalFileStorage

    theirs = StrandsSnapshotSessionManager("s1", storage=StrandsLocalFileStorage(str(tmp_path)))
    reader = strands_agent(tmp_path)
    assert asyncio.run(theirs.list_snapshot_ids(reader)) == ids
    assert asyncio.run(theirs.restore_snapshot(reader, snapshot_id=ids[0])) is True
    assert plain(reader.messages) == plain(fresh.messages)


def test_invalid_arguments_are_refused_as_strands_refuses_them() -> None:
    with pytest.raises(ValueError, match="save_latest_on"):
        SnapshotSessionManager("s1", storage=InMemoryStorage(), save_latest_on="sometimes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="session"):
        SnapshotSessionManager("a/b", storage=InMemoryStorage())


class DictRepository(SessionRepository):
    """A user's own repository: records in dicts."""

    def __init__(self) -> None:
        self.sessions: dict[str, dict[str, Any]] = {}
        self.agents: dict[tuple[str, str], dict[str, Any]] = {}
        self.messages: dict[tuple[str, str], dict[int, dict[str, Any]]] = {}

    def create_session(self, session: Session, **kwargs: Any) -> Session:
        self.sessions[session.session_id] = session.to_dict()
        return session

    def read_session(self, session_id: str, **kwargs: Any) -> Session | None:
        data = self.sessions.get(session_id)
        return None if data is None else Session.from_dict(data)

    def create_agent(self, session_id: str, session_agent: SessionAgent, **kwargs: Any) -> None:
        self.agents[(session_id, session_agent.agent_id)] = session_agent.to_dict()
        self.messages[(session_id, session_agent.agent_id)] = {}

    def read_agent(self, session_id: str, agent_id: str, **kwargs: Any) -> SessionAgent | None:
        data = self.agents.get((session_id, agent_id))
        return None if data is None else SessionAgent.from_dict(data)

    def update_agent(self, session_id: str, session_agent: SessionAgent, **kwargs: Any) -> None:
        self.agents[(session_id, session_agent.agent_id)] = session_agent.to_dict()

    def create_message(self, session_id: str, agent_id: str, session_message: SessionMessage, **kwargs: Any) -> None:
        self.messages[(session_id, agent_id)][session_message.message_id] = session_message.to_dict()

    def read_message(self, session_id: str, agent_id: str, message_id: int, **kwargs: Any) -> SessionMessage | None:
        data = self.messages[(session_id, agent_id)].get(message_id)
        return None if data is None else SessionMessage.from_dict(data)

    def update_message(self, session_id: str, agent_id: str, session_message: SessionMessage, **kwargs: Any) -> None:
        self.create_message(session_id, agent_id, session_message)

    def list_messages(
        self, session_id: str, agent_id: str, limit: int | None = None, offset: int = 0, **kwargs: Any
    ) -> list[SessionMessage]:
        records = [SessionMessage.from_dict(v) for _, v in sorted(self.messages[(session_id, agent_id)].items())]
        return records[offset:] if limit is None else records[offset : offset + limit]


def test_a_repository_session_runs_durably_in_the_store_given() -> None:
    repository, store = DictRepository(), MemoryStore()
    agent = tether_agent(step)
    run_id = attach(agent, RepositorySessionManager("s1", repository, store=store))
    assert run_id is not None and agent.store is store
    call(agent, run_id, PROMPT)
    assert store.head(run_id) is not None
    assert [r["message"]["role"] for _, r in sorted(repository.messages[("s1", "default")].items())] == [m["role"] for m in agent.messages]
    again = tether_agent(step)
    run_id = attach(again, RepositorySessionManager("s1", repository, store=store))
    assert plain(again.messages) == plain(agent.messages)


def test_a_raising_trigger_still_saves_the_latest_snapshot(tmp_path: Path) -> None:
    def trigger(agent_data: Any, **kwargs: Any) -> bool:
        raise RuntimeError("trigger failed")

    agent, run_id = tether_session_agent(tmp_path, save_latest_on="trigger", snapshot_trigger=trigger)
    call(agent, run_id, PROMPT)
    assert len(json.loads((tmp_path / LATEST).read_text())["data"]["messages"]) == 6


def test_the_run_store_is_beside_the_storage_base_and_deleted_with_the_session(tmp_path: Path) -> None:
    from tether.durable.sqlite import SQLiteStore

    base = tmp_path / "base"
    agent, run_id = tether_session_agent(base)
    call(agent, run_id, PROMPT)
    # the base directory holds Strands' keys only; the runs are in <base>.tether/runs.sqlite
    assert sorted(str(p.relative_to(base)) for p in base.rglob("*") if p.is_file()) == [LATEST]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["base", "base.tether"]
    store = SQLiteStore(str(tmp_path / "base.tether" / "runs.sqlite"))
    assert store.head(str(run_id)) is not None
    assert plain(strands_agent(base).messages) == plain(agent.messages)

    asyncio.run(SnapshotSessionManager("s1", storage=LocalFileStorage(str(base))).delete_session())
    assert store.head(str(run_id)) is None
    assert not [p for p in base.rglob("*") if p.is_file()]
