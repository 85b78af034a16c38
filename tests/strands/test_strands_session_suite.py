"""Strands' own session-manager tests, re-expressed against :class:`TetherSessionManager`.

Source: strands-agents/sdk-python ``tests/strands/session/``. The mirror available here has no
``v1.62.0`` tag; its newest snapshot (commit 1232230d, 2026-05-15) is the one read, and the
session-manager interface those tests exercise is the one of the installed strands-agents 1.62.0
(``initialize``, ``append_message``, ``redact_latest_message``, ``sync_agent``,
``initialize_multi_agent``, ``sync_multi_agent``; 1.62's ``SessionManager`` has no bidi methods).
The facts carry over, the code does not: every test here drives real ``strands.Agent`` objects
with a scripted model against a SQLite ``RunStore``, and reads back what a new manager restores.

Mapping (R = test_repository_session_manager.py, F = test_file_session_manager.py,
S = test_s3_session_manager.py):

=========================================================================  ==========================================
Strands test                                                               Tether test / reason excluded
=========================================================================  ==========================================
R::test_init_creates_session_if_not_exists                                 test_new_agent_creates_its_run (Tether
                                                                           writes the run when the agent is
                                                                           initialized, not when the manager is built)
R::test_init_uses_existing_session                                         test_existing_session_is_restored
R::test_initialize_with_existing_agent_id                                  test_new_agent_creates_its_run
R::test_initialize_multiple_agents_without_id                              test_agent_id_unique_in_a_session
R::test_initialize_restores_existing_agent                                 test_existing_session_is_restored
R::test_initialize_restores_existing_agent_with_summarizing_conv...        test_summarizing_conversation_manager_restored
R::test_append_message                                                     test_append_message_is_stored
R::test_sync_multi_agent                                                   test_multi_agent_new_sync_and_restore
R::test_initialize_multi_agent_new                                         test_multi_agent_new_sync_and_restore
R::test_initialize_multi_agent_existing                                    test_multi_agent_new_sync_and_restore
R::test_initialize_skips_message_restore_for_server_managed_conv...        test_stateful_model_restores_model_state_not_messages
R::test_fix_broken_tool_use_adds_missing_tool_results                      test_tool_use_cut_off_is_finished_not_patched
R::test_fix_broken_tool_use_extends_partial_tool_results                   test_tool_use_cut_off_is_finished_not_patched
R::test_fix_broken_tool_use_handles_multiple_orphaned_tools                test_tool_use_cut_off_is_finished_not_patched
R::test_fix_broken_tool_use_ignores_last_message                           test_tool_use_cut_off_is_finished_not_patched
R::test_fix_broken_tool_use_does_not_change_valid_message                  test_complete_tool_cycle_restored_unchanged
R::test_fix_broken_tool_use_removes_orphaned_tool_result_at_start          test_complete_tool_cycle_restored_unchanged
R::test_fix_broken_tool_use_does_not_affect_normal_conversations           test_existing_session_is_restored
  (Tether differs by design: Strands patches a cut-off tool call with an error result "Tool was
  interrupted."; Tether finishes the cut-off turn, running the call, so no patched result is ever
  needed; a history is stored as the agent holds it, so no orphan appears on restore.)
R::test_sync_agent_skips_update_when_state_not_dirty_and_internal...       test_sync_agent_writes_only_on_change
R::test_sync_agent_calls_update_when_state_is_dirty                        test_sync_agent_writes_only_on_change
R::test_sync_agent_calls_update_when_internal_state_changed                test_sync_agent_writes_only_on_change
R::test_sync_agent_calls_update_when_conversation_manager_state_ch...      test_sync_agent_writes_only_on_change
R::test_sync_agent_calls_update_when_model_state_changed                   test_sync_agent_writes_only_on_change
R::test_sync_agent_tracks_version_after_successful_sync                    test_sync_agent_writes_only_on_change
R::test_sync_agent_retries_on_failure                                      test_sync_agent_retries_after_a_failed_write
R::test_sync_agent_first_sync_always_updates                               test_sync_agent_writes_only_on_change (Tether
                                                                           differs: initialize already wrote the run,
                                                                           so a first sync with nothing changed writes
                                                                           nothing)
R::test_is_new_session_true_when_session_created                           excluded: ``_is_new_session`` flag and
R::test_is_new_session_false_when_session_exists                           repository read counts of
R::test_initialize_skips_read_agent_for_new_session                        RepositorySessionManager's internals (a
R::test_initialize_calls_read_agent_for_existing_session                   mocked SessionRepository); Tether loads
R::test_initialize_multi_agent_skips_read_for_new_session                  the run once per agent; the observable
R::test_initialize_multi_agent_calls_read_for_existing_session             behaviour is covered by the new/existing tests
R::test_initialize_bidi_agent_creates_new, ..._restores_existing,          excluded (9 tests): BidiAgent sessions;
  test_append_bidi_message, test_sync_bidi_agent,                          strands 1.62's SessionManager has no bidi
  test_bidi_agent_no_conversation_manager,                                 methods and TetherSessionManager serves
  test_bidi_agent_unique_id_constraint,                                    Agent, Graph and Swarm only
  test_bidi_agent_messages_with_offset_zero,
  test_initialize_bidi_agent_skips/calls_read_agent_...
F::test_create/read/delete_session, read/delete_nonexistent_session,       excluded (28 tests): FileSessionManager's
  create/read/update_agent, read/update_nonexistent_agent,                 SessionRepository CRUD and its file layout
  create/read/update_message, read/update_nonexistent_message,             (session_<id>/agents/agent_<id>/messages/
  read_messages_with_new_agent, list_messages_all/with_limit/              message_<n>.json); TetherSessionManager is
  with_offset/with_new_agent, corrupted_json_file,                         not a SessionRepository: its rows are a
  permission_error_handling, create/read/update_multi_agent,               Tether run (tested in tests/durable);
  read/update_nonexistent_multi_agent,                                     a new agent in an empty session is
  create_session_multi_agent_directory_structure                           test_new_agent_creates_its_run
F::test__get_session/agent/message_path_invalid_*_id                       test_ids_are_keys_not_paths (Tether
                                                                           differs: ids are keys, not paths; an odd
                                                                           session id maps to a digest run id) and
                                                                           test_agent_id_unique_in_a_session (an
                                                                           agent id with "/" is refused by Strands'
                                                                           Agent itself)
S::* (32 tests)                                                            excluded: S3SessionManager's repository on
                                                                           a mocked S3 bucket (prefixes, pagination,
                                                                           object keys); the invalid-id cases are as
                                                                           in F
=========================================================================  ==========================================

Counts (104 Strands tests): 29 covered by the 14 Tether tests below (R: 26 of 41; F: its 3
invalid-id tests); 75 excluded: R 15 (6 repository-internal, 9 bidi), F 28 (repository CRUD and
file layout), S 32 (S3 repository; its 3 invalid-id cases behave as F's, covered there).
test_existing_session_has_one_owner_at_a_time and test_redact_latest_message have no Strands
counterpart in these files: Tether's documented difference, and the interface's redact call.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from strands import Agent, tool
from strands.agent.conversation_manager import NullConversationManager, SlidingWindowConversationManager, SummarizingConversationManager
from strands.multiagent.base import MultiAgentBase
from strands.tools.executors import SequentialToolExecutor
from strands.types.exceptions import SessionException

from tether.durable import SQLiteStore
from tether.errors import PromptError, RunLockedError
from tether.strands._run import strands_run_id
from tether.strands.session_manager import TetherSessionManager

from .conftest import PROGRAMS

sys.path.insert(0, str(PROGRAMS))
from _program_kit import ScriptModel


def _texts(agent: Agent) -> list[str]:
    return [block["text"] for m in agent.messages for block in m["content"] if "text" in block]


def _agent(manager: TetherSessionManager, script: list[dict[str, Any]] | None = None, **kwargs: Any) -> Agent:
    return Agent(model=ScriptModel(script or [{"text": "hi"}]), callback_handler=None, session_manager=manager, **kwargs)


def _count_writes(manager: TetherSessionManager, agent: Agent, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    binding = manager.binding(agent)
    assert binding is not None
    calls: list[int] = []
    real = binding.run.write

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(binding.run, "write", counting)
    return calls


def test_new_agent_creates_its_run(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    run_id = strands_run_id("s-new", "custom-agent")
    with TetherSessionManager("s-new", store=db) as manager:
        assert SQLiteStore(db).load(run_id) is None  # nothing until an agent is initialized
        agent = _agent(manager, agent_id="custom-agent")
        assert agent.messages == [] and agent.state.get() == {}  # a new agent in an empty session
        assert manager.run_id(agent) == run_id
    stored = SQLiteStore(db).load(run_id)
    assert stored is not None and stored.messages == []


def test_existing_session_is_restored(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    with TetherSessionManager("s-1", store=db) as manager:
        agent = _agent(manager, [{"text": "one"}, {"text": "two"}], agent_id="existing-agent")
        agent.state.set("key", "value")
        agent._interrupt_state.context["test"] = "init"
        agent("Hello")
        agent("again")
    with TetherSessionManager("s-1", store=db) as manager:
        restored = _agent(manager, agent_id="existing-agent")
        assert restored.state.get("key") == "value"
        assert _texts(restored) == ["Hello", "one", "again", "two"]
        assert [m["role"] for m in restored.messages] == ["user", "assistant", "user", "assistant"]
        assert restored._interrupt_state.context == {"test": "init"}
        assert not restored._interrupt_state.activated


def test_existing_session_has_one_owner_at_a_time(tmp_path: Path) -> None:
    """Tether differs from Strands' repository manager: two managers may not both write one agent."""
    db = tmp_path / "runs.db"
    with TetherSessionManager("s-own", store=db) as first:
        _agent(first, agent_id="a")
        with TetherSessionManager("s-own", store=db) as second, pytest.raises(RunLockedError, match="tether unlock"):
            _agent(second, agent_id="a")


def test_agent_id_unique_in_a_session(tmp_path: Path) -> None:
    with TetherSessionManager("s-dup", store=tmp_path / "runs.db") as manager:
        _agent(manager, agent_id="custom-agent")
        with pytest.raises(SessionException, match=r"The `agent_id` of an agent must be unique in a session\."):
            _agent(manager, agent_id="custom-agent")
        _agent(manager, agent_id="other-agent")  # another id in the same session is fine
        with pytest.raises(ValueError):
            _agent(manager, agent_id="a/../b")  # Strands' own Agent refuses a path in an agent id


def test_ids_are_keys_not_paths(tmp_path: Path) -> None:
    """Tether differs from FileSessionManager/S3: a session id is a key, never a path; an odd one
    gets a digest run id, distinct for distinct ids. An empty id is refused."""
    db = tmp_path / "runs.db"
    with pytest.raises(SessionException, match="non-empty"):
        TetherSessionManager("", store=db)
    ids = {}
    for session_id in ("../etc", "a/b", "a.b"):
        with TetherSessionManager(session_id, store=db) as manager:
            agent = _agent(manager, [{"text": session_id}])
            agent("q")
            ids[session_id] = manager.run_id(agent)
    assert len(set(ids.values())) == 3
    assert all("/" not in run_id and ".." not in run_id for run_id in ids.values())
    for session_id, run_id in ids.items():
        stored = SQLiteStore(db).load(run_id)
        assert stored is not None and stored.messages[-1]["content"][0]["text"] == session_id


def test_summarizing_conversation_manager_restored(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    summary = {"role": "user", "content": [{"text": "summary"}]}
    with TetherSessionManager("s-sum", store=db) as manager:
        agent = _agent(manager, agent_id="existing-agent", conversation_manager=SummarizingConversationManager())
        agent.conversation_manager.removed_message_count = 1
        agent.conversation_manager._summary_message = summary
        agent.messages.extend([summary, {"role": "assistant", "content": [{"text": "Hello"}]}])
        agent.state.set("key", "value")
        manager.sync_agent(agent)
    with TetherSessionManager("s-sum", store=db) as manager:
        restored = _agent(manager, agent_id="existing-agent", conversation_manager=SummarizingConversationManager())
        assert restored.state.get("key") == "value"
        assert len(restored.messages) == 2  # the summary once, then the kept message
        assert restored.messages[0]["content"][0]["text"] == "summary"
        assert restored.messages[1]["content"][0]["text"] == "Hello"
        assert restored.conversation_manager.removed_message_count == 1


def test_append_message_is_stored(tmp_path: Path) -> None:
    """As Strands' MessageAddedEvent does, the message is in the agent's history when appended."""
    db = tmp_path / "runs.db"
    with TetherSessionManager("s-app", store=db) as manager:
        agent = _agent(manager, agent_id="test-agent")
        message: Any = {"role": "user", "content": [{"text": "Hello"}]}
        agent.messages.append(message)
        manager.append_message(message, agent)
    stored = SQLiteStore(db).load(strands_run_id("s-app", "test-agent"))
    assert stored is not None
    assert [(m["role"], m["content"][0]["text"]) for m in stored.messages] == [("user", "Hello")]
    with TetherSessionManager("s-app", store=db) as manager:
        stranger = Agent(model=ScriptModel([]), callback_handler=None, agent_id="test-agent")
        with pytest.raises(SessionException, match="not initialized"):
            manager.append_message(message, stranger)  # an agent this manager never initialized


def test_redact_latest_message(tmp_path: Path) -> None:
    """The stored conversation holds the redacted content. It is compared by content: a message's
    ``tracking_id`` (a random UUID when Strands assigns it) may contain "4111" too (about one run in
    2,100 did, failing a check on the whole messages' repr), so the prompt carries an id that does."""
    db = tmp_path / "runs.db"
    prompt: Any = {"role": "user", "content": [{"text": "my card is 4111"}], "tracking_id": "prompt-4111"}
    with TetherSessionManager("s-red", store=db) as manager:
        agent = _agent(manager, [{"text": "ok"}], agent_id="a")
        agent([prompt])
        agent.messages[-2]["content"] = [{"text": "[redacted]"}]
        agent.messages.pop()  # redact the user message as a guardrail does: it is the latest one
        manager.redact_latest_message(agent.messages[-1], agent)
    with TetherSessionManager("s-red", store=db) as manager:
        restored = _agent(manager, agent_id="a")
        assert _texts(restored) == ["[redacted]"]
    stored = SQLiteStore(db).load(strands_run_id("s-red", "a"))
    assert stored is not None
    assert [(m["role"], m["content"], m["tracking_id"]) for m in stored.messages] == [("user", [{"text": "[redacted]"}], "prompt-4111")]


class _Graphish(MultiAgentBase):
    """The smallest multi-agent: its state is what the session manager stores and hands back."""

    def __init__(self, ident: str, state: dict[str, Any]) -> None:
        self.id = ident
        self.state = state
        self.restored: list[dict[str, Any]] = []

    async def invoke_async(self, task: Any, invocation_state: Any = None, **kwargs: Any) -> Any:
        raise NotImplementedError

    def serialize_state(self) -> dict[str, Any]:
        return {"id": self.id, "status": "executing", "state": dict(self.state)}

    def deserialize_state(self, payload: dict[str, Any]) -> None:
        self.restored.append(payload)


def test_multi_agent_new_sync_and_restore(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    run_id = strands_run_id("s-multi", "multiagent-test-multi-agent")
    with TetherSessionManager("s-multi", store=db) as manager:
        source = _Graphish("test-multi-agent", {"key": "value"})
        manager.initialize_multi_agent(source)
        assert source.restored == []  # new: written, not restored
        stored = SQLiteStore(db).load(run_id)
        assert stored is not None and stored.head["strands"]["multi_agent"]["state"] == {"key": "value"}
        source.state = {"restored": "data"}
        manager.sync_multi_agent(source)
        with pytest.raises(SessionException, match="already initialized"):
            manager.initialize_multi_agent(_Graphish("test-multi-agent", {}))
    with TetherSessionManager("s-multi", store=db) as manager:
        again = _Graphish("test-multi-agent", {})
        manager.initialize_multi_agent(again)
        assert again.restored == [{"id": "test-multi-agent", "status": "executing", "state": {"restored": "data"}}]


class _StatefulModel(ScriptModel):
    @property
    def stateful(self) -> bool:
        return True


def test_stateful_model_restores_model_state_not_messages(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    with TetherSessionManager("s-stateful", store=db) as manager:
        agent = _agent(manager, agent_id="existing-agent", conversation_manager=NullConversationManager())
        agent.messages.append({"role": "user", "content": [{"text": "Hello"}]})
        agent._model_state = {"response_id": "resp_abc123"}
        manager.sync_agent(agent)
    with TetherSessionManager("s-stateful", store=db) as manager:
        agent = Agent(model=_StatefulModel([]), callback_handler=None, session_manager=manager, agent_id="existing-agent")
        assert agent.messages == []  # the server holds the conversation
        assert agent._model_state == {"response_id": "resp_abc123"}
    stored = SQLiteStore(db).load(strands_run_id("s-stateful", "existing-agent"))
    assert stored is not None and [m["content"][0]["text"] for m in stored.messages] == ["Hello"]  # kept


class _Crash(BaseException):
    """A process stopped inside a tool (not an ``Exception``: Strands does not turn it into a result)."""


CALLS: list[str] = []


@tool
def lookup(city: str) -> str:
    """Look a city up."""
    CALLS.append(city)
    if city == "Oslo" and CALLS.count("Oslo") == 1:
        raise _Crash
    return f"{city}: ok"


TOOL_SCRIPT: list[dict[str, Any]] = [
    {"tools": [("t-1", "lookup", {"city": "Paris"}), ("t-2", "lookup", {"city": "Oslo"})]},
    {"text": "done"},
]


def _tool_agent(manager: TetherSessionManager) -> Agent:
    return _agent(manager, TOOL_SCRIPT, agent_id="a", tools=[lookup], tool_executor=SequentialToolExecutor())


def _tool_results(agent: Agent) -> dict[str, Any]:
    return {b["toolResult"]["toolUseId"]: b["toolResult"] for m in agent.messages for b in m["content"] if "toolResult" in b}


def test_tool_use_cut_off_is_finished_not_patched(tmp_path: Path) -> None:
    """Strands' repository manager patches toolUses without results ("Tool was interrupted.");
    Tether finishes the cut-off turn instead: the completed call is not redone, the cut-off one
    runs, and every toolUse ends with its real result."""
    db = tmp_path / "runs.db"
    CALLS.clear()
    manager = TetherSessionManager("s-tools", store=db)
    with pytest.raises(_Crash):
        _tool_agent(manager)("weather")
    manager.close()
    assert CALLS == ["Paris", "Oslo"]
    with TetherSessionManager("s-tools", store=db) as manager:
        agent = _tool_agent(manager)
        uses = [b for m in agent.messages for b in m["content"] if "toolUse" in b]
        assert uses == [] and _texts(agent) == ["weather"]  # the cut-off response is held, not patched
        assert str(agent("weather")).strip() == "done"
        assert CALLS == ["Paris", "Oslo", "Oslo"]  # Paris's recorded result was reused
        results = _tool_results(agent)
        assert set(results) == {"t-1", "t-2"}
        assert all(r["status"] == "success" for r in results.values())
        assert "interrupted" not in repr(agent.messages)


def test_complete_tool_cycle_restored_unchanged(tmp_path: Path) -> None:
    """A complete history (tool use, results, a sliding window that trimmed it) comes back as the
    agent held it: nothing added, nothing removed."""
    db = tmp_path / "runs.db"
    CALLS.clear()
    with TetherSessionManager("s-ok", store=db) as manager:
        agent = _agent(
            manager,
            [{"tools": [("t-1", "lookup", {"city": "Rome"})]}, {"text": "done"}, {"text": "bye"}],
            agent_id="a",
            tools=[lookup],
            conversation_manager=SlidingWindowConversationManager(window_size=4),
        )
        agent("weather")
        agent("thanks")
        held = [{k: v for k, v in m.items() if k != "metadata"} for m in agent.messages]
    assert held and "toolResult" not in held[0]["content"][0]  # Strands' window keeps no orphan result first
    with TetherSessionManager("s-ok", store=db) as manager:
        restored = _agent(manager, agent_id="a", tools=[lookup], conversation_manager=SlidingWindowConversationManager(window_size=4))
        assert [{k: v for k, v in m.items() if k != "metadata"} for m in restored.messages] == held


def test_sync_agent_writes_only_on_change(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tether differs on the first sync: initialize already wrote the run, so nothing to write."""
    with TetherSessionManager("s-sync", store=tmp_path / "runs.db") as manager:
        agent = _agent(manager, agent_id="test-agent")
        writes = _count_writes(manager, agent, monkeypatch)
        manager.sync_agent(agent)
        assert writes == []
        changes = [
            lambda: agent.state.set("key", "value"),
            agent._interrupt_state.activate,
            lambda: setattr(agent.conversation_manager, "removed_message_count", 5),
            lambda: setattr(agent, "_model_state", {"response_id": "r-1"}),
        ]
        for change in changes:
            change()
            manager.sync_agent(agent)
            assert len(writes) == 1, change
            manager.sync_agent(agent)  # nothing changed since: skipped
            assert len(writes) == 1
            writes.clear()


def test_sync_agent_retries_after_a_failed_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "runs.db"
    with TetherSessionManager("s-retry", store=db) as manager:
        agent = _agent(manager, agent_id="test-agent")
        binding = manager.binding(agent)
        assert binding is not None
        real = binding.run.write

        def failing(*args: Any, **kwargs: Any) -> Any:
            raise SessionException("Update failed")

        agent.state.set("key", "value")
        monkeypatch.setattr(binding.run, "write", failing)
        with pytest.raises(SessionException, match="Update failed"):
            manager.sync_agent(agent)
        monkeypatch.setattr(binding.run, "write", real)
        writes = _count_writes(manager, agent, monkeypatch)
        manager.sync_agent(agent)  # the change that failed to be stored is written now
        assert len(writes) == 1
    with TetherSessionManager("s-retry", store=db) as manager:
        assert _agent(manager, agent_id="test-agent").state.get("key") == "value"


class _RedactingModel(ScriptModel):
    """A guardrail's stream: redacts the user's input, then (``fail``) breaks off as a crash would."""

    def __init__(self, fail: bool) -> None:
        super().__init__([{"text": "blocked"}])
        self.fail = fail

    async def stream(self, messages: Any, tool_specs: Any = None, system_prompt: Any = None, **kwargs: Any) -> Any:
        yield {"redactContent": {"redactUserContentMessage": "[input redacted]"}}
        if self.fail:
            raise RuntimeError("model connection lost")
        async for event in super().stream(messages, tool_specs, system_prompt, **kwargs):
            yield event


def _stored_text(db: Path, run_id: str) -> str:
    import json

    store = SQLiteStore(db)
    try:
        stored = store.load(run_id)
        assert stored is not None
        return json.dumps(stored.head) + json.dumps(stored.messages)
    finally:
        store.close()


@pytest.mark.parametrize("fail", [False, True])
def test_redaction_leaves_no_copy_in_the_head(tmp_path: Path, fail: bool) -> None:
    """A guardrail's redaction of the prompt removes it from the turn's recorded prompt too (the
    head's ``strands.turn.prompt`` kept it); a turn cut off after the redaction is finished by a call
    without a prompt, and the original call is refused with a PromptError saying why."""
    db = tmp_path / "runs.db"
    run_id = strands_run_id("s-guard", "a")
    with TetherSessionManager("s-guard", store=db) as manager:
        agent = Agent(model=_RedactingModel(fail), callback_handler=None, session_manager=manager, agent_id="a")
        if fail:
            with pytest.raises(RuntimeError):
                agent("my card is 4111 1111")
        else:
            agent("my card is 4111 1111")
        assert _texts(agent)[0] == "[input redacted]"
    assert "4111 1111" not in _stored_text(db, run_id)  # (a random tracking_id may hold "4111", never a space)
    if not fail:
        return
    with TetherSessionManager("s-guard", store=db) as manager:
        agent = _agent(manager, [{"text": "done"}], agent_id="a")
        with pytest.raises(PromptError, match="redacted"):
            agent("my card is 4111 1111")
        assert str(agent().message["content"][0]["text"]) == "done"
        assert _texts(agent) == ["[input redacted]", "done"]
    assert "4111 1111" not in _stored_text(db, run_id)  # (a random tracking_id may hold "4111", never a space)
